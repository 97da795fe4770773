#include "cli/commands.hpp"

namespace envlock::cli {

void add_detect(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("detect", "Describe this machine (or an overridden one) as a target");
    cmd->allow_extras();
    cmd->callback([] { not_implemented("detect"); });
}

}  // namespace envlock::cli
