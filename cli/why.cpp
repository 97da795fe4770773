#include "cli/commands.hpp"

namespace envlock::cli {

void add_why(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("why", "Explain why a package and its version are in the lock");
    cmd->allow_extras();
    cmd->callback([] { not_implemented("why"); });
}

}  // namespace envlock::cli
