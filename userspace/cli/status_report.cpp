// Gathering the status report and its two forms. The text is for people,
// the JSON for scripts; both are relied on to the byte by the VM suite.
#include "cli/status_report.h"

#include <cstdarg>
#include <cstdio>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/proc.h"
#include "events/event_details.h"
#include "events/event_format.h"
#include "events/session_info.h"
#include "kernel/pinned_maps.h"
#include "kernel/pins.h"
#include "kernel/session_registry.h"
#include "kernel/skipped_runs.h"
#include "service/daemon.h"
#include "sessions/process_sessions.h"

namespace liveguard {
namespace {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* fmt, ...) {
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    int n = std::vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    if (n > 0) {
        std::size_t at = out.size();
        out.resize(at + static_cast<std::size_t>(n) + 1);
        std::vsnprintf(out.data() + at, static_cast<std::size_t>(n) + 1, fmt, again);
        out.resize(at + static_cast<std::size_t>(n));
    }
    va_end(again);
}

std::string quoted_or_null(const std::optional<std::string>& s) { return s ? json::quote(*s) : "null"; }

std::string protected_by(const lg_protected& mark) {
    if (mark.source == LG_SOURCE_LIVEGUARD) return "liveguard itself (its watcher or a root run)";
    if (mark.source) return "source #" + std::to_string(mark.source);
    return "command line";
}

const char* inheritance(const lg_protected& mark) {
    if (mark.flags & LG_PROTECT_INHERITED) return " (inherited at fork)";
    if (mark.flags & LG_PROTECT_INHERIT) return " (children inherit)";
    return "";
}

void append_watcher_text(std::string& out, const StatusReport& r) {
    if (!r.watcher) {
        out += "policy watcher: not running\n";
        return;
    }
    appendf(out, "policy watcher: running as pid %d (log %s)\n", *r.watcher, paths::kWatcherLog);
    if (!r.watcher_state) return;
    appendf(out, "  %-4s %-50s %-16s %s\n", "SRC", "TARGET", "PIDS", "CGROUPS");
    for (const auto& t : r.watcher_state->targets) {
        auto f = watcher_target_row(t);
        appendf(out, "  %-4s %-50s %-16s %s\n", f[0].c_str(), f[1].c_str(), f[2].c_str(), f[3].c_str());
        // Each file or directory a glob matched (a unit's and a cgroup
        // target's are its CGROUPS already).
        if (t.kind == "systemd_unit" || t.kind == "cgroup") continue;
        if (t.instances.size() == 1 && t.instances[0] == t.pattern) continue;
        if (t.instances.empty()) appendf(out, "       matches nothing yet\n");
        for (const auto& i : t.instances) appendf(out, "       matched: %s\n", i.c_str());
    }
}

std::string counters_json(const CounterValues& counters) {
    json::ObjectWriter denied;
    for (std::uint32_t h = 0; h < LG_HOOK_COUNT; ++h)
        denied.unum(hook_name(h), counters[LG_COUNTER_DENIED + h]);
    return json::ObjectWriter()
        .raw("denied", denied.done())
        .unum("events_lost", counters[LG_COUNTER_EVENTS_LOST])
        .unum("inherit_failed", counters[LG_COUNTER_INHERIT_FAILED])
        .unum("member_mark_failed", counters[LG_COUNTER_MEMBER_MARK_FAILED])
        .unum("argv_missing", counters[LG_COUNTER_ARGV_MISSING])
        .unum("session_overflow", counters[LG_COUNTER_SESSION_OVERFLOW])
        .unum("session_mark_failed", counters[LG_COUNTER_SESSION_MARK_FAILED])
        .unum("fowners_full", counters[LG_COUNTER_FOWNERS_FULL])
        .unum("protected_pids_full", counters[LG_COUNTER_PROTECTED_PIDS_FULL])
        .done();
}

}  // namespace

StatusReport gather_status() {
    StatusReport r;
    if (!Guard::is_loaded()) return r;
    r.loaded = true;
    PinnedMaps maps = PinnedMaps::open(/*read_only=*/true);
    const std::int64_t boot_offset = boot_to_realtime_offset_ns();
    auto procs = ProtectedSet(maps.protected_tasks.get()).list();
    auto sessions = SessionRegistry(maps.sessions.get(), maps.settings.get()).list();
    auto cgroups = ProtectedCgroups(maps).list();
    if (auto watcher = running_watcher()) r.watcher = watcher->pid;
    if (r.watcher) r.watcher_json = read_watcher_state_json();
    if (r.watcher_json) r.watcher_state = parse_watcher_state(*r.watcher_json);
    r.counters = read_counters(maps.counters.get());
    r.skipped = skipped_runs();
    std::string mount;
    try {
        mount = cgroup2_mount();
    } catch (const Error&) {
    }
    auto path_of = [&](std::uint64_t id) {
        return mount.empty() ? std::nullopt : cgroup_path_of_id(mount, id);
    };
    auto shown_time = [&](std::uint64_t since_boot_ns) { return format_utc(since_boot_ns + boot_offset); };
    for (const auto& p : procs) r.processes.push_back({p, shown_time(p.mark.since_boot_ns)});
    for (const auto& c : cgroups) r.cgroups.push_back({c, shown_time(c.info.since_boot_ns), path_of(c.id)});
    for (const auto& s : sessions) {
        StatusSession row;
        row.id = s.id;
        if (!s.is_process_session()) {
            row.path = path_of(s.id);
            row.members = row.path ? cgroup_member_count(*row.path) : 0;
            r.sessions.push_back(row);
            continue;
        }
        row.kind = s.id == LG_SESSION_OVERFLOW           ? "overflow"
                   : (s.info.flags & LG_SESSION_RUN) ? "run"
                                                       : "auto";
        row.members = session_members(maps.sessions.get(), maps.members.get(), s.id).size();
        row.root_pid = static_cast<pid_t>(s.info.root_pid);
        if (auto info = read_session_info(s.id)) row.name = info->name;
        if (row.name.empty() && row.kind != "overflow") row.name = "session[" + std::to_string(row.root_pid) + "]";
        if (row.root_pid)
            if (auto cmd = read_small_file("/proc/" + std::to_string(row.root_pid) + "/cmdline", 4096))
                for (const auto& a : split_args(*cmd)) row.command += (row.command.empty() ? "" : " ") + a;
        r.sessions.push_back(row);
    }
    r.attach = Guard::loaded_attach().value_or(Attach::Lsm);
    return r;
}

std::string format_status_text(const StatusReport& r) {
    if (!r.loaded) return "liveguard: not loaded (load it with: sudo liveguard-bpf load)\n";
    std::string out;
    if (r.attach == Attach::AuditOnly)
        appendf(out, "liveguard: loaded, AUDIT-ONLY: nothing is refused, attempts are reported (pins in %s)\n",
                pins::kDir);
    else
        appendf(out, "liveguard: loaded, enforcing, attached as %s (pins in %s)\n", attach_name(r.attach),
                pins::kDir);
    appendf(out, "protected processes: %zu\n", r.processes.size());
    for (const auto& [p, since] : r.processes)
        appendf(out, "  %-8d %-16s %-6s since %s  %s%s\n", p.pid, p.comm.c_str(), p.alive ? "alive" : "exited",
                since.c_str(), protected_by(p.mark).c_str(), inheritance(p.mark));
    appendf(out, "protected cgroups: %zu\n", r.cgroups.size());
    for (const auto& [cg, since, path] : r.cgroups)
        appendf(out, "  cgroup %-10llu source #%u  since %s  %s\n", static_cast<unsigned long long>(cg.id),
                cg.info.source, since.c_str(), path ? path->c_str() : "(cgroup removed)");
    append_watcher_text(out, r);
    appendf(out, "sessions: %zu\n", r.sessions.size());
    for (const auto& s : r.sessions) {
        if (s.kind == "cgroup")
            appendf(out, "  cgroup %-10llu %-5zu members  %s\n", static_cast<unsigned long long>(s.id),
                    s.members, s.path ? s.path->c_str() : "(cgroup removed)");
        else if (s.kind == "overflow")
            appendf(out, "  overflow          %-5zu members  (execs whose own session could not be recorded: %llu)\n",
                    s.members, static_cast<unsigned long long>(r.counters[LG_COUNTER_SESSION_OVERFLOW]));
        else
            appendf(out, "  %-6s %-18s %-5zu members  %s\n", s.kind.c_str(), s.name.c_str(), s.members,
                    s.command.c_str());
    }
    std::string refusals;
    for (std::uint32_t h = 0; h < LG_HOOK_COUNT; ++h)
        refusals += std::string(h ? ", " : "") + hook_name(h) + " " +
                    std::to_string(r.counters[LG_COUNTER_DENIED + h]);
    appendf(out, "refusals: %s\n", refusals.c_str());
    appendf(out, "events lost (ring buffer full): %llu\n",
            static_cast<unsigned long long>(r.counters[LG_COUNTER_EVENTS_LOST]));
    if (!r.skipped.empty()) {
        // The kernel's own count; in the fmod_ret form a hook's twin checked
        // what its other program skipped, unless both were busy at once.
        std::string list;
        for (const auto& [prog, n] : r.skipped) list += (list.empty() ? "" : ", ") + prog + " " + std::to_string(n);
        appendf(out, "runs the kernel skipped (program busy on that CPU): %s\n", list.c_str());
    }
    if (r.counters[LG_COUNTER_INHERIT_FAILED])
        appendf(out, "WARNING: %llu children of protected supervisors could not be marked\n",
                static_cast<unsigned long long>(r.counters[LG_COUNTER_INHERIT_FAILED]));
    if (r.counters[LG_COUNTER_SESSION_MARK_FAILED])
        appendf(out, "WARNING: %llu test runners were killed at exec: they could not be marked session members\n",
                static_cast<unsigned long long>(r.counters[LG_COUNTER_SESSION_MARK_FAILED]));
    if (r.counters[LG_COUNTER_FOWNERS_FULL])
        appendf(out, "WARNING: %llu F_SETOWN calls by session members were refused: the file-owner map was full\n",
                static_cast<unsigned long long>(r.counters[LG_COUNTER_FOWNERS_FULL]));
    if (r.counters[LG_COUNTER_PROTECTED_PIDS_FULL])
        appendf(out, "WARNING: %llu protected processes could not be recorded by number: members may write no /proc/<pid>/oom_* file\n",
                static_cast<unsigned long long>(r.counters[LG_COUNTER_PROTECTED_PIDS_FULL]));
    if (r.counters[LG_COUNTER_MEMBER_MARK_FAILED])
        appendf(out, "WARNING: %llu children of session members could not be marked members\n",
                static_cast<unsigned long long>(r.counters[LG_COUNTER_MEMBER_MARK_FAILED]));
    return out;
}

std::string format_status_json(const StatusReport& r) {
    if (!r.loaded) return json::ObjectWriter().boolean("loaded", false).str("pin_dir", pins::kDir).done();
    json::ArrayWriter procs, cgroups, sessions;
    for (const auto& [p, since] : r.processes)
        procs.raw(json::ObjectWriter()
                      .num("pid", p.pid)
                      .str("comm", p.comm)
                      .boolean("alive", p.alive)
                      .str("since", since)
                      .num("source", p.mark.source)
                      .boolean("inherited", p.mark.flags & LG_PROTECT_INHERITED)
                      .boolean("children_inherit", p.mark.flags & LG_PROTECT_INHERIT)
                      .done());
    for (const auto& [cg, since, path] : r.cgroups)
        cgroups.raw(json::ObjectWriter()
                        .raw("path", quoted_or_null(path))
                        .unum("cgroup_id", cg.id)
                        .num("source", cg.info.source)
                        .str("since", since)
                        .done());
    for (const auto& s : r.sessions)
        sessions.raw(json::ObjectWriter()
                         .str("kind", s.kind)
                         .raw("path", quoted_or_null(s.path))
                         .unum("cgroup_id", s.id)
                         .unum("members", s.members)
                         .str("name", s.name)
                         .num("root_pid", s.root_pid)
                         .str("command", s.command)
                         .done());
    return json::ObjectWriter()
        .boolean("loaded", true)
        .str("mode", mode_name(mode_of(r.attach)))
        .str("attach", attach_name(r.attach))
        .str("pin_dir", pins::kDir)
        .raw("protected", procs.done())
        .raw("protected_cgroups", cgroups.done())
        .raw("watcher", r.watcher_json.value_or("null"))
        .raw("sessions", sessions.done())
        .raw("counters", counters_json(r.counters))
        .raw("skipped_runs", [&] {
            json::ObjectWriter w;
            for (const auto& [prog, n] : r.skipped) w.unum(prog, n);
            return w.done();
        }())
        .done();
}

}  // namespace liveguard
