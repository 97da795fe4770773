#pragma once
// Runs the built envlock binary as a user would, capturing stdout, stderr and exit code.
#include <string>
#include <vector>

namespace envlock::test {

struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// args exclude the program name. `env` entries are "NAME=value" added to the environment.
RunResult run_envlock(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// Runs any program (argv[0] looked up on PATH).
RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

}  // namespace envlock::test
