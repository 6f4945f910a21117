// Events and journal records in words: the journal's JSON, the lines
// `events` prints.
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
#define LG_HOOK_CASE(name, value, text, what) \
    case LG_HOOK_##name: return text;
        LG_HOOKS(LG_HOOK_CASE)
#undef LG_HOOK_CASE
        default: return "unknown";
    }
}

const char* verdict_name(std::uint32_t verdict) {
    switch (verdict) {
        case LG_VERDICT_DENIED: return "denied";
        case LG_VERDICT_AUDITED: return "audited";
        case LG_VERDICT_KILLED: return "killed";
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

// What a file door's lg_path_op did to the file called name.
static std::string path_act(std::uint32_t detail, const std::string& name, bool open_fd) {
    switch (detail & 0xff) {
        case LG_PATH_WRITE:
            if (detail & LG_DETAIL_SHARED_MAP) return "mapped " + name + " shared for writing";
            return open_fd ? "wrote " + name + " through a file opened earlier" : "opened " + name + " for writing";
        case LG_PATH_CREATE: return "created " + name;
        case LG_PATH_UNLINK: return "removed " + name;
        case LG_PATH_RENAME: return "renamed " + name;
        case LG_PATH_LINK: return "made a hard link of or in " + name;
        case LG_PATH_SYMLINK: return "created symlink " + name;
        case LG_PATH_MKDIR: return "made directory " + name;
        case LG_PATH_RMDIR: return "removed directory " + name;
        case LG_PATH_SETATTR: return "changed the mode, owner, times or size of " + name;
        case LG_PATH_XATTR: return "changed an extended attribute of " + name;
        case LG_PATH_LOCK: return "took a lock or lease on " + name;
        default: return "changed " + name;
    }
}

std::string describe_act(const lg_event& e) {
    std::string name = comm_string(e.target_comm);
    std::string obj = std::to_string(e.object_id);
    // A write through a file opened earlier is refused at the write.
    const bool open_fd = e.detail & LG_DETAIL_OPEN_FD;
    const std::string written = open_fd ? " through a file opened earlier" : " for writing";
    switch (e.hook) {
        case LG_HOOK_TASK_KILL: return "sent " + signal_name(e.signal) + " to " + target_string(e);
        case LG_HOOK_SIGIO:
            if (e.detail & LG_DETAIL_MAP_FULL)
                return "set the owner (F_SETOWN) of " + name + " while liveguard's file-owner map was full";
            return "aimed " + signal_name(e.signal) + " (F_SETOWN) at " + target_string(e);
        case LG_HOOK_PTRACE:
            // detail: the ptrace mode asked (PTRACE_MODE_ATTACH is 2), or
            // the capability process_madvise fell back on (no target).
            if (e.target_pid == 0)
                return "called process_madvise on a protected process (refused its capability fallback too)";
            if (!(e.detail & 2)) return "called process_madvise on " + target_string(e);
            return "tried to attach to " + target_string(e) + " (ptrace)";
        case LG_HOOK_EXEC: return "ran " + name + " against a protected service";
        case LG_HOOK_CONTROL_FIFO:
            if (e.detail & LG_DETAIL_RENAME)
                return "tried to rename, link or remove supervisor control FIFO " + name + " (inode " + obj + ")";
            return (open_fd ? "wrote" : "opened") + std::string(" supervisor control FIFO (inode ") + obj + ")" +
                   (open_fd ? " through a file opened earlier" : " for writing");
        case LG_HOOK_CGROUP_FILE:
            if ((e.detail & 0xff) == LG_MOUNT_CGROUP_V1)
                return "wrote cgroup v1 file " + name + written;
            return "opened " + name + " of cgroup " + obj + written;
        case LG_HOOK_PROC_FILE:
            if (!e.target_pid) return "opened /proc/" + name + written;
            return "opened /proc/" + std::to_string(e.target_pid) + "/" + name + written;
        case LG_HOOK_SERVICE_SOCKET: return "connected to service manager socket " + name;
        case LG_HOOK_BPF:
            return e.object_id ? "asked for liveguard's BPF object " + obj
                               : "used bpf() command " + std::to_string(e.detail) + " on links";
        case LG_HOOK_PINS: return "changed liveguard's bpffs pins (" + name + ")";
        case LG_HOOK_LIMITS: {
            const char* what = e.detail == LG_LIMIT_RLIMIT      ? "a resource limit"
                               : e.detail == LG_LIMIT_NICE      ? "the priority"
                               : e.detail == LG_LIMIT_SCHEDULER ? "the scheduling policy"
                               : e.detail == LG_LIMIT_IOPRIO    ? "the I/O priority"
                                                                : "a limit";
            return std::string("tried to change ") + what + " of " + target_string(e);
        }
        case LG_HOOK_CLONE_INTO_CGROUP: return "started a child in another cgroup (clone3 CLONE_INTO_CGROUP)";
        case LG_HOOK_MOUNT: {
            const char* what = e.detail == LG_MOUNT_MOUNT        ? "mount"
                               : e.detail == LG_MOUNT_UMOUNT     ? "unmount"
                               : e.detail == LG_MOUNT_MOVE       ? "move a mount"
                               : e.detail == LG_MOUNT_PIVOT_ROOT ? "pivot_root"
                               : e.detail == LG_MOUNT_CGROUP_V1  ? "mount a cgroup v1 hierarchy"
                                                                 : "mount";
            return std::string("tried to ") + what + (name.empty() ? "" : " at " + name) +
                   " in a mount namespace shared with the machine";
        }
        case LG_HOOK_SYSCTL: return "wrote /proc/sys file " + name + (open_fd ? " through a file opened earlier" : "");
        case LG_HOOK_BPF_LOAD: return "loaded a BPF program";
        case LG_HOOK_PERF_EVENT: return "opened a perf event that signals (sigtrap)";
        case LG_HOOK_FANOTIFY: return "placed a fanotify permission mark" + (name.empty() ? "" : " on " + name);
        case LG_HOOK_PATH: {
            std::string what = path_act(e.detail, name, open_fd);
            if (e.detail & LG_PATH_TOO_DEEP)
                return what + " more than " + std::to_string(LG_TREE_DEPTH) +
                       " levels deep (refused: a protected tree may be above it)";
            return what + " in a protected tree (inode " + obj + ")";
        }
        case LG_HOOK_MAPPED: {
            // A size change is the only attribute this door refuses.
            std::string what = (e.detail & 0xff) == LG_PATH_SETATTR ? "truncated " + name
                                                                    : path_act(e.detail, name, open_fd);
            if (e.detail & LG_MAPPED_DETAIL_HELD_OPEN) return what + ", which a protected process holds open";
            if (e.detail & LG_MAPPED_DETAIL_WIDELY)
                return what + ", which more processes map than the guard reads (a protected process may; " +
                       "replace it by rename instead)";
            return what + ", which a protected process has mapped (replace it by rename instead)";
        }
        case LG_HOOK_REALTIME:
            if (e.detail == LG_DETAIL_SCHED_SETATTR)
                return "called sched_setattr (refused to members whatever the policy) for " + target_string(e);
            return "asked for realtime scheduling (policy " + std::to_string(e.detail) + ") for " + target_string(e);
        case LG_HOOK_REBOOT: return "tried to reboot the machine or load a kernel to boot (kexec)";
        case LG_HOOK_MODULE: return "tried to load or remove a kernel module";
        case LG_HOOK_CLOCK: return "tried to set the machine's clock";
        case LG_HOOK_RAW_IO: return "asked for raw I/O (I/O ports, /dev/mem, /dev/port or /dev/kmem)";
        case LG_HOOK_POWER: return "opened /sys/power/" + name + written;
        case LG_HOOK_SECURITYFS: return "opened securityfs file " + name + written;
        case LG_HOOK_NETWORK:
            if (e.detail == LG_NETLINK_NETFILTER) return "sent a netfilter request in the machine's network namespace";
            if (e.detail == LG_NETLINK_SOCK_DESTROY)
                return "asked the kernel to close sockets (SOCK_DESTROY, ss -K) in the machine's network namespace";
            if (e.detail == LG_NETWORK_ADMIN)
                return "asked for CAP_NET_ADMIN in the machine's network namespace (an interface ioctl, "
                       "iptables, a /sys/class/net file, a netlink family)";
            return "sent rtnetlink request " + std::to_string(e.detail) +
                   " (a change: links, addresses, routes, rules) in the machine's network namespace";
        case LG_HOOK_HOSTNAME: return "tried to set the machine's host or domain name";
        case LG_HOOK_SWAP: return "tried to turn swap on or off";
        case LG_HOOK_TASKS:
            return e.detail == LG_TASKS_MAP_FULL
                       ? std::string("forked, but the kernel's table of session task counts is full")
                       : "forked past the session's limit of " + obj + " tasks ([sessions] max_tasks)";
        case LG_HOOK_FS_SPACE:
            return "wrote to " + name + ", on a filesystem a protected service keeps its files on, with " +
                   obj + " bytes left: the reserve kept for the services ([sessions] fs_reserve)";
        case LG_HOOK_SERVICE_BUS:
            return e.detail == 1
                       ? "called a method of systemd or logind that changes their state over the bus " + name +
                             " (as systemd-run or systemctl start, stop and kill do)"
                       : "wrote to the bus " + name +
                             " what cannot be read as whole D-Bus messages (a header cut between writes, a splice, "
                             "or too many messages at once)";
        case LG_HOOK_ENGINE_API: {
            const char* what = "change";
            switch (e.detail) {
                case LG_ENGINE_REMOVE: what = "remove"; break;
                case LG_ENGINE_KILL: what = "kill"; break;
                case LG_ENGINE_STOP: what = "stop"; break;
                case LG_ENGINE_RESTART: what = "restart"; break;
                case LG_ENGINE_PAUSE: what = "pause"; break;
                case LG_ENGINE_UPDATE: what = "update"; break;
                case LG_ENGINE_EXEC: what = "run a command in"; break;
                case LG_ENGINE_ATTACH: what = "attach to"; break;
                case LG_ENGINE_ARCHIVE: what = "copy files into"; break;
                case LG_ENGINE_RENAME: what = "rename"; break;
                default: break;
            }
            return std::string("asked the container engine at ") + name + " to " + what +
                   " a container that holds a protected process";
        }
        case LG_HOOK_MULTIPLEXER:
            return "connected to the terminal multiplexer server " + std::to_string(e.target_pid) +
                   " (socket " + name + "), which runs outside the session what a client sends it";
        case LG_HOOK_USER_COUNTS: {
            const char* what = "a count";
            const char* limit = "";
            switch (e.detail) {
                case LG_USER_COUNT_INOTIFY_INSTANCES: what = "an inotify instance"; limit = "fs.inotify.max_user_instances"; break;
                case LG_USER_COUNT_INOTIFY_WATCHES: what = "an inotify watch"; limit = "fs.inotify.max_user_watches"; break;
                case LG_USER_COUNT_FANOTIFY_GROUPS: what = "a fanotify group"; limit = "fs.fanotify.max_user_groups"; break;
                case LG_USER_COUNT_FANOTIFY_MARKS: what = "a fanotify mark"; limit = "fs.fanotify.max_user_marks"; break;
            }
            return std::string("made ") + what + " from the last eighth of its user's " + limit + " (" + obj +
                   "), kept for processes outside sessions";
        }
        case LG_HOOK_OOM: {
            std::uint32_t kind = e.detail & LG_OOM_KIND_MASK;
            if (kind == LG_OOM_SCORE_WRITE)
                return "opened /proc/" + std::to_string(e.target_pid) + "/" + name + written +
                       " (session members stay the OOM killer's first choice)";
            std::string adj = std::to_string(static_cast<std::int64_t>(e.object_id) - 1000);
            std::string victim = target_string(e);
            if (kind == LG_OOM_PROTECTED_KILLED)
                return "ran out of memory, and the OOM killer took protected process " + victim +
                       " (oom_score_adj " + adj + ")";
            return "ran out of memory, and the OOM killer took session member " + victim + " (oom_score_adj " +
                   adj + ")";
        }
        case LG_HOOK_PORT:
            return std::string("bound ") + (e.detail == 17 ? "UDP" : "TCP") + " port " + obj +
                   ", which a protected service listens on";
        case LG_HOOK_TERMINAL: {
            char cmd[16];
            std::snprintf(cmd, sizeof(cmd), "0x%x", e.detail);
            return std::string("used terminal ioctl ") + cmd + " (input, settings, foreground group or hangup) on device " +
                   std::to_string(e.object_id >> 20) + ":" + std::to_string(e.object_id & 0xfffff) +
                   ", the terminal of " + (e.target_pid ? "protected process " + std::to_string(e.target_pid)
                                                          : std::string("a protected process"));
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
    if (e.ns_pid) s += ", " + std::to_string(e.ns_pid) + " in its namespace";
    s += "] " + describe_act(e) + " (session cgroup " + std::to_string(e.session_cgroup_id) + ")";
    return s;
}

namespace {

JournalEvent journal_event(const lg_event& e, std::int64_t offset, const EventDetails* d) {
    JournalEvent j;
    j.time = format_utc(wall_ns(e, offset));
    j.verdict = verdict_name(e.verdict);
    j.hook = hook_name(e.hook);
    j.pid = e.pid;
    j.tid = e.tid;
    j.ns_pid = e.ns_pid;
    j.comm = comm_string(e.comm);
    j.target_pid = e.target_pid;
    j.target_tid = e.target_tid;
    j.target_comm = comm_string(e.target_comm);
    if (e.signal) j.signal = signal_name(e.signal);
    j.signal_number = e.signal;
    j.object_id = e.object_id;
    j.detail = e.detail;
    j.act = describe_act(e);
    j.session_cgroup_id = e.session_cgroup_id;
    if (d) {
        j.details = *d;
        j.target_ns_pid = d->target_ns_pid;
    }
    return j;
}

// An event names the session by its key, or by the name in its details;
// one gathered before its session had a name (the watcher names a process
// session when it first sees it) by the name the filter looks up.
bool names_session(const JournalEvent& e, const JournalFilter& filter) {
    const std::string& session = *filter.session;
    if (std::to_string(e.session_cgroup_id) == session) return true;
    if (e.details && !e.details->session_name.empty()) return e.details->session_name == session;
    return filter.session_name && filter.session_name(e.session_cgroup_id) == session;
}

bool names_session(const JournalSessionEnd& s, const std::string& session) {
    return std::to_string(s.session_cgroup_id) == session || (!s.name.empty() && s.name == session);
}

std::string session_label(std::uint64_t id, const std::string& name) {
    if (!name.empty()) return "session " + name;
    // A process session's key is no cgroup's id.
    return (id & LG_SESSION_PROCESS_BIT ? "session " : "session cgroup ") + std::to_string(id);
}

std::string join_processes(const std::vector<LeftProcess>& processes) {
    std::string out;
    for (const auto& p : processes)
        out += (out.empty() ? "" : ", ") + std::to_string(p.pid) + (p.command.empty() ? "" : " " + p.command);
    return out;
}

std::string format_session_end_text(const JournalSessionEnd& s, bool colour) {
    std::string out = s.time + " " + session_label(s.session_cgroup_id, s.name) + " ended";
    if (!s.command.empty()) out += " (" + s.command + ")";
    out += ": ";
    if (s.refusals == 0) {
        out += "nothing refused";
    } else {
        std::string count = std::to_string(s.refusals) + (s.audited ? " audited, not blocked" : " refused");
        if (colour) count = (s.audited ? "\033[1;33m" : "\033[1;31m") + count + "\033[0m";
        std::string hooks;
        for (const auto& [h, n] : s.per_hook) hooks += (hooks.empty() ? "" : ", ") + h + " " + std::to_string(n);
        out += count + (hooks.empty() ? "" : " (" + hooks + ")");
    }
    if (s.oom_killed) out += "; the OOM killer took " + std::to_string(s.oom_killed) + " of its processes";
    if (!s.reaped.empty())
        out += "; reaped " + std::to_string(s.reaped.size()) + ": " + join_processes(s.reaped);
    if (!s.left_running.empty())
        out += "; left running " + std::to_string(s.left_running.size()) + ": " + join_processes(s.left_running);
    return out;
}

}  // namespace

std::string format_event_json(const lg_event& e, std::int64_t offset, const EventDetails* d) {
    return write_journal_record({journal_event(e, offset, d)});
}

std::string format_repeats_json(const lg_event& first, std::uint64_t count, std::uint64_t last_boot_ns,
                                std::int64_t offset, const std::string& session_name) {
    JournalRepeats r;
    r.session_name = session_name;
    r.of = journal_event(first, offset, nullptr);
    r.count = count;
    lg_event last = first;
    last.boot_ns = last_boot_ns;
    r.until = format_utc(wall_ns(last, offset));
    return write_journal_record({r});
}

std::string format_journal_text(const JournalRecord& record, bool colour) {
    if (const auto* loss = std::get_if<JournalLoss>(&record.body))
        return "liveguard: " + std::to_string(loss->count) + " events lost (ring buffer full; " +
               std::to_string(loss->total) + " in total)";
    if (const auto* end = std::get_if<JournalSessionEnd>(&record.body)) return format_session_end_text(*end, colour);
    if (const auto* r = std::get_if<JournalRepeats>(&record.body)) {
        const JournalEvent& e = r->of;
        return e.time + " " + e.hook + ": " + e.comm + "[" + std::to_string(e.pid) + "] " + e.act +
               " again " + std::to_string(r->count) + (r->count == 1 ? " time" : " times") + " until " +
               r->until + " (" + session_label(e.session_cgroup_id, r->session_name) + "; each " + e.verdict + ")";
    }
    const auto& e = std::get<JournalEvent>(record.body);
    const EventDetails d = e.details.value_or(EventDetails{});
    std::string verdict = e.verdict;
    for (auto& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (colour) verdict = (verdict == "DENIED" ? "\033[1;31m" : "\033[1;33m") + verdict + "\033[0m";
    std::string session = session_label(e.session_cgroup_id, d.session_name);
    std::string s = e.time + " " + verdict + " " + e.hook + ": " + e.comm + "[" + std::to_string(e.pid) +
                    (e.ns_pid ? ", " + std::to_string(e.ns_pid) + " in its namespace" : "") + "] " + e.act + " (" +
                    session + ")";
    std::vector<std::string> more;
    if (e.target_ns_pid)
        more.push_back("target: pid " + std::to_string(e.target_pid) + " on the machine, " +
                       std::to_string(e.target_ns_pid) + " in its namespace");
    if (!d.test.empty()) more.push_back("test: " + d.test);
    if (!d.exe.empty()) more.push_back("exe: " + d.exe);
    else if (d.culprit_gone) more.push_back("exe: (process gone)");
    if (!d.argv.empty()) {
        // As JSON, which is unambiguous where arguments hold spaces or quotes.
        json::ArrayWriter argv;
        for (const auto& a : d.argv) argv.str(a);
        more.push_back("argv: " + argv.done());
    }
    if (!d.parents.empty()) {
        std::string chain;
        for (const auto& p : d.parents)
            chain += (chain.empty() ? "" : " < ") + p.comm + "[" + std::to_string(p.pid) + "]";
        more.push_back("parents: " + chain);
    }
    if (!d.protected_by.empty()) more.push_back("target protected by: " + d.protected_by);
    for (const auto& m : more) s += "\n    " + m;
    return s;
}

std::optional<std::string> render_journal_line(std::string_view line, const JournalFilter& filter, bool json,
                                               bool colour) {
    // JSON unfiltered is the journal as it is: a well-formed line needs no
    // decoding to be passed on, and a machine reading a flood gets it
    // faster.
    if (json && !filter.since && !filter.session)
        return is_journal_record_line(line) ? std::optional(std::string(line)) : std::nullopt;
    auto record = parse_journal_record(line, filter.since);
    if (!record) return std::nullopt;
    // Losses are shown whatever the filter: they may have hidden its events.
    if (const auto* e = std::get_if<JournalEvent>(&record->body)) {
        if (filter.since && e->time < *filter.since) return std::nullopt;
        if (filter.session && !names_session(*e, filter)) return std::nullopt;
    }
    if (const auto* r = std::get_if<JournalRepeats>(&record->body)) {
        if (filter.since && r->until < *filter.since) return std::nullopt;
        if (filter.session && !names_session(r->of, filter) &&
            (r->session_name.empty() || r->session_name != *filter.session))
            return std::nullopt;
    }
    if (const auto* end = std::get_if<JournalSessionEnd>(&record->body)) {
        if (filter.since && end->time < *filter.since) return std::nullopt;
        if (filter.session && !names_session(*end, *filter.session)) return std::nullopt;
    }
    return json ? std::string(line) : format_journal_text(*record, colour);
}

}  // namespace liveguard
