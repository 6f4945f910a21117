#pragma once
// What `status` shows: the guard's state read once from the pinned maps,
// the watcher's state file and cgroupfs, then formatted as text or JSON.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel/counters.h"
#include "kernel/loader.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "watcher/watcher_state.h"

namespace liveguard {

// Paths are nothing when the cgroup is gone or cgroupfs is not mounted;
// times are as shown (UTC).
struct StatusProcess {
    ProtectedProcess process;
    std::string since;
};

struct StatusCgroup {
    ProtectedCgroup cgroup;
    std::string since;
    std::optional<std::string> path;
};

struct StatusSession {
    std::uint64_t id = 0;
    std::optional<std::string> path;  // a tagged cgroup's directory
    std::size_t members = 0;
    // "cgroup", "auto" (started at a test runner's exec), "run" (an
    // unprivileged run), "overflow" (execs whose own session could not
    // be recorded).
    std::string kind = "cgroup";
    std::string name;     // a process session's name, e.g. pytest[12345]
    pid_t root_pid = 0;
    std::string command;  // its root's command line
};

struct StatusReport {
    bool loaded = false;  // when false, nothing below was read
    Attach attach = Attach::Lsm;
    std::vector<StatusProcess> processes;
    std::vector<StatusCgroup> cgroups;
    std::optional<pid_t> watcher;
    // The running watcher's state file as written (what --json embeds),
    // and parsed (what the text's target table shows).
    std::optional<std::string> watcher_json;
    std::optional<WatcherState> watcher_state;
    std::vector<StatusSession> sessions;
    CounterValues counters{};
    // Runs of each program the kernel skipped (kernel/skipped_runs.h).
    std::map<std::string, std::uint64_t> skipped;
};

StatusReport gather_status();

std::string format_status_text(const StatusReport& r);
std::string format_status_json(const StatusReport& r);

}  // namespace liveguard
