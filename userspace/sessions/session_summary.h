#pragma once
// What `run` says when its command is done: the session's refusals, read
// from the journal lines appended while it ran.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace liveguard {

// A count per door and the first culprits.
struct SessionSummary {
    std::size_t total = 0;
    bool audited = false;
    std::map<std::string, std::size_t> per_hook;
    std::vector<std::string> culprits;
};

SessionSummary summarise_session(const std::vector<std::string>& journal_lines,
                                 std::uint64_t session_cgroup_id);
// On stderr; `label` is the session's name, or its cgroup id.
void print_session_summary(const SessionSummary& s, const std::string& label);

}  // namespace liveguard
