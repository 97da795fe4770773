#pragma once
// SIGINT and SIGTERM while an install runs: noted, not obeyed at once, so the install can
// remove its stage and journal first (the prefix is then as it was) and only then die of the
// signal. Outside a SignalGuard the default actions apply.
#include <csignal>

#include "resolver/specs/errors.hpp"

namespace envlock::install {

// Thrown by the install between steps once a signal came.
struct Interrupted : EnvironmentError {
    Interrupted() : EnvironmentError("interrupted") {}
};

class SignalGuard {
public:
    SignalGuard();
    ~SignalGuard();
    SignalGuard(const SignalGuard&) = delete;
    SignalGuard& operator=(const SignalGuard&) = delete;

private:
    struct sigaction old_int_ {}, old_term_ {};
};

bool interrupted();           // a signal came since the guard was set up
int interrupting_signal();    // which one (0: none)

}  // namespace envlock::install
