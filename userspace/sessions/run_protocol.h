#pragma once
// The one exchange of an unprivileged `run` with the watcher's run broker
// (paths::kRunSocket): the process that is about to exec its command
// sends one request line and reads one reply line, each a JSON object.
//
//   request  {"op":"start","name":"pytest"}
//   reply    {"ok":true,"session":"9223372036854775809","joined":false,
//             "test_log_dir":"/run/liveguard/tests/9223372036854775809"}
//   or       {"ok":false,"error":"..."}
//
//   request  {"op":"sync"}
//   reply    {"ok":true}
//
// "sync" asks the watcher to journal every refusal the kernel has
// reported so far before it replies: the pytest plugin sends it as a test
// ends, then reads that test's refusals from the journal.
//
// "session" is a decimal string (process session ids use bit 63, beyond
// what a JSON number holds exactly). "joined" is true when the requester
// already was a member of a live session, which it then stays in; its
// "test_log_dir" is empty when that session has none. The request never
// names a process: the broker acts on the peer of the connection only,
// which keeps the connection open until it has the reply (the broker
// refuses a peer that hung up: its pid may be another process's by then).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace liveguard {

// The longest request or reply line read, newline excluded.
inline constexpr std::size_t kRunMessageMax = 4096;
// The longest session name, in bytes.
inline constexpr std::size_t kSessionNameMax = 64;

enum class RunOp { Start, Sync };

struct RunRequest {
    std::string name;  // valid (validate_session_name); Start only
    RunOp op = RunOp::Start;
};

struct RunReply {
    bool ok = false;
    std::string error;  // when !ok
    std::uint64_t session = 0;
    bool joined = false;
    std::string test_log_dir;
};

// Why `name` cannot name a session (empty, longer than kSessionNameMax
// bytes, or a byte outside printable ASCII), or nothing when it can.
std::optional<std::string> validate_session_name(std::string_view name);

// The name a session gets without --name: the command's basename, cut to
// kSessionNameMax bytes, with bytes outside printable ASCII as '?';
// "run" when nothing is left.
std::string default_session_name(std::string_view command);

// One line each, without the newline.
std::string format_run_request(const RunRequest& request);
std::string format_run_reply(const RunReply& reply);

// A request line: the request, or the error to reply with (not one JSON
// object, an op other than "start" and "sync", a start without a valid
// name).
std::variant<RunRequest, std::string> parse_run_request(std::string_view line);

// A reply line; nothing when it is not one (no "ok", or ok without a
// session id that reads as a number).
std::optional<RunReply> parse_run_reply(std::string_view line);

}  // namespace liveguard
