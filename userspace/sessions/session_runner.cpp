// `run`: the session's cgroup, the command in it, the pytest plugin.
#include "sessions/session_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <filesystem>
#include <thread>

#include "base/cgroup.h"
#include "base/error.h"
#include "base/fd.h"
#include "base/install_paths.h"
#include "base/paths.h"
#include "base/privileges.h"
#include "base/proc.h"
#include "base/user_db.h"
#include "events/event_collector.h"
#include "events/event_journal.h"
#include "events/session_info.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"
#include "sessions/brokered_run.h"
#include "sessions/child_signals.h"
#include "sessions/oom_rank.h"
#include "sessions/session_summary.h"

namespace liveguard {
namespace {

// The session's cgroup: created and tagged on construction; on
// destruction every process left in it is killed, the cgroup removed and
// only then untagged, so stragglers stay restricted until they are gone.
class SessionCgroup {
public:
    SessionCgroup(SessionRegistry& registry, const std::string& mount, const std::string& parent)
        : registry_(registry) {
        if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST)
            throw_errno("cannot create " + parent, errno,
                        "check that the cgroup v2 hierarchy at " + mount + " is writable");
        for (int attempt = 0;; ++attempt) {
            path_ = parent + "/run-" + std::to_string(::getpid()) +
                    (attempt ? "-" + std::to_string(attempt) : "");
            if (::mkdir(path_.c_str(), 0755) == 0) break;
            if (errno != EEXIST || attempt > 100) throw_errno("cannot create " + path_, errno);
        }
        try {
            registry_.tag(mount, path_, &id_);
        } catch (...) {
            ::rmdir(path_.c_str());
            throw;
        }
    }
    ~SessionCgroup() {
        kill_remaining();
        bool removed = false;
        for (int i = 0; i < 500; ++i) {
            if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
                removed = true;
                break;
            }
            if (errno != EBUSY) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (!removed) {
            // Survivors stay restricted: the tag goes only with the cgroup.
            std::fprintf(stderr,
                         "liveguard-bpf: warning: %s still has processes; it stays tagged "
                         "(untag it once they are gone)\n", path_.c_str());
            return;
        }
        try {
            registry_.untag_id(id_);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liveguard-bpf: warning: %s\n", e.what());
        }
    }
    SessionCgroup(const SessionCgroup&) = delete;
    SessionCgroup& operator=(const SessionCgroup&) = delete;

    const std::string& path() const { return path_; }
    std::uint64_t id() const { return id_; }

private:
    void kill_remaining() {
        // cgroup.kill (5.14+) reaches processes that fork while we kill.
        UniqueFd fd(::open((path_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC));
        if (fd && ::write(fd.get(), "1", 1) == 1) return;
        for (int round = 0; round < 50; ++round) {
            auto procs = read_small_file(path_ + "/cgroup.procs");
            if (!procs || procs->empty()) return;
            std::size_t pos = 0;
            while (pos < procs->size()) {
                auto end = procs->find('\n', pos);
                if (auto pid = parse_pid(std::string_view(*procs).substr(pos, end - pos)))
                    ::kill(*pid, SIGKILL);
                if (end == std::string::npos) break;
                pos = end + 1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

    SessionRegistry& registry_;
    std::string path_;
    std::uint64_t id_ = 0;
};

}  // namespace

int shell_status(int st) {
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 1;
}

int run_session(const RunOptions& opts) {
    // Without root the policy watcher makes the session (brokered_run.h).
    if (::geteuid() != 0) return run_brokered_session(opts);
    require_root("run");
    if (opts.argv.empty()) throw Error("no command given", "usage: liveguard-bpf run -- CMD [ARGS...]", 2);
    std::optional<Account> account;
    if (opts.user) account = lookup_account(*opts.user);
    // The pytest plugin (dist/python/liveguard_pytest.py), which pytest
    // finds through PYTHONPATH (set_session_env): logs which test is running,
    // with CLOCK_BOOTTIME stamps that events carry too, so an event names
    // the test that was running.
    std::string plugin = plugin_dir();

    PinnedMaps maps = PinnedMaps::open();
    // This process stays outside the session and may kill: a member that
    // could trace it could make it kill for the member, so it is protected
    // as the watcher is, before the session has a member. The mark goes
    // with the process.
    try {
        ProtectedSet(maps).add(::getpid(), LG_SOURCE_LIVEGUARD);
    } catch (const std::exception& e) {
        throw Error(std::string("cannot protect this run process from its own session, so the "
                                "session would not start: ") + e.what(),
                    "run it as root from outside any test session; liveguard-bpf doctor checks the guard");
    }
    SessionRegistry registry(maps.sessions.get(), maps.settings.get(), maps.members.get());
    std::string mount = cgroup2_mount();
    SessionCgroup session(registry, mount, opts.parent.value_or(mount + "/liveguard"));
    std::string procs = session.path() + "/cgroup.procs";
    std::string label = opts.name.value_or(std::to_string(session.id()));
    // Events of this session are those journalled from now on.
    JournalReader journal(false);
    std::string test_log = std::string(paths::kTestLogDir) + "/" + std::to_string(session.id());
    {
        std::error_code ec;
        std::filesystem::create_directories(test_log, ec);
        // The test may run as another user (--user); the sticky bit keeps
        // each process to its own log.
        ::chmod(test_log.c_str(), 01777);
    }

    std::vector<char*> argv;
    for (const auto& a : opts.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    // The child reports a failure before exec through this pipe, so the
    // parent can tell "could not start" from the command's own status.
    int errpipe[2];
    if (::pipe2(errpipe, O_CLOEXEC) != 0) throw_errno("cannot create a pipe", errno);
    UniqueFd err_read(errpipe[0]), err_write(errpipe[1]);

    pid_t child = ::fork();
    if (child < 0) throw_errno("cannot fork", errno);
    if (child == 0) {
        auto fail = [&](const char* step) {
            int e = errno;
            char msg[512];
            int n = std::snprintf(msg, sizeof msg, "%s: %s", step, std::strerror(e));
            (void)!::write(err_write.get(), msg, static_cast<std::size_t>(n));
            ::_exit(127);
        };
        set_session_env(plugin, test_log, label);
        // First for the OOM killer, before joining: a member may not write
        // its own score (door oom). Root's write is also the floor CMD
        // cannot go below once it runs as --user.
        try {
            rank_first_for_oom(0);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "liveguard: warning: %s; the session is not the OOM killer's first choice\n",
                         e.what());
        }
        // Join before anything else runs: nothing of CMD ever runs outside.
        int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ::write(fd, "0", 1) != 1) fail("cannot join the session cgroup");
        ::close(fd);
        if (account) {
            if (::setgroups(account->groups.size(), account->groups.data()) != 0) fail("setgroups");
            if (::setgid(account->gid) != 0) fail("setgid");
            if (::setuid(account->uid) != 0) fail("setuid");
        }
        ::execvp(argv[0], argv.data());
        fail((std::string("cannot run ") + argv[0]).c_str());
    }
    err_write.reset();
    write_session_info(session.id(), SessionInfo{label, session.path(), child});
    std::optional<ChildSignals> signals(std::in_place, child);

    char msg[512];
    ssize_t n;
    while ((n = ::read(err_read.get(), msg, sizeof msg - 1)) < 0 && errno == EINTR) {}
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    signals.reset();
    if (n > 0) {
        msg[n] = '\0';
        remove_session_info(session.id());
        throw Error(msg, "check the command and the user", 127);
    }
    int rc = shell_status(status);
    // Every event of the session is in the ring buffer by now: collect
    // them (another consumer may have journalled some already).
    SessionSummary s;
    try {
        EventCollector(maps).poll(0);
        std::vector<std::string> lines = journal.read_new();
        s = summarise_session(lines, session.id());
        // Another consumer (the watcher, an `events`) journals how often a
        // refusal repeated once its second is over, at its next wake-up
        // (every 200 ms at the latest): wait for that second and that.
        if (s.total + s.oom_killed > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            for (auto& l : journal.read_new()) lines.push_back(std::move(l));
            s = summarise_session(lines, session.id());
        }
        print_session_summary(s, label);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "liveguard-bpf: warning: no summary: %s\n", e.what());
    }
    remove_session_info(session.id());
    if (opts.fail_on_violation && s.total > 0 && rc == 0) return 3;
    return rc;
}

}  // namespace liveguard
