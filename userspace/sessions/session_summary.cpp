// The summary `run` prints once its command is done.
#include "sessions/session_summary.h"

#include <cstdio>

#include "base/clock.h"
#include "liveguard/abi.h"

namespace liveguard {

namespace {
// A member the OOM killer took is no refusal; a protected process it took
// is what the guard exists to prevent, counted as one (and failing
// --fail-on-violation).
bool member_taken(const JournalEvent& e) {
    return e.verdict == "killed" && (e.detail & LG_OOM_KIND_MASK) != LG_OOM_PROTECTED_KILLED;
}
}  // namespace

SessionSummary summarise_session(const std::vector<std::string>& journal_lines,
                                 std::uint64_t session_cgroup_id) {
    SessionSummary s;
    for (const auto& line : journal_lines) {
        auto record = parse_journal_record(line);
        // Repeats of an event count as what they are: that many refusals.
        if (const auto* r = record ? std::get_if<JournalRepeats>(&record->body) : nullptr) {
            if (r->of.session_cgroup_id != session_cgroup_id) continue;
            if (member_taken(r->of)) {
                s.oom_killed += r->count;
                continue;
            }
            s.total += r->count;
            s.audited |= r->of.verdict == "audited";
            s.per_hook[r->of.hook] += r->count;
            continue;
        }
        const auto* e = record ? std::get_if<JournalEvent>(&record->body) : nullptr;
        if (!e || e->session_cgroup_id != session_cgroup_id) continue;
        bool killed = member_taken(*e);
        if (killed) {
            ++s.oom_killed;
        } else {
            ++s.total;
            s.audited |= e->verdict == "audited";
            ++s.per_hook[e->hook];
        }
        if (s.culprits.size() < 5) {
            std::string test = e->details ? e->details->test : "";
            s.culprits.push_back(e->comm + "[" + std::to_string(e->pid) + "] " + (killed ? "(OOM) " : "") + e->act +
                                 (test.empty() ? "" : "\n      in test " + test));
        }
    }
    return s;
}

void print_session_summary(const SessionSummary& s, const std::string& label) {
    if (s.oom_killed)
        std::fprintf(stderr, "liveguard: session %s: the OOM killer took %zu of its processes (members go first)\n",
                     label.c_str(), s.oom_killed);
    if (s.total == 0) {
        if (!s.oom_killed) std::fprintf(stderr, "liveguard: session %s: nothing was refused\n", label.c_str());
        else
            for (const auto& c : s.culprits) std::fprintf(stderr, "  - %s\n", c.c_str());
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
    if (s.total + s.oom_killed > s.culprits.size())
        std::fprintf(stderr, "  ... and %zu more: liveguard-bpf events --since 1h --session %s\n",
                     s.total + s.oom_killed - s.culprits.size(), label.c_str());
}

JournalSessionEnd session_end_record(const SessionSummary& s, std::uint64_t id, const std::string& name,
                                     std::uint32_t root_pid, const std::string& command) {
    JournalSessionEnd end;
    end.time = format_utc(realtime_now_ns());
    end.session_cgroup_id = id;
    end.name = name;
    end.root_pid = root_pid;
    end.command = command;
    end.refusals = s.total;
    end.oom_killed = s.oom_killed;
    end.audited = s.audited;
    end.per_hook = s.per_hook;
    end.culprits = s.culprits;
    return end;
}

void print_session_end(const JournalSessionEnd& end) {
    SessionSummary s;
    s.total = end.refusals;
    s.oom_killed = end.oom_killed;
    s.audited = end.audited;
    s.per_hook = end.per_hook;
    s.culprits = end.culprits;
    print_session_summary(s, end.name.empty() ? std::to_string(end.session_cgroup_id) : end.name);
    auto list = [](const char* what, const std::vector<LeftProcess>& processes) {
        if (processes.empty()) return;
        std::fprintf(stderr, "  %s (%zu):\n", what, processes.size());
        for (const auto& p : processes)
            std::fprintf(stderr, "    %u %s\n", static_cast<unsigned>(p.pid), p.command.c_str());
    };
    list("left running, killed as the session ended", end.reaped);
    list("left running (reap = false)", end.left_running);
}

}  // namespace liveguard
