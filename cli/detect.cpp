// `envlock detect`: this machine (or one described by flags / --target FILE) as a target, YAML by
// default, JSON with --json. The output round-trips through --target.
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "resolver/detect.hpp"
#include "resolver/knowledge.hpp"
#include "resolver/target_io.hpp"

namespace envlock::cli {

namespace {
struct DetectOptions {
    bool json = false;
    std::vector<std::string> gpus;
    std::string driver, cuda_driver, glibc, cpu_flags, platform, target_file;
    std::vector<std::string> knowledge_files;
};

// Knowledge files a user keeps in the config folder ($ENVLOCK_CONFIG_DIR, else
// $XDG_CONFIG_HOME/envlock, else ~/.config/envlock; subfolder knowledge/), then --knowledge files.
std::vector<std::string> user_knowledge_files(const std::vector<std::string>& explicit_files) {
    std::string dir;
    if (const char* d = std::getenv("ENVLOCK_CONFIG_DIR"); d && *d) dir = d;
    else if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) dir = std::string(x) + "/envlock";
    else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.config/envlock";
    std::vector<std::string> files = dir.empty() ? std::vector<std::string>{} : knowledge::knowledge_files_in(dir + "/knowledge");
    files.insert(files.end(), explicit_files.begin(), explicit_files.end());
    return files;
}

std::vector<std::string> split_flags(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string f; std::getline(in, f, ',');) out.push_back(f);
    return out;
}
}  // namespace

void add_detect(CLI::App& app, int& exit_code) {
    auto opts = std::make_shared<DetectOptions>();
    auto* cmd = app.add_subcommand("detect", "Describe this machine (or an overridden one) as a target");
    cmd->add_flag("--json", opts->json, "Print JSON instead of YAML");
    cmd->add_option("--gpu", opts->gpus, "GPU to lock for, by name (\"RTX 4090\") or sm_XY; repeatable; replaces detected GPUs")->allow_extra_args(false);
    cmd->add_option("--driver", opts->driver, "NVIDIA driver version, e.g. 525.60.13 (sets the driver's CUDA from the knowledge base)");
    cmd->add_option("--cuda-driver", opts->cuda_driver, "Highest CUDA the driver runs, e.g. 12.0");
    cmd->add_option("--glibc", opts->glibc, "glibc version, e.g. 2.31");
    cmd->add_option("--cpu-flags", opts->cpu_flags, "CPU flags, comma-separated, e.g. avx,avx2,fma");
    cmd->add_option("--platform", opts->platform, "Conda platform: linux-64, linux-aarch64, osx-arm64, win-64 …");
    cmd->add_option("--target", opts->target_file, "Start from a target file (as printed by detect) instead of this machine");
    cmd->add_option("--knowledge", opts->knowledge_files, "Extra knowledge file (YAML), overriding built-in rows; repeatable")->allow_extra_args(false);
    cmd->callback([opts, &exit_code] {
        knowledge::Knowledge k = knowledge::load(user_knowledge_files(opts->knowledge_files));
        Target t = opts->target_file.empty() ? detect_target(DetectRoots::host(), k) : read_target_file(opts->target_file);
        TargetOverrides o;
        o.gpus = opts->gpus;
        if (!opts->driver.empty()) o.driver = opts->driver;
        if (!opts->cuda_driver.empty()) o.cuda_driver = opts->cuda_driver;
        if (!opts->glibc.empty()) o.glibc = opts->glibc;
        if (!opts->platform.empty()) o.platform = opts->platform;
        if (!opts->cpu_flags.empty()) o.cpu_flags = split_flags(opts->cpu_flags);
        t = apply_overrides(std::move(t), o, k);
        if (opts->json) std::cout << target_to_json(t).dump(2) << "\n";
        else std::cout << target_to_yaml(t);
        exit_code = 0;
    });
}

}  // namespace envlock::cli
