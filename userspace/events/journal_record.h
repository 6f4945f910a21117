#pragma once
// One line of the event journal (/var/log/liveguard/events.jsonl) as data: a
// refused act with what userspace learnt of its culprit, a count of events
// the ring buffer had no room for, or the summary of a process session that
// ended. The journal's JSON is written and read here and nowhere else.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "events/event_details.h"

namespace liveguard {

// The kernel's record, in the words event_format.h gives its numbers.
struct JournalEvent {
    std::string time;  // ISO 8601 UTC with milliseconds
    std::string verdict;
    std::string hook;
    std::uint32_t pid = 0;
    std::uint32_t tid = 0;
    std::uint32_t ns_pid = 0;  // pid in its own PID namespace (a container's); 0 in the machine's
    std::string comm;
    std::uint32_t target_pid = 0;
    std::uint32_t target_ns_pid = 0;
    std::uint32_t target_tid = 0;
    std::string target_comm;
    std::string signal;  // empty for doors that send none
    std::int32_t signal_number = 0;
    std::uint64_t object_id = 0;
    std::uint32_t detail = 0;
    std::string act;
    std::uint64_t session_cgroup_id = 0;
    // What the consumer gathered; a line can be written without it.
    std::optional<EventDetails> details;
};

struct JournalLoss {
    std::uint64_t count = 0;  // lost since the previous loss line
    std::uint64_t total = 0;  // lost since the programs were loaded
};

// Identical refusals that followed an event within a second of it
// (events/event_coalescer.h): the event's own fields, and how many.
struct JournalRepeats {
    JournalEvent of;    // without details: the event line has them
    std::uint64_t count = 0;
    std::string until;  // the time of the last, as `time`
    std::string session_name;  // the event's, when it had one
};

// A process left running by a session that ended.
struct LeftProcess {
    std::uint32_t pid = 0;
    std::string command;  // its command line, arguments joined by spaces
};

// A process session (automatic, or an unprivileged `run`) that ended: the
// watcher writes its summary here, since no `run` is there to print it.
struct JournalSessionEnd {
    std::string time;  // ISO 8601 UTC with milliseconds
    std::uint64_t session_cgroup_id = 0;  // the session's key
    std::string name;     // "pytest[12345]", or the name `run --name` gave
    std::uint32_t root_pid = 0;
    std::string command;  // the root's command line
    std::size_t refusals = 0;
    bool audited = false;  // the refusals were only audited
    std::size_t oom_killed = 0;  // members the OOM killer took
    std::map<std::string, std::size_t> per_hook;
    std::vector<std::string> culprits;
    std::vector<LeftProcess> reaped;        // killed as the session ended
    std::vector<LeftProcess> left_running;  // reap = false: still running
};

struct JournalRecord {
    std::variant<JournalEvent, JournalLoss, JournalSessionEnd, JournalRepeats> body;
};

// One JSON line, without its newline. An event's members keep the order
// they have always had; an empty optional string (signal, session name and
// path, exe, what protects the target, test) is written as null. A loss
// starts with "lost"; a session end with "type":"session_end", then time,
// session_cgroup_id, name, root_pid, command, refusals, audited, oom_killed, per_hook
// (an object: hook name to count), culprits (strings), reaped and
// left_running (arrays of {"pid","command"}). Repeats: "type":"repeats",
// count, until, session_name (null when none), then the event's members
// without its details.
std::string write_journal_record(const JournalRecord& record);

// A line write_journal_record wrote. Members a line lacks (lines written
// without details, or by an older version) read as empty or zero, and so
// does null; members this version does not know are skipped. Nothing when
// the line is not one JSON object (RFC 8259, UTF-8), is neither a loss, a
// session end nor an event with a time, has a "type" this version does not
// know, or a member of the record's is of another kind (a string where a
// number belongs, a negative pid, an object in argv).
//
// Given `since` (ISO 8601 UTC, as records carry it), nothing too for a
// record older than it that says so in its first members, as every writer
// puts them: an event's time comes first, a session end's time and a count
// of repeats' until follow their type. The rest of such a line is not
// read. Records dated later in the line are returned; the caller filters
// them.
std::optional<JournalRecord> parse_journal_record(std::string_view line,
                                                  const std::optional<std::string>& since = std::nullopt);
// Whether a line is well-formed JSON that begins as one of this version's
// records does: what unfiltered `events --json` passes on without
// decoding it.
bool is_journal_record_line(std::string_view line);

}  // namespace liveguard
