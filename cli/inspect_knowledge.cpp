#include "cli/commands.hpp"

namespace envlock::cli {

void add_inspect_knowledge(CLI::App& inspect, int& exit_code) {
    for (const char* name : {"gpu", "driver", "cuda", "torch", "advisories"}) {
        auto* cmd = inspect.add_subcommand(name, "not implemented yet");
        cmd->allow_extras();
        cmd->callback([name] { not_implemented(std::string("inspect ") + name); });
    }
}

}  // namespace envlock::cli
