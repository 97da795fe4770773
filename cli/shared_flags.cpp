#include "cli/shared_flags.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "resolver/knowledge/knowledge.hpp"

namespace envlock::cli {

fetch::CommandLineSettings download_settings(int jobs, const std::string& cache_dir, const std::vector<std::string>& mirrors,
                                             const std::vector<std::string>& mirrors_files, bool offline) {
    fetch::CommandLineSettings settings;
    if (jobs) settings.jobs = jobs;
    if (!cache_dir.empty()) settings.cache_dir = std::filesystem::absolute(cache_dir).lexically_normal().string();
    settings.mirrors = mirrors;
    settings.mirrors_files = mirrors_files;
    settings.offline = offline;
    return settings;
}

void add_machine_flags(CLI::App* cmd, MachineFlags& f) {
    cmd->add_option("--gpu", f.gpus, "GPU to lock for, by name (\"RTX 4090\") or sm_XY; repeatable; replaces detected GPUs")->allow_extra_args(false);
    cmd->add_option("--driver", f.driver, "NVIDIA driver version, e.g. 525.60.13 (sets the driver's CUDA from the knowledge base)");
    cmd->add_option("--cuda-driver", f.cuda_driver, "Highest CUDA the driver runs, e.g. 12.0");
    cmd->add_option("--glibc", f.glibc, "glibc version, e.g. 2.31");
    cmd->add_option("--cpu-flags", f.cpu_flags, "CPU flags, comma-separated, e.g. avx,avx2,fma");
    cmd->add_option("--platform", f.platform, "Conda platform: linux-64, linux-aarch64, osx-arm64, win-64 …");
    cmd->add_option("--kernel", f.kernel, "Linux kernel release of a linux target, e.g. 5.15.0 (conda's __linux)");
    cmd->add_option("--osx", f.osx, "macOS version of an osx target, e.g. 13.6 (conda's __osx)");
}

TargetOverrides overrides_of(const MachineFlags& f) {
    TargetOverrides o;
    o.gpus = f.gpus;
    if (!f.driver.empty()) o.driver = f.driver;
    if (!f.cuda_driver.empty()) o.cuda_driver = f.cuda_driver;
    if (!f.glibc.empty()) o.glibc = f.glibc;
    if (!f.platform.empty()) o.platform = f.platform;
    if (!f.kernel.empty()) o.kernel = f.kernel;
    if (!f.osx.empty()) o.osx = f.osx;
    if (!f.cpu_flags.empty()) {
        std::vector<std::string> flags;
        std::istringstream in(f.cpu_flags);
        for (std::string flag; std::getline(in, flag, ',');) flags.push_back(flag);
        o.cpu_flags = flags;
    }
    return o;
}

std::vector<std::string> user_knowledge_files(const std::vector<std::string>& explicit_files) {
    std::string dir;
    if (const char* d = std::getenv("ENVLOCK_CONFIG_DIR"); d && *d) dir = d;
    else if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) dir = std::string(x) + "/envlock";
    else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.config/envlock";
    std::vector<std::string> files = dir.empty() ? std::vector<std::string>{} : knowledge::knowledge_files_in(dir + "/knowledge");
    files.insert(files.end(), explicit_files.begin(), explicit_files.end());
    return files;
}

}  // namespace envlock::cli
