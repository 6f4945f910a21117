#include "event_format.h"

#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "json.h"

namespace liveguard {

std::string signal_name(int sig) {
    static const char* const kNames[] = {
        nullptr,   "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP", "SIGABRT",
        "SIGBUS",  "SIGFPE",  "SIGKILL",   "SIGUSR1", "SIGSEGV",   "SIGUSR2", "SIGPIPE",
        "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",
        "SIGTTIN", "SIGTTOU", "SIGURG",    "SIGXCPU", "SIGXFSZ",   "SIGVTALRM", "SIGPROF",
        "SIGWINCH", "SIGIO",  "SIGPWR",    "SIGSYS"};
    constexpr int kCount = static_cast<int>(sizeof kNames / sizeof kNames[0]);
    if (sig > 0 && sig < kCount) return kNames[sig];
    // The kernel's SIGRTMIN is 32; glibc reserves two, but the kernel
    // number is what the record carries.
    if (sig >= 32 && sig <= 64) return sig == 32 ? "SIGRTMIN" : "SIGRTMIN+" + std::to_string(sig - 32);
    return "SIG" + std::to_string(sig);
}

const char* hook_name(std::uint32_t hook) {
    switch (hook) {
        case LG_HOOK_TASK_KILL: return "task_kill";
        default: return "unknown";
    }
}

const char* verdict_name(std::uint32_t verdict) {
    switch (verdict) {
        case LG_VERDICT_DENIED: return "denied";
        case LG_VERDICT_AUDITED: return "audited";
        default: return "unknown";
    }
}

std::string format_utc(std::uint64_t ns) {
    time_t secs = static_cast<time_t>(ns / 1000000000ull);
    unsigned ms = static_cast<unsigned>((ns / 1000000ull) % 1000);
    struct tm tm {};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    return buf;
}

std::string comm_string(const char (&comm)[LG_COMM_LEN]) {
    return std::string(comm, strnlen(comm, LG_COMM_LEN));
}

static std::uint64_t wall_ns(const lg_event& e, std::int64_t offset) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(e.boot_ns) + offset);
}

std::string format_event_text(const lg_event& e, std::int64_t offset) {
    std::string verdict = verdict_name(e.verdict);
    for (auto& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string s = format_utc(wall_ns(e, offset)) + " " + verdict + " " + hook_name(e.hook) +
                    ": " + comm_string(e.comm) + "[" + std::to_string(e.pid);
    if (e.tid != e.pid) s += "/" + std::to_string(e.tid);
    s += "] sent " + signal_name(e.signal) + " to " + comm_string(e.target_comm) + "[" +
         std::to_string(e.target_pid);
    if (e.target_tid != e.target_pid) s += "/" + std::to_string(e.target_tid);
    s += "] (session cgroup " + std::to_string(e.session_cgroup_id) + ")";
    return s;
}

std::string format_event_json(const lg_event& e, std::int64_t offset) {
    return json::ObjectWriter()
        .str("time", format_utc(wall_ns(e, offset)))
        .str("verdict", verdict_name(e.verdict))
        .str("hook", hook_name(e.hook))
        .unum("pid", e.pid)
        .unum("tid", e.tid)
        .str("comm", comm_string(e.comm))
        .unum("target_pid", e.target_pid)
        .unum("target_tid", e.target_tid)
        .str("target_comm", comm_string(e.target_comm))
        .str("signal", signal_name(e.signal))
        .num("signal_number", e.signal)
        .unum("session_cgroup_id", e.session_cgroup_id)
        .done();
}

std::int64_t boot_to_realtime_offset_ns() {
    struct timespec rt {}, bt {};
    ::clock_gettime(CLOCK_REALTIME, &rt);
    ::clock_gettime(CLOCK_BOOTTIME, &bt);
    auto ns = [](const timespec& t) {
        return static_cast<std::int64_t>(t.tv_sec) * 1000000000ll + t.tv_nsec;
    };
    return ns(rt) - ns(bt);
}

}  // namespace liveguard
