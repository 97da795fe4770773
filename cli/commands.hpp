#pragma once
// Each subcommand lives in its own file and registers itself on the root app through one
// of these functions. A callback reports its exit status through `exit_code`; errors are
// thrown as envlock::Error and turned into a message and exit code by main.cpp.
#include <CLI/CLI.hpp>

#include "resolver/lock/lock.hpp"

namespace envlock::cli {

void add_resolve(CLI::App& app, int& exit_code);
void add_install(CLI::App& app, int& exit_code);
void add_verify(CLI::App& app, int& exit_code);
void add_doctor(CLI::App& app, int& exit_code);
void add_detect(CLI::App& app, int& exit_code);
void add_check(CLI::App& app, int& exit_code);
void add_why(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);     // run and shell-hook
void add_export(CLI::App& app, int& exit_code);
void add_inspect(CLI::App& app, int& exit_code);
void add_index(CLI::App& app, int& exit_code);
void add_spec(CLI::App& app, int& exit_code);
void add_info(CLI::App& app, int& exit_code);    // info and cache dir|clean|prune
void add_mirror(CLI::App& app, int& exit_code);

// `inspect` is split by topic: version/match/requirement/wheel (inspect_versions.cpp) and
// gpu/driver/cuda/torch/advisories (inspect_knowledge.cpp).
// What `run` does first, as uv run syncs: installs `lock` into `prefix` (progress and a
// one-line summary on stderr). `python`: install --python. True when anything changed.
bool sync_environment(const Lock& lock, const std::string& prefix, const std::string& python, bool offline);

void add_inspect_versions(CLI::App& inspect, int& exit_code);
void add_inspect_knowledge(CLI::App& inspect, int& exit_code);

}  // namespace envlock::cli
