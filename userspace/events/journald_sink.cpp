#include "events/journald_sink.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#ifndef LG_STATIC
// Entries say where in liveguard they come from by LIVEGUARD_KIND, not by
// a source file and line.
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#endif

#include "events/event_format.h"

namespace liveguard {
namespace {

// journald's native socket: present while it runs.
constexpr const char* kJournaldSocket = "/run/systemd/journal/socket";

void add(JournaldEntry& e, const char* name, const std::string& value) {
    if (!value.empty()) e.push_back(std::string(name) + "=" + value);
}

void add(JournaldEntry& e, const char* name, std::uint64_t value) {
    e.push_back(std::string(name) + "=" + std::to_string(value));
}

void common(JournaldEntry& e, const char* id, const char* kind, const char* priority, const std::string& message) {
    e.push_back("MESSAGE=" + message);
    e.push_back(std::string("MESSAGE_ID=") + id);
    e.push_back(std::string("PRIORITY=") + priority);
    e.push_back("SYSLOG_IDENTIFIER=liveguard-bpf");
    e.push_back(std::string("LIVEGUARD_KIND=") + kind);
}

void event_fields(JournaldEntry& e, const JournalEvent& ev, const std::string& session_name) {
    add(e, "LIVEGUARD_TIME", ev.time);
    add(e, "LIVEGUARD_VERDICT", ev.verdict);
    add(e, "LIVEGUARD_HOOK", ev.hook);
    add(e, "LIVEGUARD_ACT", ev.act);
    add(e, "LIVEGUARD_PID", std::uint64_t{ev.pid});
    add(e, "LIVEGUARD_COMM", ev.comm);
    if (ev.target_pid) add(e, "LIVEGUARD_TARGET_PID", std::uint64_t{ev.target_pid});
    add(e, "LIVEGUARD_TARGET_COMM", ev.target_comm);
    add(e, "LIVEGUARD_SIGNAL", ev.signal);
    if (ev.session_cgroup_id) add(e, "LIVEGUARD_SESSION_ID", ev.session_cgroup_id);
    std::string session = session_name;
    if (ev.details) {
        if (session.empty()) session = ev.details->session_name;
        add(e, "LIVEGUARD_TEST", ev.details->test);
        add(e, "LIVEGUARD_EXE", ev.details->exe);
        add(e, "LIVEGUARD_PROTECTED_BY", ev.details->protected_by);
        if (ev.details->target_ns_pid) add(e, "LIVEGUARD_TARGET_NS_PID", std::uint64_t{ev.details->target_ns_pid});
    }
    add(e, "LIVEGUARD_SESSION", session);
}

// The first line of what `events` prints for the record: the refusal;
// the culprit's details follow on lines of their own there and are
// fields here.
std::string message_of(const JournalRecord& r) {
    std::string text = format_journal_text(r, false);
    auto nl = text.find('\n');
    return nl == std::string::npos ? text : text.substr(0, nl);
}

}  // namespace

std::vector<JournaldEntry> journald_entries(const JournalRecord& r) {
    std::vector<JournaldEntry> out;
    if (const auto* ev = std::get_if<JournalEvent>(&r.body)) {
        JournaldEntry& e = out.emplace_back();
        common(e, kJournaldRefusalId, "refusal", ev->verdict == "audited" ? "5" : "4", message_of(r));
        event_fields(e, *ev, "");
    } else if (const auto* rep = std::get_if<JournalRepeats>(&r.body)) {
        JournaldEntry& e = out.emplace_back();
        common(e, kJournaldRepeatsId, "repeats", "4", message_of(r));
        event_fields(e, rep->of, rep->session_name);
        add(e, "LIVEGUARD_COUNT", rep->count);
        add(e, "LIVEGUARD_UNTIL", rep->until);
    } else if (const auto* loss = std::get_if<JournalLoss>(&r.body)) {
        JournaldEntry& e = out.emplace_back();
        common(e, kJournaldLossId, "loss", "4", message_of(r));
        add(e, "LIVEGUARD_COUNT", loss->count);
        add(e, "LIVEGUARD_TOTAL", loss->total);
    } else if (const auto* end = std::get_if<JournalSessionEnd>(&r.body)) {
        JournaldEntry& e = out.emplace_back();
        common(e, kJournaldSessionEndId, "session_end", end->refusals ? "4" : "6", message_of(r));
        add(e, "LIVEGUARD_TIME", end->time);
        add(e, "LIVEGUARD_SESSION", end->name);
        add(e, "LIVEGUARD_SESSION_ID", end->session_cgroup_id);
        add(e, "LIVEGUARD_ROOT_PID", std::uint64_t{end->root_pid});
        add(e, "LIVEGUARD_COMMAND", end->command);
        add(e, "LIVEGUARD_REFUSALS", std::uint64_t{end->refusals});
        add(e, "LIVEGUARD_REAPED", std::uint64_t{end->reaped.size()});
        add(e, "LIVEGUARD_LEFT_RUNNING", std::uint64_t{end->left_running.size()});
        for (const auto& p : end->reaped) {
            JournaldEntry& k = out.emplace_back();
            common(k, kJournaldReapedId, "reaped", "5",
                   "session " + end->name + " ended; killed what it left running: " + std::to_string(p.pid) + " " +
                       p.command);
            add(k, "LIVEGUARD_TIME", end->time);
            add(k, "LIVEGUARD_SESSION", end->name);
            add(k, "LIVEGUARD_SESSION_ID", end->session_cgroup_id);
            add(k, "LIVEGUARD_PID", std::uint64_t{p.pid});
            add(k, "LIVEGUARD_COMMAND", p.command);
        }
    }
    return out;
}

namespace {

void send_entries(const JournalRecord& record) {
#ifndef LG_STATIC
    for (const auto& entry : journald_entries(record)) {
        std::vector<struct iovec> iov;
        iov.reserve(entry.size());
        for (const auto& f : entry) iov.push_back({const_cast<char*>(f.data()), f.size()});
        sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
    }
#else
    (void)record;
#endif
}

bool journald_listens() { return ::access(kJournaldSocket, W_OK) == 0; }

}  // namespace

void send_to_journald(const JournalRecord& record) {
    if (journald_listens()) send_entries(record);
}

void send_to_journald(const std::vector<std::string_view>& lines) {
    if (lines.empty() || !journald_listens()) return;
    for (auto line : lines)
        if (auto r = parse_journal_record(line)) send_entries(*r);
}

}  // namespace liveguard
