#pragma once
// The watcher's side of an unprivileged `run`: a unix socket any user may
// connect to. It also answers "sync" (the pytest plugin's: journal what
// was refused so far, then reply), which acts on nothing but the journal. The connecting process (checked with SO_PEERCRED) asks to
// become the root of a new session before it execs its command; one that
// is already a member stays in its session. It can only restrict itself:
// nothing sent over the socket names another process or changes
// protection.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "base/fd.h"

namespace liveguard {

struct PinnedMaps;

// What the broker tells the session tracker about a session it started.
struct BrokeredSession {
    std::uint64_t id = 0;
    pid_t root_pid = 0;
    uid_t uid = 0;
    std::string name;
};

class RunBroker {
public:
    // Binds paths::kRunSocket (replacing a stale one), mode 0666.
    // `on_started` is called for every session it starts, before the
    // requester hears of it; should it throw, the session is undone and
    // refused. Throws when the socket cannot be made: the socket is also
    // how `reload`, `unload` and `status` find the watcher (the process
    // listening on it), and a watcher they cannot find would run on
    // unstoppable beside the next one.
    RunBroker(const PinnedMaps& maps, std::function<void(const BrokeredSession&)> on_started);
    // Removes the socket, unless another process has bound the path since.
    ~RunBroker();
    RunBroker(const RunBroker&) = delete;
    RunBroker& operator=(const RunBroker&) = delete;

    int fd() const { return listen_.get(); }

    // Called for a "sync" request before its reply: journals the refusals
    // the kernel has reported so far.
    void on_sync(std::function<void()> f) { on_sync_ = std::move(f); }

    // Accepts and answers every pending connection; never throws (a bad
    // request gets an error reply and a log line). Each connection gets
    // about a second to send its request, and a call stops taking new
    // ones after about a second, so no client stalls the watcher for long
    // (what is left is taken on the next call).
    void on_readable();

private:
    void serve(int conn);

    const PinnedMaps& maps_;
    std::function<void(const BrokeredSession&)> on_started_;
    std::function<void()> on_sync_;
    UniqueFd listen_;
    ino_t socket_ino_ = 0;  // the socket file this broker bound
};

}  // namespace liveguard
