#pragma once
// Turning ring-buffer records into the lines `events` prints. Pure
// functions, so the formats are tested without a kernel.
#include <cstdint>
#include <map>
#include <string>

#include "events/event_details.h"
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
// With `details`, also what userspace gathered (exe, test, parents, ...).
std::string format_event_json(const lg_event& e, std::int64_t boot_to_realtime_ns,
                              const EventDetails* details = nullptr);

// A journal line (format_event_json's output, or a lost-events line) for
// people: the event, then what is known of the culprit, indented.
std::string format_journal_text(const std::map<std::string, std::string>& obj, bool colour);

}  // namespace liveguard
