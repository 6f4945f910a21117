#pragma once
// PID files as services write them. The Hermes gateway writes a one-line
// JSON record ({"pid": N, "start_time": T, ...}); older writers a bare
// integer. Files are written non-atomically, so readers see empty and
// half-written content: that is "not readable yet", never "no process".
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace liveguard {

struct PidFileRecord {
    pid_t pid = 0;
    std::optional<std::uint64_t> start_time;  // /proc/<pid>/stat field 22, when given
};

enum class PidFileProblem {
    Empty,       // nothing written yet, or truncated
    Incomplete,  // a JSON record cut short: retry
    Malformed,   // garbage that will not become valid by waiting
};

using PidFileParse = std::variant<PidFileRecord, PidFileProblem>;

PidFileParse parse_pid_file(std::string_view content);

const char* describe(PidFileProblem p);

// Whether the JSON object that s[0] opens is closed somewhere in s
// (brackets counted outside strings). A prefix of a record being written
// never is; parse_pid_file takes nothing else as a complete record.
bool object_closes(std::string_view s);

}  // namespace liveguard
