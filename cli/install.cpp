#include "cli/commands.hpp"

namespace envlock::cli {

void add_install(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("install", "Materialize envlock.yaml into a prefix (--repair fixes a broken one)");
    cmd->allow_extras();
    cmd->group("");   // not in --help until it works
    cmd->callback([] { not_implemented("install"); });
}

}  // namespace envlock::cli
