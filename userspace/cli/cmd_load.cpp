// The guard's lifecycle and its policy: load (with the policy watcher),
// check-config, reload and unload.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/paths.h"
#include "base/privileges.h"
#include "cli/commands.h"
#include "kernel/loader.h"
#include "kernel/pinned_maps.h"
#include "kernel/pins.h"
#include "kernel/session_registry.h"
#include "policy/policy.h"
#include "service/daemon.h"
#include "watcher/watcher_state.h"

namespace liveguard {
namespace {

// How long `reload` waits for the watcher's answer.
constexpr int kReloadWaitMs = 60 * 1000;

// The policy `load` applies: --config, else the default file if present.
std::optional<Policy> policy_for_load(const LoadOptions& o) {
    std::string path = o.config.value_or(kDefaultPolicyPath);
    if (!o.config && ::access(path.c_str(), F_OK) != 0) return std::nullopt;
    try {
        return load_policy(path);
    } catch (const PolicyError& e) {
        throw Error(e.what(), "fix the policy (liveguard-bpf check-config " + path +
                                  "); nothing was loaded or changed", 2);
    }
}

void print_load_result(const LoadResult& r) {
    for (const auto& why : r.refused) {
        std::string cause = why.substr(0, why.find('\n'));
        std::fprintf(stderr, "liveguard-bpf: the %s; trying the next form\n", cause.c_str());
    }
    if (r.outcome == LoadOutcome::AlreadyLoaded) {
        std::printf("liveguard is already loaded (%s mode, pins in %s)\n", attach_name(r.attach), pins::kDir);
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
    } else if (r.attach == Attach::AuditOnly) {
        std::printf("liveguard loaded in audit-only mode (nothing is refused; attempts are reported), "
                    "state pinned in %s\n", pins::kDir);
    } else {
        std::printf("liveguard loaded: enforcing (%zu programs attached as %s: %s), state pinned in %s\n",
                    r.programs, attach_name(r.attach), r.reason.c_str(), pins::kDir);
        for (const auto& u : r.uncovered)
            std::fprintf(stderr, "liveguard-bpf: warning: not enforced on this kernel: %s\n", u.c_str());
    }
    std::fflush(stdout);
}

// [sessions] tag: a directory that cannot be tagged is warned about, and
// the rest of the policy still applies.
void tag_policy_sessions(const Policy& policy) {
    PinnedMaps maps = PinnedMaps::open();
    SessionRegistry reg(maps.sessions.get(), maps.settings.get(), maps.members.get());
    std::string mount = cgroup2_mount();
    for (const auto& dir : policy.session_tags) {
        try {
            reg.tag(mount, normalize_path(dir));
            std::printf("tagged %s as a session ([sessions] tag)\n", dir.c_str());
        } catch (const Error& e) {
            std::fprintf(stderr, "liveguard-bpf: warning: [sessions] tag %s: %s\n", dir.c_str(), e.what());
        }
    }
}

}  // namespace

int run_command(const LoadOptions& o) {
    require_root("load");
    // A bad policy must change nothing, so it is read before anything loads.
    auto policy = policy_for_load(o);
    if (o.foreground && !policy)
        throw Error(std::string("--foreground runs the policy watcher, but there is no policy (") +
                        kDefaultPolicyPath + " does not exist)",
                    "give one: liveguard-bpf load --foreground --config FILE", 2);
    if (o.audit_only && o.attach && *o.attach != "audit-only")
        throw Error("--audit-only and --attach " + *o.attach + " contradict each other",
                    "give one of them", 2);
    std::optional<Attach> forced;
    if (o.audit_only || o.attach == "audit-only") forced = Attach::AuditOnly;
    else if (o.attach == "lsm") forced = Attach::Lsm;
    else if (o.attach == "fmod_ret") forced = Attach::FmodRet;
    print_load_result(Guard::load(forced));
    if (!policy) return 0;
    if (!policy->session_tags.empty()) tag_policy_sessions(*policy);
    if (auto watcher = running_watcher()) {
        pid_t pid = watcher->pid;
        auto state = read_watcher_state();
        if (state && !state->config.empty() && state->config != policy->path)
            throw Error("a policy watcher is already running (pid " + std::to_string(pid) +
                            ") with " + state->config + ", not " + policy->path,
                        "to switch policies: sudo liveguard-bpf unload, then load --config " +
                            policy->path);
        std::printf("the policy watcher is already running (pid %d); to re-read the policy: "
                    "liveguard-bpf reload\n", pid);
        return 0;
    }
    if (o.foreground) {
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

int run_command(const CheckConfigOptions& o) {
    try {
        Policy p = load_policy(o.file);
        std::printf("%s: ok, %zu targets\n", p.path.c_str(), p.targets.size());
        for (const auto& t : p.targets)
            std::printf("  [[protect]] #%u (line %d): %s\n", t.source, t.line, t.describe().c_str());
        return 0;
    } catch (const PolicyError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
}

int run_command(const ReloadOptions&) {
    require_root("reload");
    // Only a re-read the watcher took after this request answers it (an
    // earlier one may have read the file before it was edited).
    std::uint64_t asked_ns = boottime_now_ns();
    auto watcher = reload_watcher();
    if (!watcher)
        throw Error(std::string("no policy watcher is running (none listens on ") + paths::kRunSocket + ")",
                    "start one: sudo liveguard-bpf load --config FILE");
    const pid_t* pid = &watcher->pid;
    // The watcher answers between two turns of its loop; a policy with many
    // targets takes a while to resolve, so the wait is long.
    for (int waited_ms = 0; waited_ms < kReloadWaitMs; waited_ms += 50) {
        auto now = read_reload_outcome();
        if (now && now->pid == *pid && now->taken_ns >= asked_ns) {
            if (!now->applied)
                throw Error("the watcher (pid " + std::to_string(*pid) +
                                ") rejected the new policy and keeps enforcing the old one: " + now->error,
                            "fix it (liveguard-bpf check-config FILE says what is wrong), then reload again");
            auto state = read_watcher_state();
            std::printf("the watcher (pid %d) re-read %s and applied it", *pid,
                        state ? state->config.c_str() : "its policy");
            if (state) std::printf(" (%zu targets)", state->targets.size());
            std::printf("\n");
            return 0;
        }
        // Its pidfd turns readable when it exits: no answer will come.
        struct pollfd exited {watcher->pidfd.get(), POLLIN, 0};
        if (::poll(&exited, 1, 50) > 0)
            throw Error("the watcher (pid " + std::to_string(*pid) + ") exited before it answered",
                        std::string("see its log, ") + paths::kWatcherLog + ", and start it again");
    }
    throw Error("asked the watcher (pid " + std::to_string(*pid) + ") to re-read its policy, but it did not answer in " +
                    std::to_string(kReloadWaitMs / 1000) + " s",
                std::string("see its log, ") + paths::kWatcherLog);
}

int run_command(const UnloadOptions&) {
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

}  // namespace liveguard
