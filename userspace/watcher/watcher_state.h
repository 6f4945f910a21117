#pragma once
// The policy watcher's state files under /run/liveguard, and the only code
// that reads or writes them: the pid file that says which process is the
// running watcher (pid and start time, so a reused PID is not taken for
// it; for messages only, since anyone who can write it can change it:
// the watcher is addressed through its socket, service/daemon.h), and the
// JSON state that `status` and the events' "protected by"
// read. watcher.targets holds the same targets as a table for people, not
// for parsing: the events read the targets' descriptions from the JSON.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard {

// One [[protect]] target as the watcher last resolved it.
struct WatcherTarget {
    std::uint32_t source = 0;          // 1-based [[protect]] number
    std::string kind;                  // the TOML key: "pidfile", "s6", ...
    std::string pattern;               // as written in the policy
    std::string description;           // e.g. pidfile "/home/u/.hermes/gateway.pid"
    int line = 0;                      // in the policy file
    std::vector<std::string> instances;  // what its pattern matched (Resolution::instances)
    std::vector<pid_t> pids;           // processes protected for it
    // Each one's pid in the PID namespace that named it (a container's),
    // 0 when that is the host's; as long as pids, or empty.
    std::vector<pid_t> ns_pids;
    std::vector<std::string> cgroups;  // cgroup paths protected for it
};

struct WatcherState {
    pid_t pid = 0;
    std::string config;  // the policy file's path
    std::vector<WatcherTarget> targets;
    std::vector<std::string> warnings;
    std::size_t watched_dirs = 0;
    // Resolutions since the watcher started: what wakes it is the policy's
    // files changing, not everything beside them.
    std::uint64_t passes = 0;
};

// The outcome of a policy re-read: the watcher's pid, how many re-reads
// it has finished, when it took the signal that asked for this one
// (the boot clock, ns: a re-read taken after a request answers it), and
// the reason it failed (empty: applied).
struct ReloadOutcome {
    pid_t pid = 0;
    std::uint64_t count = 0;
    std::uint64_t taken_ns = 0;
    bool applied = false;
    std::string error;
};

// Writer side (the watcher process only). Each file is replaced
// atomically, so a reader sees the old or the new content, never a mix.
void write_watcher_pid_file(pid_t pid);
void write_watcher_state(const WatcherState& state);
void remove_watcher_files();
void write_reload_outcome(const ReloadOutcome& outcome);

// Reader side. The running watcher's pid, verified against the start time
// recorded beside it; nothing for a stale file or a reused PID. For
// messages only: never signal it (running_watcher() finds the watcher).
std::optional<pid_t> read_running_watcher_pid();
// The state as the watcher last wrote it; nothing when there is none or it
// cannot be parsed.
std::optional<WatcherState> read_watcher_state();
// The last re-read's outcome; nothing before the first.
std::optional<ReloadOutcome> read_reload_outcome();
// The state as JSON text, as `status --json` embeds it.
std::optional<std::string> read_watcher_state_json();
// The state read_watcher_state() gives for that JSON text, for a reader
// that also needs the text itself.
std::optional<WatcherState> parse_watcher_state(std::string_view json);

// A target as one row of the table `status` prints and watcher.targets
// holds: "#source", the description, then its pids and its cgroups, each
// comma-separated, "-" for none.
std::array<std::string, 4> watcher_target_row(const WatcherTarget& t);

}  // namespace liveguard
