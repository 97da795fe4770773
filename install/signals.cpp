#include "install/signals.hpp"

namespace envlock::install {
namespace {

volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }

}  // namespace

SignalGuard::SignalGuard() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
}

SignalGuard::~SignalGuard() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
}

bool interrupted() { return g_signal != 0; }
int interrupting_signal() { return g_signal; }

}  // namespace envlock::install
