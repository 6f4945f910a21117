#pragma once
// What `run` says when its command is done: the session's refusals, read
// from the journal lines appended while it ran. For a process session the
// watcher journals the same as a session-end record, which `run` prints.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "events/journal_record.h"

namespace liveguard {

// A count per door and the first culprits.
struct SessionSummary {
    std::size_t total = 0;  // refusals (or audited acts)
    // Members the OOM killer took (verdict "killed"): no refusal, but
    // listed among the culprits and said apart.
    std::size_t oom_killed = 0;
    bool audited = false;
    std::map<std::string, std::size_t> per_hook;
    std::vector<std::string> culprits;
};

// The session's events among the lines (losses and session-end records
// are not counted).
SessionSummary summarise_session(const std::vector<std::string>& journal_lines,
                                 std::uint64_t session_cgroup_id);
// On stderr; `label` is the session's name, or its cgroup id.
void print_session_summary(const SessionSummary& s, const std::string& label);

// A session-end record of the summary, stamped now; the caller adds the
// processes reaped or left running.
JournalSessionEnd session_end_record(const SessionSummary& s, std::uint64_t id, const std::string& name,
                                     std::uint32_t root_pid, const std::string& command);
// On stderr: what print_session_summary prints for the session (labelled
// with its name, or its key), then the processes it left, if any.
void print_session_end(const JournalSessionEnd& end);

}  // namespace liveguard
