#include "cli/commands.hpp"

namespace envlock::cli {

void add_inspect(CLI::App& app, int& exit_code) {
    auto* inspect = app.add_subcommand("inspect", "Debug version semantics and machine facts (version, match, requirement, wheel, gpu, driver, cuda, torch, advisories)");
    inspect->require_subcommand(1);
    add_inspect_versions(*inspect, exit_code);
    add_inspect_knowledge(*inspect, exit_code);
}

}  // namespace envlock::cli
