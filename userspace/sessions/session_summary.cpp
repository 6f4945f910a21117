// The summary `run` prints once its command is done.
#include "sessions/session_summary.h"

#include <cstdio>

#include "events/journal_record.h"

namespace liveguard {

SessionSummary summarise_session(const std::vector<std::string>& journal_lines,
                                 std::uint64_t session_cgroup_id) {
    SessionSummary s;
    for (const auto& line : journal_lines) {
        auto record = parse_journal_record(line);
        const auto* e = record ? std::get_if<JournalEvent>(&record->body) : nullptr;
        if (!e || e->session_cgroup_id != session_cgroup_id) continue;
        ++s.total;
        s.audited |= e->verdict == "audited";
        ++s.per_hook[e->hook];
        if (s.culprits.size() < 5) {
            std::string test = e->details ? e->details->test : "";
            s.culprits.push_back(e->comm + "[" + std::to_string(e->pid) + "] " + e->act +
                                 (test.empty() ? "" : "\n      in test " + test));
        }
    }
    return s;
}

void print_session_summary(const SessionSummary& s, const std::string& label) {
    if (s.total == 0) {
        std::fprintf(stderr, "liveguard: session %s: nothing was refused\n", label.c_str());
        return;
    }
    std::string hooks;
    for (const auto& [h, n] : s.per_hook) hooks += (hooks.empty() ? "" : ", ") + h + " " + std::to_string(n);
    std::fprintf(stderr, "liveguard: session %s: %zu %s (%s)\n", label.c_str(), s.total,
                 s.audited ? (s.total == 1 ? "act seen that enforcement would refuse (AUDIT-ONLY: not blocked)"
                                           : "acts seen that enforcement would refuse (AUDIT-ONLY: not blocked)")
                           : (s.total == 1 ? "act refused" : "acts refused"),
                 hooks.c_str());
    for (const auto& c : s.culprits) std::fprintf(stderr, "  - %s\n", c.c_str());
    if (s.total > s.culprits.size())
        std::fprintf(stderr, "  ... and %zu more: liveguard-bpf events --since 1h --session %s\n",
                     s.total - s.culprits.size(), label.c_str());
}

}  // namespace liveguard
