// The watcher's process: its event loop and signals, starting it detached
// from the terminal, and stopping it.
#include "service/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/clock.h"
#include "base/error.h"
#include "base/fd.h"
#include "base/live_environ.h"
#include "base/paths.h"
#include "kernel/environ_offsets.h"
#include "kernel/loader.h"
#include "kernel/map_walk.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_set.h"
#include "policy/policy.h"
#include "events/event_collector.h"
#include "service/run_broker.h"
#include "service/metrics.h"
#include "service/service_manager.h"
#include "sessions/process_sessions.h"
#include "watcher/fs_space.h"
#include "watcher/log.h"
#include "watcher/reconciler.h"
#include "watcher/watcher_state.h"

namespace liveguard {
namespace {

// Torn reads and supervisors not yet started are retried at this pace, for
// at most kMaxRetries rounds before the watcher waits for the next event.
constexpr int kRetryMs = 2;
constexpr int kMaxRetries = 1500;
// How often process sessions are looked for while the policy starts them
// or some are tracked (a root's exit or an event wakes the loop at once).
constexpr int kSessionTickMs = 200;
// How often the files protected processes hold open are looked at, with
// members about and without.
constexpr int kHeldOpenMs = 2000;
constexpr int kHeldOpenIdleMs = 10000;
// Events journalled per turn of the loop: a flood of refusals waits its
// turn behind policy changes and session ends rather than starving them.
constexpr std::size_t kEventBatch = 256;
// How often the counters are looked at for node_exporter's textfile
// collector (rewritten when they changed, and each minute regardless).
constexpr int kMetricsMs = 5000;
constexpr int kMetricsRewriteMs = 60000;

// node_exporter's textfile collector: the counters in the policy's
// directory when it exists. A failure is logged once until it succeeds.
class MetricsTextfile {
public:
    void update(const std::string& dir, bool watcher_running, bool force) {
        // No collector here: nothing gathered, every five seconds.
        struct stat st {};
        if (dir.empty() || ::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
        try {
            std::string text = format_metrics(gather_metrics(watcher_running));
            if (!force && text == last_ && dir == last_dir_) return;
            if (write_metrics_textfile(dir, text)) {
                last_ = std::move(text);
                last_dir_ = dir;
            }
            failing_ = false;
        } catch (const std::exception& e) {
            if (!failing_) watcher_log(std::string("warning: cannot keep the metrics for node_exporter: ") + e.what());
            failing_ = true;
        }
    }

    void remove(const std::string& dir) {
        if (!dir.empty()) ::unlink(metrics_textfile_path(dir).c_str());
        last_.clear();
    }

private:
    std::string last_, last_dir_;
    bool failing_ = false;
};

// The test logs of automatic sessions: a pytest plugin of any user writes
// its own file there (sticky, so none can touch another's).
void prepare_test_log_dirs() {
    ::mkdir(paths::kTestLogDir, 0755);
    ::mkdir(paths::kTestLogByPidDir, 01777);
    ::chmod(paths::kTestLogByPidDir, 01777);
}

// The one line `systemctl status` shows while the watcher runs.
std::string ready_status(const Policy& policy, const std::string& path) {
    auto attach = Guard::loaded_attach();
    std::string form = !attach ? "not loaded"
                       : *attach == Attach::AuditOnly ? "audit-only (not enforcing)"
                                                      : std::string("enforcing, attached as ") + attach_name(*attach);
    return form + "; policy " + path + " applied (" + std::to_string(policy.targets.size()) + " targets)";
}

}  // namespace

int run_watcher(const std::string& policy_path, const std::function<void()>& on_ready) {
    Policy policy = load_policy(policy_path);
    PinnedMaps maps = PinnedMaps::open();
    Reconciler w(policy, PinnedMaps::open());
    // The watcher keeps protection right, so a test session may not stop
    // or trace it any more than the services it watches.
    ProtectedSet(maps).add(::getpid(), LG_SOURCE_LIVEGUARD);
    ServiceManager manager;
    // Each re-read's outcome, for `reload` to wait for and report.
    std::uint64_t reloads = 0;
    std::uint64_t reload_taken_ns = 0;
    auto record_reload = [&](bool applied, const std::string& error) {
        write_reload_outcome({::getpid(), ++reloads, reload_taken_ns, applied, error});
    };

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    UniqueFd sfd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sfd) throw_errno("cannot create a signalfd", errno);

    ::mkdir(paths::kStateDir, 0755);
    prepare_test_log_dirs();
    watcher_log("started with " + policy_path + " (" + std::to_string(w.policy().targets.size()) +
                " targets)");
    // Refusals go to the journal as they happen, with what only a live
    // culprit can tell; process sessions are summarised from it.
    EventCollector collector(maps, kEventBatch);
    warm_environ_symbols();
    publish_environ_offsets(maps.environ_at.get());
    ProcessSessions sessions(maps);
    sessions.on_before_end([&collector] {
        try {
            collector.flush();
        } catch (const std::exception& e) {
            watcher_log(std::string("error: collecting events: ") + e.what());
        }
    });
    sessions.apply_policy(policy);
    RunBroker broker(maps, [&](const BrokeredSession& b) { sessions.adopt(b.id, b.root_pid, b.name); });
    broker.on_sync([&collector] {
        try {
            collector.poll(0);
        } catch (const std::exception& e) {
            watcher_log(std::string("error: collecting events: ") + e.what());
        }
    });
    // For people and `status` only: the watcher is addressed by its socket.
    write_watcher_pid_file(::getpid());
    // It holds a descriptor for each guarded file (up to the guarded-inode
    // map's size) besides its watches and clients: the usual soft limit of
    // 1024 is too few, the hard limit is ours to take.
    if (struct rlimit nofile {}; ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0)
            watcher_log(std::string("warning: cannot raise the open-file limit: ") + std::strerror(errno));
    }
    int retries = 0;
    bool retry = w.apply();
    FsSpace space(maps.fs_space.get());
    space.watch(space_paths(w.policy()), w.policy().fs_reserve);
    auto next_measure = std::chrono::steady_clock::now();
    auto next_held_open = std::chrono::steady_clock::now();
    // A pending retry is due by the clock, whatever else wakes the loop
    // (events, sessions, the socket), so steady wake-ups cannot starve it.
    auto next_retry = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRetryMs);
    on_ready();
    // Only now: a unit ordered after this one, or a script that ran
    // `systemctl start`, finds the guard enforcing the policy.
    manager.ready(ready_status(w.policy(), policy_path));
    bool reload_pending = false;
    MetricsTextfile metrics;
    auto next_metrics = std::chrono::steady_clock::now();
    auto next_metrics_rewrite = next_metrics;
    for (;;) {
        std::vector<struct pollfd> fds = {{w.inotify_fd(), POLLIN, 0}, {sfd.get(), POLLIN, 0},
                                          {broker.fd(), POLLIN, 0}, {collector.fd(), POLLIN, 0}};
        for (int fd : sessions.fds()) fds.push_back({fd, POLLIN, 0});
        bool retrying = retry && retries < kMaxRetries;
        int timeout = retrying ? kRetryMs : sessions.active() ? kSessionTickMs : -1;
        // Free space is measured as often as FsSpace asks while there are
        // members to refuse (sessions of every kind: a root `run` tags its
        // cgroup without the watcher), and each second otherwise, so a
        // session that starts finds it measured.
        if (space.watching()) {
            auto now = std::chrono::steady_clock::now();
            if (now >= next_measure) {
                bool members = read_setting(maps.settings.get(), LG_SETTING_SESSIONS) > 0 || sessions.active();
                int due = space.measure();
                next_measure = now + std::chrono::milliseconds(members ? due : std::max(due, FsSpace::kIdleIntervalMs));
            }
            auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_measure - now).count();
            if (timeout < 0 || wait < timeout) timeout = static_cast<int>(std::max<long long>(wait, 0));
        }
        // The files protected processes open are looked at every two
        // seconds while there are members, so a lock file a restarted
        // service opens is guarded soon after; every ten seconds
        // otherwise.
        {
            auto now = std::chrono::steady_clock::now();
            if (now >= next_held_open) {
                bool members = read_setting(maps.settings.get(), LG_SETTING_SESSIONS) > 0 || sessions.active();
                try {
                    w.refresh_held_open();
                } catch (const std::exception& e) {
                    watcher_log(std::string("error: guarding files protected processes hold open: ") + e.what());
                }
                next_held_open = now + std::chrono::milliseconds(members ? kHeldOpenMs : kHeldOpenIdleMs);
            }
            auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_held_open - now).count();
            if (timeout < 0 || wait < timeout) timeout = static_cast<int>(std::max<long long>(wait, 0));
        }
        // A second of repeated refusals ends: its count is journalled then.
        if (int due = collector.wakeup_ms(); due >= 0 && (timeout < 0 || due < timeout)) timeout = due;
        // Pinged from the loop itself, so a watcher stuck anywhere in it
        // stops answering and systemd restarts it (the guard stays pinned
        // and enforcing meanwhile).
        if (int due = manager.ping_if_due(); due >= 0 && (timeout < 0 || due < timeout)) timeout = due;
        {
            auto now = std::chrono::steady_clock::now();
            if (now >= next_metrics) {
                bool force = now >= next_metrics_rewrite;
                metrics.update(w.policy().metrics_textfile_dir, true, force);
                next_metrics = now + std::chrono::milliseconds(kMetricsMs);
                if (force) next_metrics_rewrite = now + std::chrono::milliseconds(kMetricsRewriteMs);
            }
            auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_metrics - now).count();
            if (timeout < 0 || wait < timeout) timeout = static_cast<int>(std::max<long long>(wait, 0));
        }
        int n = ::poll(fds.data(), fds.size(), timeout);
        if (n < 0 && errno != EINTR) throw_errno("poll failed", errno);
        bool signalled = fds[1].revents & POLLIN;
        if (signalled) {
            struct signalfd_siginfo si {};
            while (::read(sfd.get(), &si, sizeof si) == sizeof si) {
                if (si.ssi_signo == SIGHUP) {
                    reload_taken_ns = boottime_now_ns();
                    manager.reloading();
                    try {
                        Policy p = load_policy(policy_path);
                        manager.ping_if_due();
                        sessions.apply_policy(p);
                        manager.ping_if_due();
                        w.replace_policy(std::move(p));
                        watcher_log("reloaded " + policy_path);
                        // Answered once applied, below.
                        reload_pending = true;
                    } catch (const std::exception& e) {
                        watcher_log(std::string("rejected the new policy, keeping the old one: ") + e.what());
                        record_reload(false, e.what());
                        manager.ready(std::string("rejected the new policy, enforcing the old one: ") + e.what());
                    }
                    // One re-read a turn, applied below before the next is
                    // taken: each answer is about the file it read.
                    break;
                } else {
                    manager.stopping();
                    watcher_log("stopping");
                    // Counters nobody keeps current are not served: a
                    // missing series says the watcher is gone (after an
                    // unload, or a reboot, a file left behind would say
                    // the guard enforces).
                    metrics.remove(w.policy().metrics_textfile_dir);
                    remove_watcher_files();
                    return 0;
                }
            }
        }
        if (fds[2].revents & POLLIN) broker.on_readable();
        try {
            collector.poll(0);
        } catch (const std::exception& e) {
            watcher_log(std::string("error: collecting events: ") + e.what());
        }
        sessions.tick();
        bool events = w.drain_events();
        bool retry_due = retrying && std::chrono::steady_clock::now() >= next_retry;
        if (events || signalled) retries = 0;
        else if (retry_due) ++retries;
        if (events || signalled || retry_due) {
            next_retry = std::chrono::steady_clock::now() + std::chrono::milliseconds(kRetryMs);
            // A failure to apply (a map update refused, say) is logged and
            // retried on the next event; the watcher must not die of it.
            if (reload_pending) manager.ping_if_due();
            try {
                retry = w.apply();
                space.watch(space_paths(w.policy()), w.policy().fs_reserve);
            } catch (const std::exception& e) {
                watcher_log(std::string("error: applying the policy failed: ") + e.what());
                retry = true;
                if (reload_pending) {
                    reload_pending = false;
                    record_reload(false, std::string("applying it failed (retried on the next change): ") + e.what());
                    manager.ready(std::string("applying the new policy failed, retrying: ") + e.what());
                }
            }
        }
        if (reload_pending) {
            reload_pending = false;
            record_reload(true, "");
            manager.ready(ready_status(w.policy(), policy_path));
        }
    }
}

std::optional<SocketOwner> running_watcher() {
    try {
        return socket_owner(paths::kRunSocket);
    } catch (const Error& e) {
        throw Error(std::string("cannot tell which process is the policy watcher: ") + e.what(),
                    std::string("see its log, ") + paths::kWatcherLog + "; the process that listens on " +
                        paths::kRunSocket + " is the watcher (ss -xlp src " + paths::kRunSocket + ")");
    }
}

pid_t start_watcher_daemon(const std::string& policy_path) {
    ::mkdir(paths::kStateDir, 0755);
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC) != 0) throw_errno("cannot create a pipe", errno);
    UniqueFd rd(pipefd[0]), wr(pipefd[1]);
    pid_t first = ::fork();
    if (first < 0) throw_errno("cannot fork the watcher", errno);
    if (first == 0) {
        rd.reset();
        ::setsid();
        pid_t second = ::fork();
        if (second != 0) ::_exit(second < 0 ? 1 : 0);
        // The daemon: no terminal, output to its log.
        int log = ::open(paths::kWatcherLog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) ::dup2(null, 0);
        if (log >= 0) {
            ::dup2(log, 1);
            ::dup2(log, 2);
        }
        ::chdir("/");
        int rc = 1;
        try {
            rc = run_watcher(policy_path, [&] {
                pid_t self = ::getpid();
                (void)!::write(wr.get(), &self, sizeof self);
                wr.reset();
            });
        } catch (const std::exception& e) {
            std::string msg = e.what();
            watcher_log("error: " + msg);
            if (wr) (void)!::write(wr.get(), msg.data(), msg.size());
        }
        ::_exit(rc);
    }
    wr.reset();
    ::waitpid(first, nullptr, 0);
    char buf[1024];
    ssize_t n = ::read(rd.get(), buf, sizeof buf);
    if (n == sizeof(pid_t)) {
        pid_t pid;
        std::memcpy(&pid, buf, sizeof pid);
        return pid;
    }
    throw Error("the policy watcher did not start: " +
                    (n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("it exited")),
                std::string("see ") + paths::kWatcherLog);
}

namespace {

// Through the pidfd, so the signal reaches the process that listened or
// nobody, never one that took its pid since.
bool send_signal(const SocketOwner& w, int sig) {
    return ::syscall(SYS_pidfd_send_signal, w.pidfd.get(), sig, nullptr, 0) == 0;
}

[[noreturn]] void throw_signal_failed(const SocketOwner& w, const std::string& what, int e) {
    throw_errno("cannot " + what + " the policy watcher (pid " + std::to_string(w.pid) + ")", e,
                e == EPERM ? "run it as root from outside any test session: members may not signal liveguard"
                           : std::string());
}

// Whether the process exited within `ms`: its pidfd becomes readable then.
bool exits_within(const SocketOwner& w, int ms) {
    struct pollfd p {w.pidfd.get(), POLLIN, 0};
    int n;
    while ((n = ::poll(&p, 1, ms)) < 0 && errno == EINTR) {}
    return n > 0;
}

}  // namespace

std::optional<SocketOwner> reload_watcher() {
    auto w = running_watcher();
    if (!w) return std::nullopt;
    if (!send_signal(*w, SIGHUP)) {
        if (errno == ESRCH) return std::nullopt;  // it exited meanwhile
        throw_signal_failed(*w, "signal", errno);
    }
    return w;
}

bool stop_watcher() {
    auto w = running_watcher();
    if (!w) return false;
    if (!send_signal(*w, SIGTERM)) {
        if (errno == ESRCH) return true;  // it exited meanwhile
        throw_signal_failed(*w, "stop", errno);
    }
    if (exits_within(*w, 5000)) return true;
    // Killed, it cannot clean up after itself.
    send_signal(*w, SIGKILL);
    exits_within(*w, 1000);
    remove_watcher_files();
    return true;
}

}  // namespace liveguard
