#include "events/event_format.h"

#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "base/clock.h"
#include "base/json.h"

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
        case LG_HOOK_EXEC: return "exec";
        case LG_HOOK_CONTROL_FIFO: return "control_fifo";
        case LG_HOOK_CGROUP_FILE: return "cgroup_file";
        case LG_HOOK_PROC_FILE: return "proc_file";
        case LG_HOOK_PTRACE: return "ptrace";
        case LG_HOOK_SIGIO: return "sigio";
        case LG_HOOK_SERVICE_SOCKET: return "service_socket";
        case LG_HOOK_BPF: return "bpf";
        case LG_HOOK_PINS: return "pins";
        case LG_HOOK_LIMITS: return "limits";
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

std::string comm_string(const char (&comm)[LG_COMM_LEN]) {
    return std::string(comm, strnlen(comm, LG_COMM_LEN));
}

static std::uint64_t wall_ns(const lg_event& e, std::int64_t offset) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(e.boot_ns) + offset);
}

static std::string target_string(const lg_event& e) {
    std::string s = comm_string(e.target_comm) + "[" + std::to_string(e.target_pid);
    if (e.target_tid != e.target_pid) s += "/" + std::to_string(e.target_tid);
    return s + "]";
}

std::string describe_act(const lg_event& e) {
    std::string name = comm_string(e.target_comm);
    std::string obj = std::to_string(e.object_id);
    switch (e.hook) {
        case LG_HOOK_TASK_KILL: return "sent " + signal_name(e.signal) + " to " + target_string(e);
        case LG_HOOK_SIGIO:
            return "aimed " + signal_name(e.signal) + " (F_SETOWN) at " + target_string(e);
        case LG_HOOK_PTRACE: return "tried to attach to " + target_string(e) + " (ptrace)";
        case LG_HOOK_EXEC: return "ran " + name + " against a protected service";
        case LG_HOOK_CONTROL_FIFO: return "opened supervisor control FIFO (inode " + obj + ") for writing";
        case LG_HOOK_CGROUP_FILE: return "opened " + name + " of cgroup " + obj + " for writing";
        case LG_HOOK_PROC_FILE:
            if (!e.target_pid) return "opened /proc/" + name + " for writing";
            return "opened /proc/" + std::to_string(e.target_pid) + "/" + name + " for writing";
        case LG_HOOK_SERVICE_SOCKET: return "connected to service manager socket " + name;
        case LG_HOOK_BPF:
            return e.object_id ? "asked for liveguard's BPF object " + obj
                               : "used bpf() command " + std::to_string(e.detail) + " on links";
        case LG_HOOK_PINS: return "changed liveguard's bpffs pins (" + name + ")";
        case LG_HOOK_LIMITS: {
            static const char* what[] = {"a limit", "a resource limit", "the priority",
                                         "the scheduling policy", "the I/O priority"};
            return std::string("tried to change ") + what[e.detail < 5 ? e.detail : 0] + " of " +
                   target_string(e);
        }
        default: return "did something refused";
    }
}

std::string format_event_text(const lg_event& e, std::int64_t offset) {
    std::string verdict = verdict_name(e.verdict);
    for (auto& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string s = format_utc(wall_ns(e, offset)) + " " + verdict + " " + hook_name(e.hook) +
                    ": " + comm_string(e.comm) + "[" + std::to_string(e.pid);
    if (e.tid != e.pid) s += "/" + std::to_string(e.tid);
    s += "] " + describe_act(e) + " (session cgroup " + std::to_string(e.session_cgroup_id) + ")";
    return s;
}

std::string format_event_json(const lg_event& e, std::int64_t offset, const EventDetails* d) {
    json::ObjectWriter w;
    w
        .str("time", format_utc(wall_ns(e, offset)))
        .str("verdict", verdict_name(e.verdict))
        .str("hook", hook_name(e.hook))
        .unum("pid", e.pid)
        .unum("tid", e.tid)
        .str("comm", comm_string(e.comm))
        .unum("target_pid", e.target_pid)
        .unum("target_tid", e.target_tid)
        .str("target_comm", comm_string(e.target_comm))
        .raw("signal", e.signal ? json::quote(signal_name(e.signal)) : "null")
        .num("signal_number", e.signal)
        .unum("object_id", e.object_id)
        .unum("detail", e.detail)
        .str("act", describe_act(e))
        .unum("session_cgroup_id", e.session_cgroup_id);
    if (!d) return w.done();
    std::string argv = "[", parents = "[";
    for (const auto& a : d->argv) argv += (argv.size() > 1 ? "," : "") + json::quote(a);
    for (const auto& p : d->parents)
        parents += (parents.size() > 1 ? "," : "") +
                   json::ObjectWriter().unum("pid", p.pid).str("comm", p.comm).done();
    w.raw("session_name", d->session_name.empty() ? "null" : json::quote(d->session_name))
        .raw("session_path", d->session_path.empty() ? "null" : json::quote(d->session_path))
        .raw("exe", d->exe.empty() ? "null" : json::quote(d->exe))
        .boolean("culprit_gone", d->culprit_gone)
        .raw("argv", argv + "]")
        .raw("target_protected_by", d->protected_by.empty() ? "null" : json::quote(d->protected_by))
        .raw("test", d->test.empty() ? "null" : json::quote(d->test))
        .raw("parents", parents + "]");
    return w.done();
}

std::string format_journal_text(const std::map<std::string, std::string>& o, bool colour) {
    auto get = [&](const char* k) {
        auto it = o.find(k);
        return it == o.end() || it->second == "null" ? std::string() : it->second;
    };
    if (o.count("lost"))
        return "liveguard: " + get("count") + " events lost (ring buffer full; " + get("total") +
               " in total)";
    std::string verdict = get("verdict");
    for (auto& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (colour) verdict = (verdict == "DENIED" ? "\033[1;31m" : "\033[1;33m") + verdict + "\033[0m";
    std::string session = get("session_name");
    session = session.empty() ? "session cgroup " + get("session_cgroup_id")
                              : "session " + session;
    std::string s = get("time") + " " + verdict + " " + get("hook") + ": " + get("comm") + "[" +
                    get("pid") + "] " + get("act") + " (" + session + ")";
    std::vector<std::string> more;
    if (!get("test").empty()) more.push_back("test: " + get("test"));
    if (!get("exe").empty()) more.push_back("exe: " + get("exe"));
    else if (get("culprit_gone") == "true") more.push_back("exe: (process gone)");
    // argv and parents are arrays; shown as their JSON, which is unambiguous.
    if (!get("argv").empty() && get("argv") != "[]") more.push_back("argv: " + get("argv"));
    if (!get("parents").empty() && get("parents") != "[]") {
        std::string chain;
        std::string p = get("parents");
        std::size_t at = 0;
        while ((at = p.find("{\"pid\":", at)) != std::string::npos) {
            std::size_t end = p.find('}', at);
            auto obj = json::parse_object(p.substr(at, end - at + 1));
            if (obj) chain += (chain.empty() ? "" : " < ") + (*obj)["comm"] + "[" + (*obj)["pid"] + "]";
            at = end;
        }
        more.push_back("parents: " + chain);
    }
    if (!get("target_protected_by").empty()) more.push_back("target protected by: " + get("target_protected_by"));
    for (const auto& m : more) s += "\n    " + m;
    return s;
}


}  // namespace liveguard
