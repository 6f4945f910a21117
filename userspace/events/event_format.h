#pragma once
// Turning ring-buffer records into journal lines, and journal lines into
// what `events` prints. Pure functions, so the formats are tested without a
// kernel.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "events/event_details.h"
#include "events/journal_record.h"
#include "liveguard/abi.h"

namespace liveguard {

// "SIGTERM", "SIGRTMIN+3", or "SIG<n>" for numbers outside the table.
std::string signal_name(int sig);
const char* hook_name(std::uint32_t hook);
// What the refused act was, in words: "sent SIGTERM to gw[42]".
std::string describe_act(const lg_event& e);
const char* verdict_name(std::uint32_t verdict);

// A comm from the kernel: at most LG_COMM_LEN bytes, NUL-terminated or not.
std::string comm_string(const char (&comm)[LG_COMM_LEN]);

// `boot_to_realtime_ns` converts the record's boot-clock time to wall time.
std::string format_event_text(const lg_event& e, std::int64_t boot_to_realtime_ns);
// The journal line (write_journal_record's); with `details`, also what
// userspace gathered (exe, test, parents, ...).
std::string format_event_json(const lg_event& e, std::int64_t boot_to_realtime_ns,
                              const EventDetails* details = nullptr);
// The journal line saying `count` refusals identical to `first` followed
// it, the last at `last_boot_ns` (events/event_coalescer.h).
std::string format_repeats_json(const lg_event& first, std::uint64_t count, std::uint64_t last_boot_ns,
                                std::int64_t boot_to_realtime_ns, const std::string& session_name = "");

// A journal record for people: the event, then what is known of the
// culprit, indented. A session end in one line: "<time> session
// pytest[12345] ended (python3 -m pytest tests/): 2 refused (task_kill 2);
// reaped 1: 4242 sleep 1000".
std::string format_journal_text(const JournalRecord& record, bool colour);

// Which journal records `events` shows. Loss records always pass.
struct JournalFilter {
    std::optional<std::string> since;    // ISO 8601 UTC, as records carry it: none earlier
    // A session's name, cgroup id or process-session key: its events and
    // its session-end record.
    std::optional<std::string> session;
    // The name of a session by its id, for events journalled without one
    // (gathered before the session was named); empty when unknown.
    std::function<std::string(std::uint64_t)> session_name;
};

// What `events` prints for one journal line, before its newline: the line
// as it is with `json`, else format_journal_text's. Nothing for a line that
// is no record or that the filter leaves out.
std::optional<std::string> render_journal_line(std::string_view line, const JournalFilter& filter, bool json,
                                               bool colour);

}  // namespace liveguard
