#pragma once
// Runs a program without a shell and captures what it prints, with a time limit.
#include <string>
#include <vector>

namespace envlock {

struct ProcessResult {
    int exit_code = -1;       // -1: could not start; 124: timed out
    std::string out;          // stdout and stderr together
};

ProcessResult run_process(const std::vector<std::string>& argv, int timeout_seconds = 60);

}  // namespace envlock
