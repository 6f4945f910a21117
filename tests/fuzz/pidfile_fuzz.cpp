// parse_pid_file reads files that services (and anything able to write to
// their directories) produce, often mid-write.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "policy/pidfile.h"

using namespace liveguard;

namespace {

std::string_view trimmed(std::string_view s) {
    auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!s.empty() && ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && ws(s.back())) s.remove_suffix(1);
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    PidFileParse r = parse_pid_file(in);

    // The watcher retries on the same bytes and compares outcomes.
    PidFileParse again = parse_pid_file(in);
    if (r.index() != again.index()) __builtin_trap();

    if (auto* rec = std::get_if<PidFileRecord>(&r)) {
        // A record names a process the kernel could hand out: protecting
        // pid 0 or a negative number would mean a process group or nothing.
        if (rec->pid <= 0) __builtin_trap();
        const auto& rec2 = std::get<PidFileRecord>(again);
        if (rec2.pid != rec->pid || rec2.start_time != rec->start_time) __builtin_trap();

        std::string_view t = trimmed(in);
        if (t.front() == '{') {
            // A record cut short must read as Incomplete (retry), never as a
            // record that lost its start_time and with it the PID-reuse check:
            // whatever path the parser took, the object it accepted closes.
            if (!object_closes(t)) __builtin_trap();
        } else {
            // "12" may be the first half of "1234": only a terminated
            // integer is a record.
            if (in.find('\n') == std::string_view::npos) __builtin_trap();
            if (rec->start_time) __builtin_trap();
        }
    } else {
        auto p = std::get<PidFileProblem>(r);
        if (p != PidFileProblem::Empty && p != PidFileProblem::Incomplete &&
            p != PidFileProblem::Malformed)
            __builtin_trap();
        if (describe(p) == nullptr) __builtin_trap();
        // Empty means only whitespace was read.
        if ((p == PidFileProblem::Empty) != trimmed(in).empty()) __builtin_trap();
    }
    return 0;
}
