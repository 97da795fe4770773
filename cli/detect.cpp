// `envlock detect`: this machine (or one described by flags / --target FILE) as a target, YAML by
// default, JSON with --json. The output round-trips through --target.
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/target_io.hpp"

namespace envlock::cli {

namespace {
struct DetectOptions {
    bool json = false;
    MachineFlags machine;
    std::string target_file;
    std::vector<std::string> knowledge_files;
};

}  // namespace

void add_detect(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<DetectOptions>();
    auto* cmd = app.add_subcommand("detect", "Describe this machine (or an overridden one) as a target");
    cmd->add_flag("--json", opts->json, "Print JSON instead of YAML");
    add_machine_flags(cmd, opts->machine);
    cmd->add_option("--target", opts->target_file, "Start from a target file (as printed by detect) instead of this machine");
    cmd->add_option("--knowledge", opts->knowledge_files, "Extra knowledge file (YAML), overriding built-in rows; repeatable")->allow_extra_args(false);
    cmd->callback([opts, &exit_code] {
        knowledge::Knowledge k = knowledge::load(user_knowledge_files(opts->knowledge_files));
        Target t = opts->target_file.empty() ? detect_target(DetectRoots::host(), k) : gpus_by_name(target_from_text(read_text_file(opts->target_file, "target file"), opts->target_file), k, opts->target_file);
        t = apply_overrides(std::move(t), overrides_of(opts->machine), k);
        if (opts->json) std::cout << target_to_json(t).dump(2) << "\n";
        else std::cout << target_to_yaml(t);
        exit_code = 0;
    });
}

}  // namespace envlock::cli
