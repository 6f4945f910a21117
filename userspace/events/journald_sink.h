#pragma once
// Every journal record also as a structured entry in the systemd journal,
// when journald runs: a MESSAGE a person reads (the text `events` prints),
// a fixed MESSAGE_ID per kind, and LIVEGUARD_* fields to filter on
// (journalctl -u liveguard-bpf LIVEGUARD_HOOK=task_kill), which journald's
// forwarding carries. Floods arrive as they are journalled: one entry for
// the first refusal and one for its repeats. A session's end is one entry,
// and each process it reaped another. Sent through libsystemd
// (sd_journal_sendv); the static build has none and sends nothing.
#include <string>
#include <string_view>
#include <vector>

#include "events/journal_record.h"

namespace liveguard {

// One field of an entry: "NAME=value".
using JournaldEntry = std::vector<std::string>;

// The entries a record becomes, in order (a session end: its summary,
// then one per reaped process).
std::vector<JournaldEntry> journald_entries(const JournalRecord& record);

// The MESSAGE_IDs, one per kind of entry.
inline constexpr const char* kJournaldRefusalId = "6c1f0d7a3e5b4b0f9a8e2d41c7b3f590";
inline constexpr const char* kJournaldRepeatsId = "0b5e94d2a1f3471c8d6e3f2a9c7b1e44";
inline constexpr const char* kJournaldLossId = "a93d2c5f7e1b4d6a8c0f3e5b7d9a1c26";
inline constexpr const char* kJournaldSessionEndId = "4e7a1c9d3b5f42e8a6c0d2f4b8e1a375";
inline constexpr const char* kJournaldReapedId = "d2b8f6e4a0c94a1e9f7d5b3c1a8e6f02";

// Sends each journal line's entries when journald listens (its socket
// exists); a line that is no record is skipped. Failures are not the
// caller's: the JSON journal holds every record whatever journald does.
void send_to_journald(const std::vector<std::string_view>& lines);
void send_to_journald(const JournalRecord& record);

}  // namespace liveguard
