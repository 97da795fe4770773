#pragma once
// Flags several subcommands share: the machine to lock for (detect's overrides) and the
// knowledge files a user adds.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fetch/settings.hpp"
#include "resolver/knowledge/detect.hpp"

namespace envlock::cli {

struct MachineFlags {
    std::vector<std::string> gpus;
    std::string driver, cuda_driver, glibc, cpu_flags, platform, kernel, osx;
};

void add_machine_flags(CLI::App* cmd, MachineFlags& flags);
TargetOverrides overrides_of(const MachineFlags& flags);

// What the download flags of install and mirror give fetch: --jobs (0: the default), --cache-dir
// made absolute (source builds run in their checkout, where a relative path names another
// folder), --mirror, --mirrors-file and --offline.
fetch::CommandLineSettings download_settings(int jobs, const std::string& cache_dir, const std::vector<std::string>& mirrors,
                                             const std::vector<std::string>& mirrors_files, bool offline);

// The config folder's knowledge files ($ENVLOCK_CONFIG_DIR, else $XDG_CONFIG_HOME/envlock,
// else ~/.config/envlock; subfolder knowledge/), then the --knowledge files in order.
std::vector<std::string> user_knowledge_files(const std::vector<std::string>& explicit_files);

}  // namespace envlock::cli
