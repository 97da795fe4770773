#include "cli/commands.hpp"

namespace envlock::cli {

void add_index(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("index", "List what package indexes offer (index list NAME)");
    cmd->allow_extras();
    cmd->callback([] { not_implemented("index"); });
}

}  // namespace envlock::cli
