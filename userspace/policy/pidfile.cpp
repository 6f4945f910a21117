#include "policy/pidfile.h"

#include <charconv>
#include <climits>

namespace liveguard {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// The unsigned integer value of a top-level key in a flat JSON object, or
// nullopt. Only the keys this tool needs are looked at; nested values of
// other keys (argv) are skipped by tracking strings and depth.
std::optional<std::uint64_t> json_uint(std::string_view obj, std::string_view key, bool& bad) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < obj.size(); ++i) {
        char c = obj[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') --depth;
        else if (c == '"') {
            std::size_t end = i + 1;
            while (end < obj.size() && obj[end] != '"') end += obj[end] == '\\' ? 2 : 1;
            if (end >= obj.size()) return std::nullopt;
            std::string_view k = obj.substr(i + 1, end - i - 1);
            std::size_t j = end + 1;
            while (j < obj.size() && (obj[j] == ' ' || obj[j] == '\t')) ++j;
            if (depth == 1 && k == key && j < obj.size() && obj[j] == ':') {
                ++j;
                while (j < obj.size() && (obj[j] == ' ' || obj[j] == '\t')) ++j;
                std::uint64_t v = 0;
                auto [p, ec] = std::from_chars(obj.data() + j, obj.data() + obj.size(), v);
                if (ec != std::errc() || p == obj.data() + j) {
                    bad = true;  // "pid": "x", -1, null...
                    return std::nullopt;
                }
                return v;
            }
            i = end;
        }
    }
    return std::nullopt;
}

}  // namespace

bool object_closes(std::string_view s) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '{' || c == '[') ++depth;
        else if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
}

PidFileParse parse_pid_file(std::string_view content) {
    std::string_view s = trim(content);
    if (s.empty()) return PidFileProblem::Empty;
    if (s.front() == '{') {
        // A read cut short may still end in '}' (of an argv entry such as
        // "{\"pid\": 9}", or a nested object): read as a record it would
        // lose the start_time that follows, and with it the PID-reuse check.
        if (s.back() != '}' || !object_closes(s)) return PidFileProblem::Incomplete;
        bool bad = false;
        auto pid = json_uint(s, "pid", bad);
        if (bad || !pid || *pid == 0 || *pid > INT_MAX) return PidFileProblem::Malformed;
        PidFileRecord r;
        r.pid = static_cast<pid_t>(*pid);
        r.start_time = json_uint(s, "start_time", bad);
        if (bad) r.start_time.reset();  // a null start_time: no identity check possible
        return r;
    }
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v == 0 || v > INT_MAX)
        return PidFileProblem::Malformed;
    // A bare integer is complete only with its newline: "12" may be the
    // first half of "1234".
    if (content.find('\n') == std::string_view::npos) return PidFileProblem::Incomplete;
    return PidFileRecord{static_cast<pid_t>(v), std::nullopt};
}

const char* describe(PidFileProblem p) {
    switch (p) {
        case PidFileProblem::Empty: return "empty";
        case PidFileProblem::Incomplete: return "incomplete JSON (being written?)";
        case PidFileProblem::Malformed: return "not a PID file (neither an integer nor a JSON record with \"pid\")";
    }
    return "?";
}

}  // namespace liveguard
