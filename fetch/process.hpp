#pragma once
// Runs a program without a shell and captures what it prints, with a time limit.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace envlock {

struct ProcessResult {
    int exit_code = -1;       // -1: could not start; 124: timed out
    std::string out;          // stdout and stderr together
};

struct ProcessOptions {
    std::string cwd;                                          // "" = this process's
    std::optional<std::map<std::string, std::string>> env;   // the whole environment; none = this process's
};

// When the program cannot be started, exit_code is -1 and `out` says why.
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_seconds = 60, const ProcessOptions& options = {});

}  // namespace envlock
