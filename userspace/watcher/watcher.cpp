#include "watcher/watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fd.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/proc.h"
#include "kernel/exec_words.h"
#include "kernel/guarded_inodes.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "policy/policy.h"
#include "policy/resolver.h"

namespace liveguard {
namespace {

constexpr std::uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                                     IN_CLOSE_WRITE | IN_MODIFY | IN_DELETE_SELF | IN_ATTRIB;
constexpr std::uint32_t kCgroupWatchMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                                           IN_DELETE_SELF;
// Torn reads and supervisors not yet started are retried at this pace, for
// at most kMaxRetries rounds before the watcher waits for the next event.
constexpr int kRetryMs = 2;
constexpr int kMaxRetries = 1500;

void log_line(const std::string& what) {
    std::string t = format_utc(realtime_now_ns());
    std::fprintf(stderr, "%s liveguard-bpf watcher: %s\n", t.c_str(), what.c_str());
    std::fflush(stderr);
}

void write_atomically(const std::string& path, const std::string& text) {
    std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << text;
        if (!f) return;
    }
    ::rename(tmp.c_str(), path.c_str());
}

class Watcher {
public:
    Watcher(Policy policy, PinnedMaps maps)
        : policy_(std::move(policy)),
          maps_(std::move(maps)),
          cgroups_(maps_),
          mount_(cgroup2_mount()) {
        inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
        if (!inotify_) throw_errno("cannot create an inotify instance", errno);
    }

    int inotify_fd() const { return inotify_.get(); }

    // Resolves every target and applies the answer. Returns whether a
    // retry is wanted (torn PID file, supervisor not up yet).
    bool apply() {
        bool retry = false;
        std::set<std::string> dirs;
        std::set<std::uint64_t> wanted_cgroups;
        std::set<std::string> warnings;
        std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::uint32_t, std::uint32_t>>
            wanted_inodes;
        std::map<std::string, std::uint32_t> wanted_words;
        std::string targets_json = "[", targets_text;
        for (const auto& t : policy_.targets) {
            Resolution r = resolve(t, mount_);
            if (t.kind == TargetKind::Pid) pin_identity(t, r);
            retry |= r.retry;
            dirs.insert(r.watch_dirs.begin(), r.watch_dirs.end());
            std::string pids = "[", cgs = "[";
            for (const auto& p : r.processes) {
                try {
                    procs_add(p, t.source);
                    if (pids.size() > 1) pids += ",";
                    pids += std::to_string(p.pid);
                } catch (const std::exception& e) {
                    warnings.insert(t.describe() + ": " + e.what());
                }
            }
            for (const auto& [id, path] : r.cgroups) {
                wanted_cgroups.insert(id);
                try {
                    if (cgroups_.add(id, t.source)) log_line("protecting cgroup " + path + " (" + t.describe() + ")");
                } catch (const std::exception& e) {
                    warnings.insert(t.describe() + ": " + e.what());
                }
                if (cgs.size() > 1) cgs += ",";
                cgs += json::quote(path);
            }
            for (const auto& [path, kind] : r.guarded_files)
                if (auto key = inode_key(path)) wanted_inodes[{key->dev, key->ino}] = {kind, t.source};
            for (const auto& [word, flag] : r.exec_words) wanted_words[word] |= flag;
            for (auto& w : r.warnings) warnings.insert(w);
            std::string pid_list, cg_list;
            for (const auto& p : r.processes) pid_list += (pid_list.empty() ? "" : ",") + std::to_string(p.pid);
            for (const auto& c : r.cgroups) cg_list += (cg_list.empty() ? "" : ",") + c.second;
            targets_text += "#" + std::to_string(t.source) + "\t" + t.describe() + "\t" +
                            (pid_list.empty() ? "-" : pid_list) + "\t" +
                            (cg_list.empty() ? "-" : cg_list) + "\n";
            if (targets_json.size() > 1) targets_json += ",";
            targets_json += json::ObjectWriter()
                                .num("source", t.source)
                                .str("kind", kind_key(t.kind))
                                .str("pattern", t.pattern)
                                .num("line", t.line)
                                .raw("pids", pids + "]")
                                .raw("cgroups", cgs + "]")
                                .done();
        }
        targets_json += "]";
        // A package upgrade replaces a binary with a new inode.
        for (const auto& b : find_control_binaries())
            if (auto key = inode_key(b.path)) wanted_inodes[{key->dev, key->ino}] = {b.kind, 0};
        if (policy_.refuse_service_manager_sockets) {
            for (const auto& pattern : service_manager_socket_patterns()) {
                auto wd = glob_watch_dirs(pattern);
                dirs.insert(wd.begin(), wd.end());
                for (const auto& path : expand_glob(pattern))
                    if (auto key = inode_key(path))
                        wanted_inodes[{key->dev, key->ino}] = {LG_INODE_SERVICE_SOCKET, 0};
            }
        }
        try {
            apply_side_doors(wanted_inodes, wanted_words);
        } catch (const std::exception& e) {
            warnings.insert(std::string("side doors: ") + e.what());
        }
        forget_vanished_cgroups(wanted_cgroups);
        update_watches(dirs);
        // A file created in a directory between its resolution and its new
        // watch sends no event: look once more.
        retry |= added_watch_;
        for (const auto& w : warnings)
            if (!last_warnings_.count(w)) log_line("warning: " + w);
        last_warnings_ = warnings;
        write_state(targets_json, warnings);
        write_atomically(paths::kWatcherTargets, targets_text);
        return retry;
    }

    // Swaps in a new policy. Cgroups only the old one protected are
    // released by the next apply(), after the new policy's are in place, so
    // nothing both policies protect is ever unprotected in between.
    // Processes keep their marks until they exit.
    void replace_policy(Policy p) {
        policy_ = std::move(p);
        prune_unwanted_ = true;
        pid_identity_.clear();
    }

    const Policy& policy() const { return policy_; }

    // Drains pending inotify events; true when any arrived.
    bool drain_events() {
        alignas(struct inotify_event) char buf[16384];
        bool any = false;
        for (;;) {
            ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
            if (n <= 0) break;
            any = true;
            for (char* p = buf; p < buf + n;) {
                auto* ev = reinterpret_cast<struct inotify_event*>(p);
                if (ev->mask & IN_IGNORED) {
                    auto it = wd_dir_.find(ev->wd);
                    if (it != wd_dir_.end()) {
                        dir_wd_.erase(it->second);
                        wd_dir_.erase(it);
                    }
                }
                p += sizeof(struct inotify_event) + ev->len;
            }
        }
        return any;
    }

private:
    // Guards what the policy's targets need and releases what only an
    // earlier resolution (or policy) needed. New entries go in first.
    void apply_side_doors(
        const std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::uint32_t, std::uint32_t>>&
            inodes,
        const std::map<std::string, std::uint32_t>& words) {
        GuardedInodes gi(maps_.guarded_inodes.get());
        for (const auto& [k, v] : inodes) gi.add(lg_inode_key{k.first, k.second}, v.first, v.second);
        ExecWords ew(maps_.exec_words.get());
        for (const auto& [w, flags] : words) ew.add(w, flags);
        for (const auto& [k, v] : inodes_added_)
            if (!inodes.count(k)) gi.remove(lg_inode_key{k.first, k.second});
        for (const auto& [w, flags] : words_added_) {
            auto it = words.find(w);
            std::uint32_t keep = it == words.end() ? 0 : it->second;
            if (flags & ~keep) ew.remove(w, flags & ~keep);
        }
        inodes_added_ = inodes;
        words_added_ = words;
    }

    void procs_add(const ProcessToProtect& p, std::uint32_t source) {
        ProtectedSet set(maps_);
        pid_t tgid = p.pid;
        if (set.add(p.pid, source, &tgid, p.inherit ? LG_PROTECT_INHERIT : 0) == AddOutcome::Added)
            log_line("protecting pid " + std::to_string(tgid) + " (" + p.why + ")");
    }

    // `pid = N` names the process that had PID N when the policy was
    // applied, never a later process that reuses the number.
    void pin_identity(const ProtectTarget& t, Resolution& r) {
        auto st = read_proc_stat(t.pid);
        auto it = pid_identity_.find(t.source);
        if (it == pid_identity_.end()) {
            if (st) pid_identity_[t.source] = st->start_ticks;
            return;
        }
        if (!st || st->start_ticks != it->second) r.processes.clear();
    }

    void forget_vanished_cgroups(const std::set<std::uint64_t>& wanted) {
        for (const auto& c : cgroups_.list()) {
            if (c.info.source == 0 || wanted.count(c.id)) continue;
            if (prune_unwanted_ || !cgroup_path_of_id(mount_, c.id)) cgroups_.remove(c.id);
        }
        prune_unwanted_ = false;
    }

    void update_watches(const std::set<std::string>& dirs) {
        added_watch_ = false;
        for (auto it = dir_wd_.begin(); it != dir_wd_.end();) {
            if (!dirs.count(it->first)) {
                ::inotify_rm_watch(inotify_.get(), it->second);
                wd_dir_.erase(it->second);
                it = dir_wd_.erase(it);
            } else {
                ++it;
            }
        }
        for (const auto& d : dirs) {
            if (dir_wd_.count(d)) continue;
            // In cgroupfs only new and removed cgroups matter; content events
            // (cgroup.events on every fork and exit) would wake us for nothing.
            bool in_cgroupfs = d.compare(0, mount_.size(), mount_) == 0;
            std::uint32_t mask = in_cgroupfs ? kCgroupWatchMask : kWatchMask;
            int wd = ::inotify_add_watch(inotify_.get(), d.c_str(), mask | IN_ONLYDIR);
            if (wd < 0) {
                if (errno != ENOENT && !last_warnings_.count("watch " + d))
                    log_line("warning: cannot watch " + d + ": " + std::strerror(errno));
                continue;
            }
            dir_wd_[d] = wd;
            wd_dir_[wd] = d;
            added_watch_ = true;
        }
    }

    void write_state(const std::string& targets_json, const std::set<std::string>& warnings) {
        std::string w = "[";
        for (const auto& x : warnings) {
            if (w.size() > 1) w += ",";
            w += json::quote(x);
        }
        w += "]";
        write_atomically(paths::kWatcherState, json::ObjectWriter()
                                                .num("pid", ::getpid())
                                                .str("config", policy_.path)
                                                .raw("targets", targets_json)
                                                .raw("warnings", w)
                                                .unum("watched_dirs", dir_wd_.size())
                                                .done() +
                                                "\n");
    }

    Policy policy_;
    PinnedMaps maps_;
    ProtectedCgroups cgroups_;
    std::string mount_;
    UniqueFd inotify_;
    std::map<std::string, int> dir_wd_;
    std::map<int, std::string> wd_dir_;
    std::set<std::string> last_warnings_;
    bool prune_unwanted_ = false;
    std::map<std::uint32_t, std::uint64_t> pid_identity_;  // source -> start ticks
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::uint32_t, std::uint32_t>>
        inodes_added_;
    std::map<std::string, std::uint32_t> words_added_;
    bool added_watch_ = false;
};

std::string read_start_ticks(pid_t pid) {
    auto st = read_proc_stat(pid);
    return st ? std::to_string(st->start_ticks) : "";
}

}  // namespace

int run_watcher(const std::string& policy_path, const std::function<void()>& on_ready) {
    Policy policy = load_policy(policy_path);
    Watcher w(std::move(policy), PinnedMaps::open());
    // The watcher keeps protection right, so a test session may not stop
    // or trace it any more than the services it watches.
    {
        PinnedMaps maps = PinnedMaps::open();
        ProtectedSet(maps).add(::getpid(), LG_SOURCE_LIVEGUARD);
    }

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    UniqueFd sfd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sfd) throw_errno("cannot create a signalfd", errno);

    ::mkdir(paths::kStateDir, 0755);
    write_atomically(paths::kWatcherPid,
                     std::to_string(::getpid()) + " " + read_start_ticks(::getpid()) + "\n");
    log_line("started with " + policy_path + " (" + std::to_string(w.policy().targets.size()) +
             " targets)");
    int retries = 0;
    bool retry = w.apply();
    on_ready();
    for (;;) {
        struct pollfd fds[2] = {{w.inotify_fd(), POLLIN, 0}, {sfd.get(), POLLIN, 0}};
        int timeout = retry && retries < kMaxRetries ? kRetryMs : -1;
        int n = ::poll(fds, 2, timeout);
        if (n < 0 && errno != EINTR) throw_errno("poll failed", errno);
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si {};
            while (::read(sfd.get(), &si, sizeof si) == sizeof si) {
                if (si.ssi_signo == SIGHUP) {
                    try {
                        Policy p = load_policy(policy_path);
                        w.replace_policy(std::move(p));
                        log_line("reloaded " + policy_path);
                    } catch (const std::exception& e) {
                        log_line(std::string("rejected the new policy, keeping the old one: ") + e.what());
                    }
                } else {
                    log_line("stopping");
                    ::unlink(paths::kWatcherPid);
                    ::unlink(paths::kWatcherState);
                    ::unlink(paths::kWatcherTargets);
                    return 0;
                }
            }
        }
        bool events = w.drain_events();
        if (events || (fds[1].revents & POLLIN)) retries = 0;
        else if (n == 0) ++retries;
        if (events || n == 0 || (fds[1].revents & POLLIN)) {
            // A failure to apply (a map update refused, say) is logged and
            // retried on the next event; the watcher must not die of it.
            try {
                retry = w.apply();
            } catch (const std::exception& e) {
                log_line(std::string("error: applying the policy failed: ") + e.what());
                retry = true;
            }
        }
    }
}

std::optional<pid_t> running_watcher() {
    auto text = read_small_file(paths::kWatcherPid, 128);
    if (!text) return std::nullopt;
    auto space = text->find(' ');
    auto pid = parse_pid(text->substr(0, space));
    if (!pid || space == std::string::npos) return std::nullopt;
    std::string ticks = text->substr(space + 1);
    while (!ticks.empty() && ticks.back() == '\n') ticks.pop_back();
    if (read_start_ticks(*pid) != ticks) return std::nullopt;  // stale file, reused PID
    return pid;
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
            log_line("error: " + msg);
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

bool stop_watcher() {
    auto pid = running_watcher();
    if (!pid) return false;
    if (::kill(*pid, SIGTERM) != 0 && errno == EPERM)
        throw_errno("cannot stop the policy watcher (pid " + std::to_string(*pid) + ")", EPERM,
                    "run it as root from outside any test session: members may not stop liveguard");
    for (int i = 0; i < 500; ++i) {
        if (::kill(*pid, 0) != 0 || !running_watcher()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(*pid, SIGKILL);
    ::unlink(paths::kWatcherPid);
    return true;
}

}  // namespace liveguard
