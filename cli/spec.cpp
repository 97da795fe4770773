#include "cli/commands.hpp"

namespace envlock::cli {

void add_spec(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("spec", "Print the spec inferred from a repo checkout, with provenance");
    cmd->allow_extras();
    cmd->callback([] { not_implemented("spec"); });
}

}  // namespace envlock::cli
