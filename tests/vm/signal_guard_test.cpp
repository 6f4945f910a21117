// Enforcement of the signal guard on the real kernel. Tests in the Guard
// suite each assert a refusal; the control run (LIVEGUARD_TEST_WITHOUT_GUARD)
// repeats them with the LSM link removed and requires every one to fail.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <linux/sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <memory>
#include <fstream>
#include <thread>

#include "kernel/counters.h"
#include "harness.h"
#include "kernel/skipped_runs.h"
#include "kernel/pinned_maps.h"

using namespace lgtest;

namespace {

// The same, for tests whose claim is not a refusal.
class Selectivity : public Guard {};

constexpr uid_t kTestUid = 4242;

}  // namespace

TEST_F(Guard, KillFromSessionIsRefusedForEverySignal) {
    Target t;
    protect(t.pid());
    Session s;
    for (int sig : {SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGSTOP, SIGRTMIN}) {
        EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), sig); }), EPERM) << strsignal(sig);
        EXPECT_TRUE(t.untouched()) << strsignal(sig);
    }
}

TEST_F(Guard, TkillOnEveryThreadIsRefused) {
    Target t({.threads = 2});
    ASSERT_EQ(t.thread_ids().size(), 3u);
    protect(t.pid());
    Session s;
    for (pid_t tid : t.thread_ids()) {
        EXPECT_EQ(s.as_member([&] { return sys_tkill(tid, SIGKILL); }), EPERM) << tid;
        EXPECT_TRUE(t.untouched());
    }
}

TEST_F(Guard, TgkillIsRefused) {
    Target t({.threads = 1});
    protect(t.pid());
    Session s;
    for (pid_t tid : t.thread_ids())
        EXPECT_EQ(s.as_member([&] { return sys_tgkill(t.pid(), tid, SIGTERM); }), EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, RtSigqueueinfoIsRefused) {
    Target t;
    protect(t.pid());
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_rt_sigqueueinfo(t.pid(), SIGTERM); }), EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, RtTgsigqueueinfoIsRefused) {
    Target t({.threads = 1});
    protect(t.pid());
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_rt_tgsigqueueinfo(t.pid(), t.thread_ids()[0], SIGUSR1); }),
              EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, PidfdSendSignalIsRefused) {
    Target t;
    protect(t.pid());
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_pidfd_send_signal(t.pid(), SIGKILL); }), EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, KillOfAProcessGroupSparesTheProtectedMember) {
    Target t({.own_process_group = true});
    Target bystander({.join_pgid = t.pid()});
    protect(t.pid());
    Session s;
    // The kernel checks each process of the group; the call succeeds
    // because the unprotected one was signalled.
    EXPECT_EQ(s.as_member([&] { return sys_kill(-t.pid(), SIGKILL); }), 0);
    EXPECT_TRUE(bystander.wait_killed());
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, KillMinusOneSparesTheProtectedProcess) {
    // kill(-1) reaches every process the sender may signal: run it as an
    // otherwise unused uid so only the test's own processes are in reach.
    Target t({.uid = kTestUid});
    Target bystander({.uid = kTestUid, .name = "lg-bystander"});
    protect(t.pid());
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(-1, SIGKILL); }, "", kTestUid), 0);
    EXPECT_TRUE(bystander.wait_killed());
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, NestedCgroupInsideASessionIsEnforced) {
    Target t;
    protect(t.pid());
    Session s;
    std::string inner = s.make_child("worker");
    std::string innermost = inner + "/gw0";
    ASSERT_EQ(::mkdir(innermost.c_str(), 0755), 0);
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGTERM); }, inner), EPERM);
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }, innermost), EPERM);
    EXPECT_TRUE(t.untouched());
}

namespace {

// A process joins `cgroup` (in or below the untagged session `s`), then
// `s` is tagged, then the process sends SIGTERM to `target`: its errno.
int kill_after_tag(Session& s, const std::string& cgroup, pid_t target) {
    int joined[2], go[2];
    if (::pipe(joined) != 0 || ::pipe(go) != 0) return -1;
    pid_t m = ::fork();
    if (m == 0) {
        std::ofstream(cgroup + "/cgroup.procs") << "0";
        char c = 1;
        (void)!::write(joined[1], &c, 1);
        (void)!::read(go[0], &c, 1);
        ::_exit(sys_kill(target, SIGTERM));
    }
    char c = 0;
    int result = -1;
    if (::read(joined[0], &c, 1) == 1) {
        auto r = lg({"tag", s.dir()});
        EXPECT_EQ(r.status, 0) << r.err;
        (void)!::write(go[1], &c, 1);
        int st = 0;
        ::waitpid(m, &st, 0);
        if (WIFEXITED(st)) result = WEXITSTATUS(st);
    }
    lg({"untag", s.dir()});
    for (int fd : {joined[0], joined[1], go[0], go[1]}) ::close(fd);
    return result;
}

}  // namespace

TEST_F(Guard, TaggingAnExistingCgroupEnforcesOnItsProcesses) {
    Target t;
    protect(t.pid());
    Session s(false);  // created untagged; a process joins before the tag
    EXPECT_EQ(kill_after_tag(s, s.dir(), t.pid()), EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, TaggingReachesProcessesInTheCgroupsBelow) {
    Target t;
    protect(t.pid());
    Session s(false);
    std::string below = s.make_child("worker") + "/deeper";
    ASSERT_EQ(::mkdir(below.c_str(), 0755), 0);
    EXPECT_EQ(kill_after_tag(s, below, t.pid()), EPERM);
    EXPECT_TRUE(t.untouched());
}

// clone3(CLONE_INTO_CGROUP) by a process outside every session: the child
// is born in the session's cgroup without a fork there or a move.
TEST_F(Guard, AChildAnOutsiderStartsInATaggedCgroupIsAMember) {
    Target t;
    protect(t.pid());
    Session s;
    int cg = ::open(s.dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(cg, 0);
    struct clone_args args {};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<__u64>(cg);
    long pid = ::syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) ::_exit(sys_kill(t.pid(), SIGTERM));
    ::close(cg);
    ASSERT_GT(pid, 0) << std::strerror(errno);
    int st = 0;
    ::waitpid(static_cast<pid_t>(pid), &st, 0);
    EXPECT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), EPERM);
    EXPECT_TRUE(t.untouched());
}

// Membership is a mark, made at `tag` for the processes a cgroup holds
// and by the kernel for those born there after: a process born while the
// tag is made must get one or the other. Every process of a fork storm
// alive once the tag is made tries the kill, and each must be refused.
// In the fmod_ret form the kernel skips a program already running on the
// CPU (a preempted one included), and an act goes through unchecked when
// it skipped both of the hook's programs (bpf/lib/twins.h): there, a kill
// that went through must be one the kernel counted as skipped by both.
TEST_F(Guard, TaggingDuringAForkStormLeavesNoProcessOutOfTheSession) {
    Target t;
    protect(t.pid());
    Session s(false);
    auto skipped_before = liveguard::skipped_runs();
    char dir_tmpl[] = "/tmp/lg-storm-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_tmpl), nullptr);
    std::string tagged = std::string(dir_tmpl) + "/tagged", stop = std::string(dir_tmpl) + "/stop";
    int results[2];
    ASSERT_EQ(::pipe(results), 0);
    pid_t storm = ::fork();
    if (storm == 0) {
        ::close(results[0]);
        std::ofstream(s.dir() + "/cgroup.procs") << "0";
        int alive = 0;
        while (::access(stop.c_str(), F_OK) != 0) {
            while (::waitpid(-1, nullptr, WNOHANG) > 0) --alive;
            if (alive >= 40) {
                ::usleep(1000);
                continue;
            }
            pid_t c = ::fork();
            if (c == 0) {
                // A short life, in which the tag may come.
                for (int i = 0; i < 20; ++i) {
                    if (::access(tagged.c_str(), F_OK) == 0) {
                        int r = sys_kill(t.pid(), SIGTERM);
                        ::_exit(::write(results[1], &r, sizeof r) == sizeof r ? 0 : 1);
                    }
                    ::usleep(1000);
                }
                ::_exit(0);
            }
            if (c > 0) ++alive;
        }
        while (::waitpid(-1, nullptr, 0) > 0) {}
        ::_exit(0);
    }
    ::close(results[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto r = lg({"tag", s.dir()});
    ASSERT_EQ(r.status, 0) << r.err;
    std::ofstream(tagged) << "1";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::ofstream(stop) << "1";
    ::waitpid(storm, nullptr, 0);
    int refused = 0, through = 0, v = 0;
    while (::read(results[0], &v, sizeof v) == sizeof v) (v == EPERM ? refused : through)++;
    ::close(results[0]);
    ::unlink(tagged.c_str());
    ::unlink(stop.c_str());
    ::rmdir(dir_tmpl);
    auto skipped_after = liveguard::skipped_runs();
    auto skips = [&](const std::string& prog) { return skipped_after[prog] - skipped_before[prog]; };
    std::uint64_t both = std::min(skips("lg_task_kill"), skips("lg_task_kill_twin"));
    std::printf("storm: %d kills refused, %d through; kernel skips: lg_task_kill %llu, lg_task_kill_twin %llu\n",
                refused, through, static_cast<unsigned long long>(skips("lg_task_kill")),
                static_cast<unsigned long long>(skips("lg_task_kill_twin")));
    EXPECT_GT(refused, 0);
    EXPECT_LE(static_cast<std::uint64_t>(through), both)
        << through << " processes of the tagged cgroup were no members (kills the kernel skipped both programs of: "
        << both << ")";
    if (through == 0) EXPECT_TRUE(t.untouched());
    lg({"untag", s.dir()});
}

// An exec by a thread that is not the main one makes that thread the
// process's leader, and the old leader goes: the process must stay a
// member through it.
TEST_F(Guard, AnExecFromASecondThreadStaysInTheSession) {
    Target t;
    protect(t.pid());
    Session s;
    std::string cmd = "kill -TERM " + std::to_string(t.pid());
    int r = s.as_member([&] {
        std::thread th([&] { ::execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr); });
        th.join();  // only when the exec failed
        return 99;
    });
    EXPECT_EQ(r, 1) << "the shell's kill should have been refused (kill exits 1)";
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, RunPutsTheCommandInAnEnforcedSession) {
    Target t;
    protect(t.pid());
    auto r = lg({"run", "--", "sh", "-c", "kill -TERM " + std::to_string(t.pid())});
    EXPECT_NE(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("ermitted"), std::string::npos) << r.err;  // "Operation not permitted"
    EXPECT_TRUE(t.untouched());
}

// A test stuck retrying: fifty identical refusals within a second are one
// event and a count, and `run`'s summary counts all fifty.
TEST_F(Guard, RunsSummaryCountsRepeatedRefusals) {
    Target t;
    protect(t.pid());
    std::string loop = "i=0; while [ $i -lt 50 ]; do kill -TERM " + std::to_string(t.pid()) +
                       " 2>/dev/null; i=$((i+1)); done; true";
    auto r = lg({"run", "--", "sh", "-c", loop});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(": 50 acts refused (task_kill 50)"), std::string::npos) << r.err;
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, RunAsAnotherUserIsEnforced) {
    // The target runs as nobody too, so only the guard stands in the way.
    Target t({.uid = 65534});
    protect(t.pid());
    auto r = lg({"run", "--user", "nobody", "--", "sh", "-c",
                 "id -u; kill -KILL " + std::to_string(t.pid())});
    EXPECT_EQ(r.out, "65534\n");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, EnforcementOutlivesTheLoadingProcess) {
    ASSERT_EQ(lg({"unload"}).status, 0);
    auto r = lg({"load"});  // a process that has exited by the next line
    ASSERT_EQ(r.status, 0) << r.err;
    ensure_guard();
    Target t;
    protect(t.pid());
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }), EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, PidReuseLeavesTheNewcomerUnprotected) {
    Session s;
    auto a = std::make_unique<Target>();
    pid_t pid = a->pid();
    protect(pid);
    EXPECT_EQ(s.as_member([&] { return sys_kill(pid, SIGKILL); }), EPERM);
    EXPECT_TRUE(a->untouched());
    a.reset();  // killed and reaped by the test, which is not a member
    // Make the next fork get the same PID.
    std::unique_ptr<Target> b;
    for (int attempt = 0; attempt < 20 && (!b || b->pid() != pid); ++attempt) {
        b.reset();
        std::ofstream("/proc/sys/kernel/ns_last_pid") << pid - 1;
        b = std::make_unique<Target>();
    }
    ASSERT_EQ(b->pid(), pid) << "could not force PID reuse";
    EXPECT_EQ(s.as_member([&] { return sys_kill(pid, SIGKILL); }), 0);
    EXPECT_TRUE(b->wait_killed());
}

TEST_F(Guard, EachRefusalIsExactlyOneEvent) {
    Target t;
    protect(t.pid());
    Session s;
    drain_events();
    std::vector<int> sigs{SIGTERM, SIGKILL, SIGUSR1};
    std::vector<pid_t> senders;
    for (int sig : sigs) {
        int pipefd[2];
        ASSERT_EQ(::pipe(pipefd), 0);
        EXPECT_EQ(s.as_member([&] {
                      pid_t self = ::getpid();
                      (void)!::write(pipefd[1], &self, sizeof self);
                      return sys_kill(t.pid(), sig);
                  }),
                  EPERM);
        pid_t sender = 0;
        ASSERT_EQ(::read(pipefd[0], &sender, sizeof sender), (ssize_t)sizeof sender);
        senders.push_back(sender);
        ::close(pipefd[0]);
        ::close(pipefd[1]);
    }
    auto events = drain_events();
    std::vector<std::string> mine;
    std::string target_key = "\"target_pid\":" + std::to_string(t.pid()) + ",";
    for (const auto& e : events)
        if (e.find(target_key) != std::string::npos) mine.push_back(e);
    ASSERT_EQ(mine.size(), sigs.size());
    const char* names[] = {"SIGTERM", "SIGKILL", "SIGUSR1"};
    for (std::size_t i = 0; i < mine.size(); ++i) {
        const auto& e = mine[i];
        EXPECT_NE(e.find("\"verdict\":\"denied\""), std::string::npos) << e;
        EXPECT_NE(e.find("\"hook\":\"task_kill\""), std::string::npos) << e;
        EXPECT_NE(e.find("\"pid\":" + std::to_string(senders[i]) + ","), std::string::npos) << e;
        EXPECT_NE(e.find("\"target_comm\":\"lg-gateway\""), std::string::npos) << e;
        EXPECT_NE(e.find(std::string("\"signal\":\"") + names[i] + "\""), std::string::npos) << e;
        EXPECT_NE(e.find("\"session_cgroup_id\":" + std::to_string(s.id()) + ","),
                  std::string::npos)
            << e;
        EXPECT_NE(e.find("\"time\":\"20"), std::string::npos) << e;
    }
}

// `events` starts as tail does, with the journal's last events: right after
// a session, --no-follow prints its refusal, and -n 0 (only what is new)
// nothing.
TEST_F(Guard, EventsStartsWithTheJournalsLastEvents) {
    Target t;
    protect(t.pid());
    drain_events();
    auto r = lg({"run", "--", "sh", "-c", "kill -TERM " + std::to_string(t.pid())});
    EXPECT_NE(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(t.untouched());
    // A policy watcher, when one runs, journals the refusal a poll later.
    std::string target_key = "\"target_pid\":" + std::to_string(t.pid()) + ",";
    CmdResult last;
    for (int i = 0; i < 20; ++i) {
        last = lg({"events", "--no-follow", "--json"});
        if (last.out.find(target_key) != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    EXPECT_EQ(last.status, 0) << last.err;
    EXPECT_NE(last.out.find(target_key), std::string::npos) << last.out;
    EXPECT_NE(last.out.find("\"verdict\":\"denied\""), std::string::npos) << last.out;
    auto none = lg({"events", "-n", "0", "--no-follow"});
    EXPECT_EQ(none.status, 0) << none.err;
    EXPECT_EQ(none.out, "");
}

TEST_F(Guard, StatusCountsEveryRefusal) {
    // Read from the pinned map: `status` reports "not loaded" in the
    // control run, which must fail here for the right reason.
    auto count = [] {
        auto maps = liveguard::PinnedMaps::open();
        return static_cast<long>(liveguard::read_counters(maps.counters.get())[LG_COUNTER_DENIED + static_cast<int>(LG_HOOK_TASK_KILL)]);
    };
    long before = count();
    Target t;
    protect(t.pid());
    Session s;
    s.as_member([&] { return sys_kill(t.pid(), SIGTERM); });
    s.as_member([&] { return sys_tkill(t.pid(), SIGTERM); });
    EXPECT_EQ(count() - before, 2);
    auto status = lg({"status", "--json"});
    EXPECT_NE(status.out.find("\"task_kill\":" + std::to_string(count())), std::string::npos)
        << status.out;
}

TEST_F(Selectivity, SignalsFromOutsideASessionAreDelivered) {
    Target t;
    protect(t.pid());
    EXPECT_EQ(sys_kill(t.pid(), SIGTERM), 0);
    EXPECT_TRUE(t.wait_killed());
}

TEST_F(Selectivity, SignalZeroFromASessionPasses) {
    Target t;
    protect(t.pid());
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), 0); }), 0);
    EXPECT_EQ(s.as_member([&] { return sys_pidfd_send_signal(t.pid(), 0); }), 0);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Selectivity, AMemberMayKillItsOwnChild) {
    Session s;
    int r = s.as_member([] {
        pid_t c = ::fork();
        if (c == 0) {
            for (;;) ::pause();
        }
        if (::kill(c, SIGKILL) != 0) return errno;
        int st = 0;
        ::waitpid(c, &st, 0);
        return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 200;
    });
    EXPECT_EQ(r, 0);
}

TEST_F(Selectivity, AMemberMayKillUnprotectedProcesses) {
    Target t;
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }), 0);
    EXPECT_TRUE(t.wait_killed());
}

TEST_F(Selectivity, AnUntaggedCgroupIsNotASession) {
    Target t;
    protect(t.pid());
    Session s(false);
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }), 0);
    EXPECT_TRUE(t.wait_killed());
}

TEST_F(Selectivity, UnprotectRestoresDelivery) {
    Target t;
    protect(t.pid());
    auto r = lg({"unprotect", "--pid", std::to_string(t.pid())});
    ASSERT_EQ(r.status, 0) << r.err;
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }), 0);
    EXPECT_TRUE(t.wait_killed());
}

// ---- Membership follows the process tree, not the cgroup.

namespace {

// Runs `fn` in a grandchild of a session member after the test itself (an
// outsider, as a service manager would be) has moved that grandchild to
// `dest`. Returns fn's result, or 250+ on a harness failure.
int in_moved_descendant(Session& s, const std::string& dest, const std::function<int()>& fn) {
    int to_child[2], from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return 250;
    int rc = s.as_member([&] {
        pid_t g = ::fork();
        if (g == 0) {
            char go;
            if (::read(to_child[0], &go, 1) != 1) ::_exit(253);
            int r = fn();
            ::_exit(::write(from_child[1], &r, sizeof r) == sizeof r ? 0 : 254);
        }
        // The member itself exits: the grandchild is orphaned, as a
        // daemon would be.
        return ::write(from_child[1], &g, sizeof g) == sizeof g ? 0 : 254;
    });
    if (rc != 0) return rc;
    pid_t g = 0;
    if (::read(from_child[0], &g, sizeof g) != sizeof g) return 251;
    write_text(dest + "/cgroup.procs", std::to_string(g));
    if (::write(to_child[1], "x", 1) != 1) return 252;
    int result = 0;
    if (::read(from_child[0], &result, sizeof result) != sizeof result) return 255;
    ::close(to_child[0]);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::close(from_child[1]);
    return result;
}

}  // namespace

TEST_F(Guard, MemberMovedOutOfItsSessionIsStillAMember) {
    Target t;
    protect(t.pid());
    Session s;
    EXPECT_EQ(in_moved_descendant(s, cgroup_root(), [&] { return sys_kill(t.pid(), SIGTERM); }), EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Guard, DaemonizedDescendantIsStillAMember) {
    Target t;
    protect(t.pid());
    Session s;
    int rc = s.as_member([&] {
        int p[2];
        if (::pipe(p) != 0) return 250;
        pid_t c = ::fork();
        if (c == 0) {
            // The classic daemon dance: fork, setsid, fork again.
            ::setsid();
            if (::fork() == 0) {
                int r = sys_kill(t.pid(), SIGKILL);
                ::_exit(::write(p[1], &r, sizeof r) == sizeof r ? 0 : 1);
            }
            ::_exit(0);
        }
        ::waitpid(c, nullptr, 0);
        int r = 0;
        return ::read(p[0], &r, sizeof r) == sizeof r ? r : 251;
    });
    EXPECT_EQ(rc, EPERM);
    EXPECT_TRUE(t.untouched());
}

TEST_F(Selectivity, MarksLapseWithTheirSession) {
    Target t;
    protect(t.pid());
    auto s = std::make_unique<Session>();
    std::string dir = s->dir();
    int to_child[2], from_child[2];
    ASSERT_EQ(::pipe(to_child), 0);
    ASSERT_EQ(::pipe(from_child), 0);
    ASSERT_EQ(s->as_member([&] {
        pid_t g = ::fork();
        if (g == 0) {
            char go;
            if (::read(to_child[0], &go, 1) != 1) ::_exit(1);
            int r = sys_kill(t.pid(), SIGTERM);
            ::_exit(::write(from_child[1], &r, sizeof r) == sizeof r ? 0 : 1);
        }
        return ::write(from_child[1], &g, sizeof g) == sizeof g ? 0 : 1;
    }), 0);
    pid_t g = 0;
    ASSERT_EQ(::read(from_child[0], &g, sizeof g), (ssize_t)sizeof g);
    write_text(cgroup_root() + "/cgroup.procs", std::to_string(g));
    ASSERT_EQ(lg({"untag", dir}).status, 0);
    ASSERT_EQ(::write(to_child[1], "x", 1), 1);
    int r = -1;
    ASSERT_EQ(::read(from_child[0], &r, sizeof r), (ssize_t)sizeof r);
    EXPECT_EQ(r, 0) << "a former member of an untagged session was still refused";
    EXPECT_TRUE(t.wait_killed());
}

TEST(Escape, MemberCannotMoveItselfOutOfItsSession) {
    ensure_guard();
    Session s;
    std::string other = cgroup_root() + "/lg-escape-" + std::to_string(::getpid());
    ::mkdir(other.c_str(), 0755);
    for (const std::string& dest : {cgroup_root(), other}) {
        int rc = s.as_member([&] {
            int fd = ::open((dest + "/cgroup.procs").c_str(), O_WRONLY);
            if (fd < 0) return errno;
            int r = ::write(fd, "0", 1) == 1 ? 0 : errno;
            ::close(fd);
            return r;
        });
        EXPECT_EQ(rc, EPERM) << dest;
    }
    ::rmdir(other.c_str());
}
