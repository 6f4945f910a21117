#pragma once
// How `run` behaves while its command runs, like system(): the terminal's
// ^C and ^\ reach the command directly and `run` stays to finish the
// session; termination requests sent to `run` are passed on to the command.
// The previous dispositions come back on destruction.
#include <signal.h>
#include <sys/types.h>

namespace liveguard {

class ChildSignals {
public:
    explicit ChildSignals(pid_t child);
    ~ChildSignals();
    ChildSignals(const ChildSignals&) = delete;
    ChildSignals& operator=(const ChildSignals&) = delete;

private:
    struct sigaction old_int_ {}, old_quit_ {}, old_term_ {}, old_hup_ {};
};

}  // namespace liveguard
