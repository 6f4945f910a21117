// What an s6 target protects: the service, its log service, their
// s6-supervise processes and the s6-svscan above them. Supervisors are
// played by forked children named as s6 names them.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "liveguard/abi.h"
#include "policy/resolver.h"
#include "temp_dir.h"

using namespace liveguard;
namespace fs = std::filesystem;

namespace {

// A supervise/status file as s6 2.11 writes it for a service that is up.
void write_status(const std::string& service_dir, pid_t pid) {
    fs::create_directories(service_dir + "/supervise");
    std::string b(35, '\0');
    for (int i = 0; i < 8; ++i) b[24 + 7 - i] = static_cast<char>((static_cast<std::uint64_t>(pid) >> (8 * i)) & 0xff);
    std::ofstream(service_dir + "/supervise/status", std::ios::binary) << b;
}

ProtectTarget s6_target(const std::string& dir) {
    ProtectTarget t;
    t.kind = TargetKind::S6;
    t.pattern = dir;
    t.source = 1;
    return t;
}

const ProcessToProtect* find_process(const Resolution& r, const std::string& why) {
    for (const auto& p : r.processes)
        if (p.why == why) return &p;
    return nullptr;
}

bool guards(const Resolution& r, const std::string& path) {
    return std::find(r.guarded_files.begin(), r.guarded_files.end(),
                     std::make_pair(path, std::uint32_t{LG_INODE_SUPERVISE_CONTROL})) != r.guarded_files.end();
}

// A process renamed `comm` with its cwd in `dir` (s6-supervise's own
// habit), optionally under a parent renamed `parent_comm`. Killed, and
// reaped, when it goes out of scope.
class FakeSupervisor {
public:
    FakeSupervisor(const std::string& dir, const char* parent_comm) {
        int p[2];
        if (::pipe(p) != 0) throw std::runtime_error("pipe failed");
        const char* cwd = dir.c_str();
        top_ = ::fork();
        if (top_ == 0) {
            ::close(p[0]);
            if (parent_comm) {
                ::prctl(PR_SET_NAME, parent_comm);
                if (::fork() != 0) {
                    ::close(p[1]);
                    while (::wait(nullptr) > 0) {
                    }
                    ::_exit(0);
                }
            }
            ::prctl(PR_SET_NAME, "s6-supervise");
            if (::chdir(cwd) != 0) ::_exit(1);
            pid_t self = ::getpid();
            if (::write(p[1], &self, sizeof self) != sizeof self) ::_exit(1);
            ::close(p[1]);
            ::pause();
            ::_exit(0);
        }
        ::close(p[1]);
        if (::read(p[0], &supervise_, sizeof supervise_) != sizeof supervise_) supervise_ = 0;
        ::close(p[0]);
    }
    ~FakeSupervisor() {
        if (top_ <= 0) return;
        // The fake s6-svscan reaps its child and exits.
        ::kill(supervise_ > 0 ? supervise_ : top_, SIGKILL);
        ::waitpid(top_, nullptr, 0);
    }
    pid_t top() const { return top_; }
    pid_t supervise() const { return supervise_; }

private:
    pid_t top_ = -1;
    pid_t supervise_ = 0;
};

// What the s6 target itself names: the test plays the service, and the
// reader of its output (a pipe when the tests run under `tee`) is
// protected too, which pipe_readers_test covers.
std::size_t s6_processes(const Resolution& r) {
    std::size_t n = 0;
    for (const auto& p : r.processes) n += p.why.rfind("reader of the ", 0) != 0;
    return n;
}

}  // namespace

TEST(S6Resolution, ProtectsTheLogServiceBesideTheService) {
    TempDir tmp;
    std::string dir = tmp.path + "/gateway";
    write_status(dir, ::getpid());
    write_status(dir + "/log", ::getppid());
    auto r = resolve(s6_target(dir), "/sys/fs/cgroup");

    const auto* service = find_process(r, "s6 service " + dir);
    ASSERT_NE(service, nullptr);
    EXPECT_EQ(service->pid, ::getpid());
    EXPECT_FALSE(service->inherit);
    const auto* log = find_process(r, "s6 log service " + dir + "/log");
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(log->pid, ::getppid());
    EXPECT_FALSE(log->inherit);
    EXPECT_TRUE(guards(r, dir + "/supervise/control"));
    EXPECT_TRUE(guards(r, dir + "/log/supervise/control"));
    for (const auto& d : {dir, dir + "/supervise", dir + "/log", dir + "/log/supervise"})
        EXPECT_TRUE(r.watch_dirs.count(d)) << d;
    // No s6-supervise runs for either: look again once s6-svscan starts them.
    EXPECT_TRUE(r.retry);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(S6Resolution, ALogServiceNotUpYetIsRetriedAndItsControlStillGuarded) {
    TempDir tmp;
    std::string dir = tmp.path + "/gateway";
    write_status(dir, ::getpid());
    fs::create_directories(dir + "/log");
    auto r = resolve(s6_target(dir), "/sys/fs/cgroup");
    EXPECT_TRUE(r.retry);
    EXPECT_TRUE(guards(r, dir + "/log/supervise/control"));
    EXPECT_TRUE(r.watch_dirs.count(dir + "/log"));
    EXPECT_EQ(s6_processes(r), 1u);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(S6Resolution, ALogFileIsNotALogService) {
    TempDir tmp;
    std::string dir = tmp.path + "/gateway";
    write_status(dir, ::getpid());
    std::ofstream(dir + "/log") << "not a service\n";
    auto r = resolve(s6_target(dir), "/sys/fs/cgroup");
    EXPECT_FALSE(guards(r, dir + "/log/supervise/control"));
    EXPECT_FALSE(r.watch_dirs.count(dir + "/log"));
    EXPECT_EQ(s6_processes(r), 1u);
}

TEST(S6Resolution, ProtectsTheScanDirectorysSvscanWithoutItsChildren) {
    TempDir tmp;
    std::string dir = tmp.path + "/gateway";
    write_status(dir, ::getpid());
    FakeSupervisor sup(dir, "s6-svscan");
    ASSERT_GT(sup.supervise(), 0);
    auto r = resolve(s6_target(dir), "/sys/fs/cgroup");

    const auto* supervise = find_process(r, "s6-supervise of " + dir);
    ASSERT_NE(supervise, nullptr);
    EXPECT_EQ(supervise->pid, sup.supervise());
    EXPECT_TRUE(supervise->inherit);
    const auto* svscan = find_process(r, "s6-svscan of " + tmp.path);
    ASSERT_NE(svscan, nullptr);
    EXPECT_EQ(svscan->pid, sup.top());
    EXPECT_FALSE(svscan->inherit);
    EXPECT_FALSE(r.retry);
    EXPECT_TRUE(r.warnings.empty());
}

TEST(S6Resolution, ASupervisorNotUnderSvscanWarnsAndKeepsTheRest) {
    TempDir tmp;
    std::string dir = tmp.path + "/gateway";
    write_status(dir, ::getpid());
    FakeSupervisor sup(dir, nullptr);  // its parent is this test
    ASSERT_GT(sup.supervise(), 0);
    auto r = resolve(s6_target(dir), "/sys/fs/cgroup");

    EXPECT_NE(find_process(r, "s6-supervise of " + dir), nullptr);
    EXPECT_NE(find_process(r, "s6 service " + dir), nullptr);
    EXPECT_EQ(find_process(r, "s6-svscan of " + tmp.path), nullptr);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("is not s6-svscan"), std::string::npos) << r.warnings[0];
}
