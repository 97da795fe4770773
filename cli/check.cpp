#include "cli/commands.hpp"

namespace envlock::cli {

void add_check(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("check", "Exit 0 when envlock.yaml is well-formed and current with its spec and knowledge");
    cmd->allow_extras();
    cmd->callback([] { not_implemented("check"); });
}

}  // namespace envlock::cli
