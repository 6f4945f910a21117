// The run broker's request and reply lines.
#include "sessions/run_protocol.h"

#include <charconv>

#include "base/json.h"

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
    auto obj = json::parse_object(line);
    if (!obj) return std::string("the request is not one JSON object");
    auto op = obj->find("op");
    if (op == obj->end()) return std::string("the request has no \"op\"");
    if (op->second == "sync") return RunRequest{"", RunOp::Sync};
    if (op->second != "start")
        return "unknown op \"" + op->second + "\" (\"start\" and \"sync\" are served)";
    auto name = obj->find("name");
    if (name == obj->end()) return std::string("the request has no \"name\"");
    if (auto why = validate_session_name(name->second)) return *why;
    return RunRequest{name->second};
}

std::optional<RunReply> parse_run_reply(std::string_view line) {
    auto obj = json::parse_object(line);
    if (!obj) return std::nullopt;
    auto get = [&](const char* key) -> std::optional<std::string> {
        auto it = obj->find(key);
        if (it == obj->end()) return std::nullopt;
        return it->second;
    };
    RunReply r;
    auto ok = get("ok");
    if (ok == "true") r.ok = true;
    else if (ok == "false") r.ok = false;
    else return std::nullopt;
    if (!r.ok) {
        r.error = get("error").value_or("");
        if (r.error.empty()) r.error = "no reason given";
        return r;
    }
    auto session = parse_u64(get("session").value_or(""));
    if (!session || *session == 0) return std::nullopt;
    r.session = *session;
    r.joined = get("joined") == "true";
    r.test_log_dir = get("test_log_dir").value_or("");
    return r;
}

}  // namespace liveguard
