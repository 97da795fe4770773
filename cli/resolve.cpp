#include "cli/commands.hpp"

namespace envlock::cli {

void add_resolve(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("resolve", "Solve a repo's environment for a target machine and write envlock.yaml");
    cmd->allow_extras();
    cmd->callback([] { not_implemented("resolve"); });
}

}  // namespace envlock::cli
