// parse_proc_stat reads /proc/<pid>/stat lines whose comm field any process
// sets for itself (prctl PR_SET_NAME): spaces, parentheses, newlines.
// parse_pid reads PIDs from /proc entries, cgroup.procs and the command line.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/proc.h"

using namespace liveguard;

namespace {

void check_pid(std::string_view in) {
    auto pid = parse_pid(in);
    if (!pid) return;
    if (*pid <= 0) __builtin_trap();
    // Strict: only digits, so no sign, space or junk is silently dropped.
    for (char c : in)
        if (c < '0' || c > '9') __builtin_trap();
    std::string canonical = std::to_string(*pid);
    if (in.size() < canonical.size() ||
        in.substr(in.size() - canonical.size()) != canonical ||
        in.find_first_not_of('0') != in.size() - canonical.size())
        __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    check_pid(in);

    auto st = parse_proc_stat(in);
    if (!st) return 0;
    if (st->pid <= 0) __builtin_trap();
    // comm runs from the first '(' to the last ')', whatever it contains.
    auto open = in.find('(');
    auto close = in.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos) __builtin_trap();
    if (st->comm != in.substr(open + 1, close - open - 1)) __builtin_trap();
    if (st->state == ' ' || st->state == '\n') __builtin_trap();

    // What the kernel would print for these values must read back the same.
    std::string line = std::to_string(st->pid) + " (" + st->comm + ") " + st->state + " " +
                       std::to_string(st->ppid);
    for (int field = 5; field < 22; ++field) line += " 0";
    line += " " + std::to_string(st->start_ticks) + " 0 0\n";
    auto back = parse_proc_stat(line);
    if (!back || back->pid != st->pid || back->comm != st->comm || back->state != st->state ||
        back->ppid != st->ppid || back->start_ticks != st->start_ticks)
        __builtin_trap();
    return 0;
}
