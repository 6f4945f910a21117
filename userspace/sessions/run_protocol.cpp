// The run broker's request and reply lines.
#include "sessions/run_protocol.h"

#include <charconv>

#include "base/json.h"
#include "base/json_members.h"

namespace liveguard {
namespace {

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

std::optional<std::uint64_t> parse_u64(std::string_view s) {
    std::uint64_t v = 0;
    if (s.empty() || s.size() > 20) return std::nullopt;
    for (char c : s)
        if (c < '0' || c > '9') return std::nullopt;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<std::string> validate_session_name(std::string_view name) {
    if (name.empty()) return "the session name is empty";
    if (name.size() > kSessionNameMax)
        return "the session name is longer than " + std::to_string(kSessionNameMax) + " bytes";
    for (char c : name)
        if (!printable(c)) return "the session name may hold only printable ASCII characters";
    return std::nullopt;
}

std::string default_session_name(std::string_view command) {
    while (!command.empty() && command.back() == '/') command.remove_suffix(1);
    if (auto slash = command.rfind('/'); slash != std::string_view::npos) command.remove_prefix(slash + 1);
    std::string name(command.substr(0, kSessionNameMax));
    for (char& c : name)
        if (!printable(c)) c = '?';
    return name.empty() ? "run" : name;
}

std::string format_run_request(const RunRequest& request) {
    if (request.op == RunOp::Sync) return json::ObjectWriter().str("op", "sync").done();
    return json::ObjectWriter().str("op", "start").str("name", request.name).done();
}

std::string format_run_reply(const RunReply& reply) {
    json::ObjectWriter w;
    w.boolean("ok", reply.ok);
    if (!reply.ok) return w.str("error", reply.error).done();
    return w.str("session", std::to_string(reply.session))
        .boolean("joined", reply.joined)
        .str("test_log_dir", reply.test_log_dir)
        .done();
}

std::variant<RunRequest, std::string> parse_run_request(std::string_view line) {
    if (line.size() > kRunMessageMax) return std::string("the request is too long");
    auto obj = json::parse(line);
    if (!obj || !obj->is_object()) return std::string("the request is not one JSON object");
    json::Members m(*obj);
    if (!m.has("op")) return std::string("the request has no \"op\"");
    std::string op = m.text("op");
    if (!m.ok()) return std::string("the request's \"op\" is not a string");
    if (op == "sync") return RunRequest{"", RunOp::Sync};
    if (op != "start") return "unknown op \"" + op + "\" (\"start\" and \"sync\" are served)";
    if (!m.has("name")) return std::string("the request has no \"name\"");
    std::string name = m.text("name");
    if (!m.ok()) return std::string("the request's \"name\" is not a string");
    if (auto why = validate_session_name(name)) return *why;
    return RunRequest{name};
}

std::optional<RunReply> parse_run_reply(std::string_view line) {
    auto obj = json::parse(line);
    if (!obj) return std::nullopt;
    json::Members m(*obj);
    if (!m.has("ok")) return std::nullopt;
    RunReply r;
    r.ok = m.flag("ok");
    if (!r.ok) {
        r.error = m.text("error");
        if (r.error.empty()) r.error = "no reason given";
        return m.ok() ? std::optional(r) : std::nullopt;
    }
    auto session = parse_u64(m.text("session"));
    if (!session || *session == 0) return std::nullopt;
    r.session = *session;
    r.joined = m.flag("joined");
    r.test_log_dir = m.text("test_log_dir");
    if (!m.ok()) return std::nullopt;
    return r;
}

}  // namespace liveguard
