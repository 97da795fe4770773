#pragma once
// The error kinds every layer throws, and the exit code each maps to (DESIGN.md
// "Errors and safety"): 0 ok, 1 the request cannot be met, 2 bad input, 3 environment
// or network failure. The CLI turns an uncaught Error into its message and exit code.
#include <stdexcept>
#include <string>

namespace envlock {

enum class ExitCode : int { ok = 0, unmet = 1, bad_input = 2, environment = 3 };

struct Error : std::runtime_error {
    ExitCode code;
    Error(ExitCode c, const std::string& message) : std::runtime_error(message), code(c) {}
};

// Malformed lock, spec, requirement, repodata, archive or flag. The message names the
// file (and line, where there is one) and what was expected there.
struct InputError : Error {
    explicit InputError(const std::string& message) : Error(ExitCode::bad_input, message) {}
};

// Unsatisfiable, verification failed, check found the lock stale.
struct UnmetError : Error {
    explicit UnmetError(const std::string& message) : Error(ExitCode::unmet, message) {}
};

// Network, filesystem, missing tool: the world failed, not the request.
struct EnvironmentError : Error {
    explicit EnvironmentError(const std::string& message) : Error(ExitCode::environment, message) {}
};

}  // namespace envlock
