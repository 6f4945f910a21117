#pragma once
// What an event says about the culprit beyond the kernel's record, read
// when the event is consumed: its executable, the test it belongs to, the
// session's name and path, what protects the target. A process already
// gone is said to be gone; nothing is guessed.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "events/session_info.h"
#include "liveguard/abi.h"

namespace liveguard {

struct Ancestor {
    std::uint32_t pid = 0;
    std::string comm;
};

struct EventDetails {
    std::vector<std::string> argv;  // from the kernel's copy of the command line
    std::string exe;                // empty when the culprit was gone
    bool culprit_gone = false;
    std::vector<Ancestor> parents;  // nearest first, up to the session's root
    std::string session_path;       // empty when the cgroup is gone
    std::string session_name;
    std::string protected_by;       // e.g. pidfile "/home/u/.hermes/gateway.pid"
    std::string test;               // pytest's id of the running test, or empty
    // The target's pid in its own PID namespace (a service in a
    // container), 0 in the machine's or once it is gone.
    std::uint32_t target_ns_pid = 0;
};

// What a consumer learns once per session rather than once per event: a
// flood of refusals from one session would otherwise walk the cgroup tree
// for every event, and fall behind the ring buffer. Cgroup ids are not
// reused within a boot, and a session's name and path never change.
//
// And what it read about a culprit (its executable, its test), for the
// culprit's later events that the reading still describes exactly: events
// over a millisecond before the reading (the process was alive then, with
// that name; a test's line is written within that of its time) and before
// the next line of any test log consulted. A consumer that falls
// behind a flood of different refusals then reads /proc and the logs once
// per batch instead of once per event.
class DetailsCache {
public:
    const std::string& cgroup_mount();
    std::string session_path(std::uint64_t id);
    std::optional<SessionInfo> session_info(std::uint64_t id);
    // A policy target's description, from the watcher's state as of the
    // last second.
    std::optional<std::string> target_description(std::uint32_t source);

    struct Culprit {
        std::uint64_t from_ns = 0, until_ns = 0;  // the events' times it describes: [from, until)
        std::string comm;
        std::uint64_t session = 0;
        std::vector<std::uint32_t> pids;  // the culprit, then the parents its test was looked up through
        std::string exe;
        bool gone = false;
        std::string test;
    };
    // What was read for an earlier event of `e`'s culprit, if it holds for
    // `e`, whose culprit and parents are `pids`.
    const Culprit* culprit(const lg_event& e, const std::vector<std::uint32_t>& pids) const;
    void remember(Culprit c);

private:
    std::unordered_map<std::uint32_t, Culprit> culprits_;
    std::size_t culprit_bytes_ = 0;
    bool mount_read_ = false;
    bool targets_read_ = false;
    std::uint64_t targets_read_ns_ = 0;
    std::unordered_map<std::uint32_t, std::string> targets_;
    std::string mount_;
    std::unordered_map<std::uint64_t, std::string> paths_;
    std::unordered_map<std::uint64_t, SessionInfo> infos_;
};

// `cache`: a long-lived consumer's; none reads everything afresh.
EventDetails gather_details(const lg_event& e, DetailsCache* cache = nullptr);

// NUL-separated arguments as in /proc/<pid>/cmdline (the last may be cut).
std::vector<std::string> split_args(std::string_view bytes);
// PYTEST_CURRENT_TEST from a NUL-separated environment block.
std::string pytest_test_from_environ(std::string_view environ);
// The test running at `boot_ns` according to a plugin log, from lines
// stamped at `not_before` or later: a log by pid
// (/run/liveguard/tests/pid/<pid>) may still hold what a dead process with
// the same pid wrote before this one started.
// `next`, when given, is lowered to the first stamp after `boot_ns`: until
// then the answer stays the same.
std::string test_at_since(std::string_view log, std::uint64_t boot_ns, std::uint64_t not_before = 0,
                          std::uint64_t* next = nullptr);
// Clock ticks (/proc/<pid>/stat's start time) in nanoseconds.
std::uint64_t ticks_to_ns(std::uint64_t ticks, long ticks_per_second);

}  // namespace liveguard
