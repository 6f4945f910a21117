#include "sessions/child_signals.h"

namespace liveguard {
namespace {

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
    if (g_child > 0) ::kill(g_child, sig);
}

}  // namespace

ChildSignals::ChildSignals(pid_t child) {
    g_child = child;
    struct sigaction ign {}, fwd {};
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward_signal;
    ::sigaction(SIGINT, &ign, &old_int_);
    ::sigaction(SIGQUIT, &ign, &old_quit_);
    ::sigaction(SIGTERM, &fwd, &old_term_);
    ::sigaction(SIGHUP, &fwd, &old_hup_);
}

ChildSignals::~ChildSignals() {
    g_child = 0;
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGQUIT, &old_quit_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    ::sigaction(SIGHUP, &old_hup_, nullptr);
}

}  // namespace liveguard
