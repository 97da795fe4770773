#include "cli/commands.hpp"

namespace envlock::cli {

void add_run(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("run", "Run a command inside the locked environment");
    cmd->allow_extras();
    cmd->group("");   // not in --help until it works
    cmd->callback([] { not_implemented("run"); });
}

}  // namespace envlock::cli
