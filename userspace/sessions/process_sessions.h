#pragma once
// The watcher's part in process sessions (those the kernel starts at a
// test runner's exec, and those it starts for an unprivileged `run`): it
// names each after its root, and when the root exits it kills what the
// session left running, journals the session's summary and only then ends
// the session, so nothing it left is ever outside it while it runs.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/fd.h"
#include "events/event_journal.h"
#include "events/journal_record.h"

namespace liveguard {

struct PinnedMaps;
struct Policy;

// A process, for the reaper: its pid and command line.
struct SessionProcess {
    pid_t pid = 0;
    std::string command;
};

// Every live process marked a member of `session` (read through pidfds
// from the kernel's member marks).
std::vector<SessionProcess> session_members(int sessions_fd, int members_fd, std::uint64_t session);

// The name of an automatic session from its root's command line:
// "pytest[12345]" for `/usr/bin/python3 /usr/bin/pytest -x` or
// `python3 -m pytest`.
std::string automatic_session_name(const std::vector<std::string>& argv, pid_t pid);

class ProcessSessions {
public:
    explicit ProcessSessions(const PinnedMaps& maps);
    ~ProcessSessions();
    ProcessSessions(const ProcessSessions&) = delete;
    ProcessSessions& operator=(const ProcessSessions&) = delete;

    // Sets the names whose exec starts a session and whether leftovers are
    // reaped. With names, the overflow session is recorded first.
    void apply_policy(const Policy& policy);

    // A session the run broker started.
    void adopt(std::uint64_t id, pid_t root, const std::string& name);

    // Finds new sessions, ends those whose root exited, journals new
    // refusals into each session's tally. Never throws.
    void tick();

    // Called before a session's summary is taken: the event collector
    // journals the repeats it still counts (events/event_coalescer.h).
    void on_before_end(std::function<void()> f) { before_end_ = std::move(f); }

    // The root pidfds to wait on (an exit makes one readable).
    std::vector<int> fds() const;

    // Whether anything needs looking at on a timer (automatic sessions
    // are on, or sessions are tracked).
    bool active() const { return auto_on_ || !tracked_.empty(); }

private:
    struct Tracked;

    void discover();
    void rank_members(const Tracked& t);
    void read_journal();
    void count(std::uint64_t id, const std::string& line);
    void sweep_test_logs();
    void end(Tracked& t);
    void finish_lingering();

    const PinnedMaps& maps_;
    bool reap_ = true;
    std::function<void()> before_end_;
    bool auto_on_ = false;
    JournalReader journal_;
    std::map<std::uint64_t, std::unique_ptr<Tracked>> tracked_;
};

}  // namespace liveguard
