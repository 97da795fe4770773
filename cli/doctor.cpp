#include "cli/commands.hpp"

namespace envlock::cli {

void add_doctor(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("doctor", "Diagnose an existing environment, envlock-made or not");
    cmd->allow_extras();
    cmd->group("");   // not in --help until it works
    cmd->callback([] { not_implemented("doctor"); });
}

}  // namespace envlock::cli
