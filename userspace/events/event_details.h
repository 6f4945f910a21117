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
};

// What a consumer learns once per session rather than once per event: a
// flood of refusals from one session would otherwise walk the cgroup tree
// for every event, and fall behind the ring buffer. Cgroup ids are not
// reused within a boot, and a session's name and path never change.
class DetailsCache {
public:
    const std::string& cgroup_mount();
    std::string session_path(std::uint64_t id);
    std::optional<SessionInfo> session_info(std::uint64_t id);

private:
    bool mount_read_ = false;
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
// The test running at `boot_ns` according to a plugin log.
std::string test_at(std::string_view log, std::uint64_t boot_ns);
// The same, from lines stamped at `not_before` or later: a log by pid
// (/run/liveguard/tests/pid/<pid>) may still hold what a dead process with
// the same pid wrote before this one started.
std::string test_at_since(std::string_view log, std::uint64_t boot_ns, std::uint64_t not_before);
// Clock ticks (/proc/<pid>/stat's start time) in nanoseconds.
std::uint64_t ticks_to_ns(std::uint64_t ticks, long ticks_per_second);

}  // namespace liveguard
