// What each subcommand does once parsed.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <sstream>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/privileges.h"
#include "base/proc.h"
#include "cli/cli.h"
#include "cli/doctor.h"
#include "events/event_collector.h"
#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/event_stream.h"
#include "kernel/counters.h"
#include "kernel/libbpf_log.h"
#include "kernel/loader.h"
#include "kernel/pinned_maps.h"
#include "kernel/pins.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"
#include "policy/policy.h"
#include "watcher/watcher.h"

namespace liveguard {
namespace {

std::atomic<bool> g_stop{false};

void request_stop(int) { g_stop.store(true); }

// The policy `load` applies: --config, else the default file if present.
std::optional<Policy> policy_for_load(const CliCommand& c) {
    std::string path = c.config.value_or(kDefaultPolicyPath);
    if (!c.config && ::access(path.c_str(), F_OK) != 0) return std::nullopt;
    try {
        return load_policy(path);
    } catch (const PolicyError& e) {
        throw Error(e.what(), "fix the policy (liveguard-bpf check-config " + path +
                                  "); nothing was loaded or changed", 2);
    }
}

int cmd_load(const CliCommand& c) {
    require_root("load");
    // A bad policy must change nothing, so it is read before anything loads.
    auto policy = policy_for_load(c);
    if (c.foreground && !policy)
        throw Error(std::string("--foreground runs the policy watcher, but there is no policy (") +
                        kDefaultPolicyPath + " does not exist)",
                    "give one: liveguard-bpf load --foreground --config FILE", 2);
    LoadResult r = Guard::load(c.audit_only ? Mode::AuditOnly : Mode::Enforce, !c.audit_only);
    if (r.outcome == LoadOutcome::AlreadyLoaded) {
        std::printf("liveguard is already loaded (%s mode, pins in %s)\n", mode_name(r.mode), pins::kDir);
    } else if (!r.fallback_reason.empty()) {
        std::string cause = r.fallback_reason.substr(0, r.fallback_reason.find('\n'));
        std::fprintf(stderr,
                     "liveguard-bpf: WARNING: this kernel will not run BPF LSM programs, so NOTHING "
                     "WILL BE REFUSED.\n"
                     "  cause: %s\n"
                     "  liveguard is loaded in AUDIT-ONLY mode instead: what test sessions try against\n"
                     "  protected processes is reported (liveguard-bpf events), not blocked.\n"
                     "  `liveguard-bpf doctor` says what the kernel needs for enforcement.\n",
                     cause.c_str());
        std::printf("liveguard loaded in audit-only mode, state pinned in %s\n", pins::kDir);
    } else if (r.mode == Mode::AuditOnly) {
        std::printf("liveguard loaded in audit-only mode (nothing is refused; attempts are reported), "
                    "state pinned in %s\n", pins::kDir);
    } else {
        std::printf("liveguard loaded: enforcing (%zu programs attached), state pinned in %s\n",
                    r.programs, pins::kDir);
    }
    std::fflush(stdout);
    if (!policy) return 0;
    if (!policy->session_tags.empty()) {
        PinnedMaps maps = PinnedMaps::open();
        SessionRegistry reg(maps.sessions.get(), maps.settings.get());
        std::string mount = cgroup2_mount();
        for (const auto& dir : policy->session_tags) {
            try {
                reg.tag(mount, normalize_path(dir));
                std::printf("tagged %s as a session ([sessions] tag)\n", dir.c_str());
            } catch (const Error& e) {
                std::fprintf(stderr, "liveguard-bpf: warning: [sessions] tag %s: %s\n", dir.c_str(), e.what());
            }
        }
    }
    if (auto pid = running_watcher()) {
        std::string running_config;
        if (auto state = read_small_file(paths::kWatcherState)) {
            auto at = state->find("\"config\":\"");
            if (at != std::string::npos) {
                at += 10;
                running_config = state->substr(at, state->find('"', at) - at);
            }
        }
        if (!running_config.empty() && running_config != policy->path)
            throw Error("a policy watcher is already running (pid " + std::to_string(*pid) +
                            ") with " + running_config + ", not " + policy->path,
                        "to switch policies: sudo liveguard-bpf unload, then load --config " +
                            policy->path);
        std::printf("the policy watcher is already running (pid %d); to re-read the policy: "
                    "liveguard-bpf reload\n", *pid);
        return 0;
    }
    if (c.foreground) {
        return run_watcher(policy->path, [&] {
            std::printf("policy %s applied; watching (foreground)\n", policy->path.c_str());
            std::fflush(stdout);
        });
    }
    pid_t pid = start_watcher_daemon(policy->path);
    std::printf("policy %s applied (%zu targets); watcher running as pid %d, log in %s\n",
                policy->path.c_str(), policy->targets.size(), pid, paths::kWatcherLog);
    return 0;
}

int cmd_check_config(const CliCommand& c) {
    try {
        Policy p = load_policy(*c.config);
        std::printf("%s: ok, %zu targets\n", p.path.c_str(), p.targets.size());
        for (const auto& t : p.targets)
            std::printf("  [[protect]] #%u (line %d): %s\n", t.source, t.line, t.describe().c_str());
        return 0;
    } catch (const PolicyError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
}

int cmd_reload() {
    require_root("reload");
    auto pid = running_watcher();
    if (!pid)
        throw Error("no policy watcher is running",
                    "start one: sudo liveguard-bpf load --config FILE");
    if (::kill(*pid, SIGHUP) != 0) throw_errno("cannot signal the watcher", errno);
    std::printf("asked the watcher (pid %d) to re-read its policy; see %s\n", *pid, paths::kWatcherLog);
    return 0;
}

int cmd_unload() {
    require_root("unload");
    // Anything that will refuse us (a test session may not change
    // liveguard) must do so before the watcher is stopped: all or nothing.
    if (Guard::is_loaded()) PinnedMaps::require_write_access();
    if (stop_watcher()) std::printf("policy watcher stopped\n");
    UnloadReport r = Guard::unload();
    if (r.removed.empty()) {
        std::printf("liveguard is not loaded; nothing to do\n");
        return 0;
    }
    std::printf("liveguard unloaded: enforcement stopped, %zu pins removed from %s\n",
                r.removed.size(), pins::kDir);
    return 0;
}

int cmd_protect(const CliCommand& c, bool add) {
    require_root(c.name);
    PinnedMaps maps = PinnedMaps::open();
    ProtectedSet set(maps);
    if (add) {
        pid_t tgid = c.pid;
        AddOutcome o = set.add(c.pid, 0, &tgid);
        std::string who = std::to_string(tgid);
        if (tgid != c.pid) who += " (the process of thread " + std::to_string(c.pid) + ")";
        std::printf(o == AddOutcome::Added ? "protected %s\n" : "%s was already protected\n",
                    who.c_str());
        return 0;
    }
    if (set.remove(c.pid)) {
        std::printf("unprotected %d\n", c.pid);
        return 0;
    }
    std::printf("%d was not protected; nothing changed\n", c.pid);
    return 0;
}

int cmd_tag(const CliCommand& c, bool add) {
    require_root(c.name);
    PinnedMaps maps = PinnedMaps::open();
    SessionRegistry reg(maps.sessions.get(), maps.settings.get());
    std::string dir = normalize_path(c.cgroup_dir);
    if (add) {
        std::uint64_t id = 0;
        TagOutcome o = reg.tag(cgroup2_mount(), dir, &id);
        std::printf(o == TagOutcome::Tagged ? "tagged %s (cgroup id %llu)\n"
                                            : "%s (cgroup id %llu) was already tagged\n",
                    dir.c_str(), static_cast<unsigned long long>(id));
        return 0;
    }
    if (reg.untag(dir)) {
        std::printf("untagged %s\n", dir.c_str());
        return 0;
    }
    std::printf("%s was not tagged; nothing changed\n", dir.c_str());
    return 0;
}

int cmd_status(const CliCommand& c) {
    require_root("status");
    if (!Guard::is_loaded()) {
        if (c.json)
            std::printf("%s\n", json::ObjectWriter()
                                    .boolean("loaded", false)
                                    .str("pin_dir", pins::kDir)
                                    .done()
                                    .c_str());
        else
            std::printf("liveguard: not loaded (load it with: sudo liveguard-bpf load)\n");
        return 0;
    }
    PinnedMaps maps = PinnedMaps::open(/*read_only=*/true);
    const std::int64_t boot_offset = boot_to_realtime_offset_ns();
    auto procs = ProtectedSet(maps.protected_tasks.get()).list();
    auto sessions = SessionRegistry(maps.sessions.get(), maps.settings.get()).list();
    auto cgroups = ProtectedCgroups(maps).list();
    auto watcher = running_watcher();
    auto watcher_state = watcher ? read_small_file(paths::kWatcherState) : std::nullopt;
    auto watcher_targets = watcher ? read_small_file(paths::kWatcherTargets) : std::nullopt;
    CounterValues counters = read_counters(maps.counters.get());
    std::string mount;
    try {
        mount = cgroup2_mount();
    } catch (const Error&) {
    }
    struct SessionRow {
        std::uint64_t id;
        std::optional<std::string> path;
        std::size_t members;
    };
    std::vector<SessionRow> rows;
    for (const auto& s : sessions) {
        auto path = mount.empty() ? std::nullopt : cgroup_path_of_id(mount, s.id);
        rows.push_back({s.id, path, path ? cgroup_member_count(*path) : 0});
    }

    if (c.json) {
        std::string p = "[";
        for (std::size_t i = 0; i < procs.size(); ++i) {
            if (i) p += ",";
            p += json::ObjectWriter()
                     .num("pid", procs[i].pid)
                     .str("comm", procs[i].comm)
                     .boolean("alive", procs[i].alive)
                     .str("since", format_utc(procs[i].mark.since_boot_ns + boot_offset))
                     .num("source", procs[i].mark.source)
                     .boolean("inherited", procs[i].mark.flags & LG_PROTECT_INHERITED)
                     .boolean("children_inherit", procs[i].mark.flags & LG_PROTECT_INHERIT)
                     .done();
        }
        p += "]";
        std::string s = "[";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (i) s += ",";
            json::ObjectWriter w;
            if (rows[i].path) w.str("path", *rows[i].path);
            else w.raw("path", "null");
            s += w.unum("cgroup_id", rows[i].id).unum("members", rows[i].members).done();
        }
        s += "]";
        std::string pc = "[";
        for (std::size_t i = 0; i < cgroups.size(); ++i) {
            if (i) pc += ",";
            auto path = mount.empty() ? std::nullopt : cgroup_path_of_id(mount, cgroups[i].id);
            json::ObjectWriter w;
            if (path) w.str("path", *path);
            else w.raw("path", "null");
            pc += w.unum("cgroup_id", cgroups[i].id)
                      .num("source", cgroups[i].info.source)
                      .str("since", format_utc(cgroups[i].info.since_boot_ns + boot_offset))
                      .done();
        }
        pc += "]";
        std::string wj = watcher_state && !watcher_state->empty() ? *watcher_state : "null";
        while (!wj.empty() && wj.back() == '\n') wj.pop_back();
        json::ObjectWriter dw;
        for (std::uint32_t h = 0; h < LG_HOOK_COUNT; ++h)
            dw.unum(hook_name(h), counters[LG_COUNTER_DENIED + h]);
        std::string denied = dw.done();
        std::string cnt = json::ObjectWriter()
                              .raw("denied", denied)
                              .unum("events_lost", counters[LG_COUNTER_EVENTS_LOST])
                              .unum("inherit_failed", counters[LG_COUNTER_INHERIT_FAILED])
                              .unum("member_mark_failed", counters[LG_COUNTER_MEMBER_MARK_FAILED])
                              .unum("argv_missing", counters[LG_COUNTER_ARGV_MISSING])
                              .done();
        std::printf("%s\n", json::ObjectWriter()
                                .boolean("loaded", true)
                                .str("mode", mode_name(Guard::loaded_mode().value_or(Mode::Enforce)))
                                .str("pin_dir", pins::kDir)
                                .raw("protected", p)
                                .raw("protected_cgroups", pc)
                                .raw("watcher", wj)
                                .raw("sessions", s)
                                .raw("counters", cnt)
                                .done()
                                .c_str());
        return 0;
    }
    Mode mode = Guard::loaded_mode().value_or(Mode::Enforce);
    std::printf("liveguard: loaded, %s (pins in %s)\n",
                mode == Mode::Enforce ? "enforcing" : "AUDIT-ONLY: nothing is refused, attempts are reported",
                pins::kDir);
    std::printf("protected processes: %zu\n", procs.size());
    for (const auto& p : procs)
        std::printf("  %-8d %-16s %-6s since %s  %s%s\n", p.pid, p.comm.c_str(),
                    p.alive ? "alive" : "exited",
                    format_utc(p.mark.since_boot_ns + boot_offset).c_str(),
                    p.mark.source == LG_SOURCE_LIVEGUARD ? "liveguard's policy watcher"
                    : p.mark.source                      ? ("source #" + std::to_string(p.mark.source)).c_str()
                                                         : "command line",
                    p.mark.flags & LG_PROTECT_INHERITED   ? " (inherited at fork)"
                    : p.mark.flags & LG_PROTECT_INHERIT ? " (children inherit)"
                                                          : "");
    std::printf("protected cgroups: %zu\n", cgroups.size());
    for (const auto& cg : cgroups) {
        auto path = mount.empty() ? std::nullopt : cgroup_path_of_id(mount, cg.id);
        std::printf("  cgroup %-10llu source #%u  since %s  %s\n",
                    static_cast<unsigned long long>(cg.id), cg.info.source,
                    format_utc(cg.info.since_boot_ns + boot_offset).c_str(),
                    path ? path->c_str() : "(cgroup removed)");
    }
    if (watcher) {
        std::printf("policy watcher: running as pid %d (log %s)\n", *watcher, paths::kWatcherLog);
        if (watcher_targets) {
            std::printf("  %-4s %-50s %-16s %s\n", "SRC", "TARGET", "PIDS", "CGROUPS");
            std::istringstream in(*watcher_targets);
            std::string line;
            while (std::getline(in, line)) {
                std::vector<std::string> f;
                std::istringstream ls(line);
                std::string field;
                while (std::getline(ls, field, '\t')) f.push_back(field);
                if (f.size() == 4)
                    std::printf("  %-4s %-50s %-16s %s\n", f[0].c_str(), f[1].c_str(),
                                f[2].c_str(), f[3].c_str());
            }
        }
    } else {
        std::printf("policy watcher: not running\n");
    }
    std::printf("sessions: %zu\n", rows.size());
    for (const auto& r : rows)
        std::printf("  cgroup %-10llu %-5zu members  %s\n", static_cast<unsigned long long>(r.id),
                    r.members, r.path ? r.path->c_str() : "(cgroup removed)");
    std::string refusals;
    for (std::uint32_t h = 0; h < LG_HOOK_COUNT; ++h)
        refusals += std::string(h ? ", " : "") + hook_name(h) + " " +
                    std::to_string(counters[LG_COUNTER_DENIED + h]);
    std::printf("refusals: %s\n", refusals.c_str());
    std::printf("events lost (ring buffer full): %llu\n",
                static_cast<unsigned long long>(counters[LG_COUNTER_EVENTS_LOST]));
    if (counters[LG_COUNTER_INHERIT_FAILED])
        std::printf("WARNING: %llu children of protected supervisors could not be marked\n",
                    static_cast<unsigned long long>(counters[LG_COUNTER_INHERIT_FAILED]));
    if (counters[LG_COUNTER_MEMBER_MARK_FAILED])
        std::printf("WARNING: %llu children of session members could not be marked members\n",
                    static_cast<unsigned long long>(counters[LG_COUNTER_MEMBER_MARK_FAILED]));
    return 0;
}

// "--since" as the ISO 8601 form events carry, which orders as text.
std::string since_as_iso(const std::string& since) {
    if (since.size() >= 2 && std::isdigit(static_cast<unsigned char>(since[0])) &&
        since.find('T') == std::string::npos) {
        char unit = since.back();
        std::uint64_t n = std::strtoull(since.c_str(), nullptr, 10);
        std::uint64_t mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : 0;
        if (mult && since.find_first_not_of("0123456789") == since.size() - 1) {
            std::uint64_t now = realtime_now_ns();
            std::uint64_t back = n * mult * 1000000000ull;
            return format_utc(back < now ? now - back : 0);
        }
    }
    if (since.size() >= 20 && since[4] == '-' && since[10] == 'T' && since.back() == 'Z') return since;
    throw Error("--since " + since + ": not a time",
                "give an ISO 8601 UTC time (2026-11-30T17:00:00Z) or an age (30s, 10m, 2h, 1d)", 2);
}

int cmd_events(const CliCommand& c) {
    require_root("events");
    std::optional<std::string> since;
    if (c.since) since = since_as_iso(*c.since);
    PinnedMaps maps = PinnedMaps::open();
    // Journal lines are the output: lines other consumers (a `run` ending)
    // wrote are shown as well as the ones this one collects.
    JournalReader reader(since.has_value());
    EventCollector collector(maps);
    bool colour = !c.json && ::isatty(STDOUT_FILENO);
    auto show = [&] {
        for (const auto& line : reader.read_new()) {
            auto obj = json::parse_object(line);
            if (!obj) continue;
            bool lost = obj->count("lost") > 0;
            if (!lost && since && (*obj)["time"] < *since) continue;
            if (!lost && c.session && (*obj)["session_name"] != *c.session &&
                (*obj)["session_cgroup_id"] != *c.session)
                continue;
            std::string out = c.json ? line : format_journal_text(*obj, colour);
            std::fputs((out + "\n").c_str(), stdout);
        }
        std::fflush(stdout);
    };
    struct sigaction sa {};
    sa.sa_handler = request_stop;
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    if (c.no_follow) {
        collector.poll(0);
        show();
        return 0;
    }
    while (!g_stop.load()) {
        collector.poll(200);
        show();
    }
    collector.poll(0);
    show();
    return 0;
}

int cmd_doctor(const CliCommand& c) {
    DoctorReport r = run_doctor();
    std::fputs((c.json ? format_doctor_json(r) + "\n" : format_doctor_text(r)).c_str(), stdout);
    return r.enforcement_possible() ? 0 : 1;
}

}  // namespace

int execute(const CliCommand& c) {
    LibbpfLogCapture::set_verbose(c.verbose);
    if (c.name == "load") return cmd_load(c);
    if (c.name == "check-config") return cmd_check_config(c);
    if (c.name == "reload") return cmd_reload();
    if (c.name == "unload") return cmd_unload();
    if (c.name == "protect") return cmd_protect(c, true);
    if (c.name == "unprotect") return cmd_protect(c, false);
    if (c.name == "tag") return cmd_tag(c, true);
    if (c.name == "untag") return cmd_tag(c, false);
    if (c.name == "run") {
        RunOptions opts = c.run;
        // The policy's [sessions] parent, when a default policy exists.
        if (::access(kDefaultPolicyPath, F_OK) == 0) {
            try {
                opts.parent = load_policy(kDefaultPolicyPath).session_parent;
            } catch (const PolicyError& e) {
                std::fprintf(stderr, "liveguard-bpf: warning: ignoring [sessions] of %s: %s\n",
                             kDefaultPolicyPath, e.what());
            }
        }
        return run_session(opts);
    }
    if (c.name == "status") return cmd_status(c);
    if (c.name == "events") return cmd_events(c);
    if (c.name == "doctor") return cmd_doctor(c);
    throw Error("unknown command " + c.name, "see liveguard-bpf --help", 2);
}

}  // namespace liveguard
