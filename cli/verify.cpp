#include "cli/commands.hpp"

namespace envlock::cli {

void add_verify(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("verify", "Prove a locked environment works: toolchain checks, build and import the extensions");
    cmd->allow_extras();
    cmd->group("");   // not in --help until it works
    cmd->callback([] { not_implemented("verify"); });
}

}  // namespace envlock::cli
