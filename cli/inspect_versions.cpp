#include "cli/commands.hpp"

namespace envlock::cli {

void add_inspect_versions(CLI::App& inspect, int& exit_code) {
    for (const char* name : {"version", "match", "requirement", "wheel"}) {
        auto* cmd = inspect.add_subcommand(name, "not implemented yet");
        cmd->allow_extras();
        cmd->callback([name] { not_implemented(std::string("inspect ") + name); });
    }
}

}  // namespace envlock::cli
