// Loading, unloading, and what the CLI says about it, on the real kernel.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <fstream>
#include <unistd.h>

#include "base/cgroup.h"
#include "harness.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_cgroups.h"

using namespace lgtest;

namespace {

bool exists(const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

class Lifecycle : public ::testing::Test {
protected:
    void SetUp() override { ensure_guard(); }
    void TearDown() override { lg({"load"}); }
};

class Cli : public Lifecycle {};

}  // namespace

TEST_F(Lifecycle, LoadTwiceAttachesOnce) {
    EXPECT_EQ(attached_links_of("lg_task_kill"), 1);
    EXPECT_EQ(attached_links_of("lg_task_alloc"), 1);
    auto r = lg({"load"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("already loaded"), std::string::npos) << r.out;
    EXPECT_EQ(attached_links_of("lg_task_kill"), 1);
    EXPECT_EQ(attached_links_of("lg_task_alloc"), 1);
}

TEST_F(Lifecycle, ProtectionSurvivesAReload) {
    // load reuses pinned maps, so a load after an interrupted one (link
    // pin missing) keeps every protection already recorded.
    Target t;
    protect(t.pid());
    ASSERT_EQ(::unlink("/sys/fs/bpf/liveguard/link_lg_task_kill"), 0);
    ASSERT_EQ(lg({"load"}).status, 0);
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }), EPERM);
    EXPECT_TRUE(t.untouched());
}

// A load that keeps the maps of an earlier one (interrupted, or another
// version's without the filter map) must give the kernel a filter with the
// kept protected cgroups in it, or every kill would skip them.
TEST_F(Lifecycle, ALoadOnKeptMapsRebuildsTheProtectedCgroupFilter) {
    std::string unit = cgroup_root() + "/lg-kept-unit.service";
    ::mkdir(unit.c_str(), 0755);
    {
        auto maps = liveguard::PinnedMaps::open();
        liveguard::ProtectedCgroups(maps).add(liveguard::cgroup_id_of(unit), 0);
    }
    ASSERT_EQ(::unlink("/sys/fs/bpf/liveguard/link_lg_task_kill"), 0);
    ASSERT_EQ(::unlink("/sys/fs/bpf/liveguard/lg_cgroup_filter"), 0);
    auto r = lg({"load"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_TRUE(exists("/sys/fs/bpf/liveguard/lg_cgroup_filter"));
    {
        Target t;
        write_text(unit + "/cgroup.procs", std::to_string(t.pid()));
        Session s;
        EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGKILL); }), EPERM);
        EXPECT_TRUE(t.untouched());
    }
    {
        auto maps = liveguard::PinnedMaps::open();
        liveguard::ProtectedCgroups(maps).remove(liveguard::cgroup_id_of(unit));
    }
    ::rmdir(unit.c_str());
}

// Pins left by another version (here: one map fewer) name the way out, and
// unload clears them.
TEST_F(Lifecycle, PinsOfAnotherVersionAreUnloadable) {
    ASSERT_EQ(::unlink("/sys/fs/bpf/liveguard/lg_cgroup_filter"), 0);
    auto st = lg({"status"});
    EXPECT_NE(st.status, 0);
    EXPECT_NE(st.err.find("another version"), std::string::npos) << st.err;
    EXPECT_NE(st.err.find("liveguard-bpf unload"), std::string::npos) << st.err;
    auto r = lg({"unload"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(exists("/sys/fs/bpf/liveguard"));
    EXPECT_EQ(attached_links_of("lg_task_kill"), 0);
    EXPECT_EQ(lg({"load"}).status, 0);
    EXPECT_EQ(attached_links_of("lg_task_kill"), 1);
}

TEST_F(Lifecycle, UnloadStopsEnforcementAndLeavesNoPins) {
    Target t;
    protect(t.pid());
    Session s;  // tagged while loaded: a real session until the unload
    ASSERT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGTERM); }), EPERM);
    auto r = lg({"unload"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(exists("/sys/fs/bpf/liveguard"));
    EXPECT_EQ(attached_links_of("lg_task_kill"), 0);
    EXPECT_EQ(attached_links_of("lg_task_alloc"), 0);
    EXPECT_EQ(s.as_member([&] { return sys_kill(t.pid(), SIGTERM); }), 0);
    EXPECT_TRUE(t.wait_killed());

    auto st = lg({"status"});
    EXPECT_EQ(st.status, 0);
    EXPECT_NE(st.out.find("not loaded"), std::string::npos) << st.out;
    auto p = lg({"protect", "--pid", std::to_string(::getpid())});
    EXPECT_EQ(p.status, 1);
    EXPECT_NE(p.err.find("not loaded"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("sudo liveguard-bpf load"), std::string::npos) << p.err;
    auto again = lg({"unload"});
    EXPECT_EQ(again.status, 0);
    EXPECT_NE(again.out.find("not loaded"), std::string::npos) << again.out;
}

TEST_F(Cli, ProtectOfAMissingProcessSaysSo) {
    auto r = lg({"protect", "--pid", "4000000"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("no such process: 4000000"), std::string::npos) << r.err;
}

TEST_F(Cli, ProtectingAThreadProtectsItsProcess) {
    Target t({.threads = 1});
    auto r = lg({"protect", "--pid", std::to_string(t.thread_ids()[0])});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("protected " + std::to_string(t.pid())), std::string::npos) << r.out;
    auto again = lg({"protect", "--pid", std::to_string(t.pid())});
    EXPECT_NE(again.out.find("already protected"), std::string::npos) << again.out;
}

TEST_F(Cli, TagRefusesWhatIsNotASessionCgroup) {
    auto r = lg({"tag", "/tmp"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("not a cgroup v2 directory"), std::string::npos) << r.err;
    auto root = lg({"tag", cgroup_root()});
    EXPECT_EQ(root.status, 1);
    EXPECT_NE(root.err.find("root cgroup"), std::string::npos) << root.err;
    auto missing = lg({"tag", cgroup_root() + "/no-such-cgroup"});
    EXPECT_EQ(missing.status, 1);
    EXPECT_NE(missing.err.find("No such file"), std::string::npos) << missing.err;
}

TEST_F(Cli, RunReportsTheCommandsStatus) {
    EXPECT_EQ(lg({"run", "--", "sh", "-c", "exit 3"}).status, 3);
    EXPECT_EQ(lg({"run", "--", "sh", "-c", "kill -KILL $$"}).status, 128 + SIGKILL);
    auto missing = lg({"run", "--", "/nonexistent/cmd"});
    EXPECT_EQ(missing.status, 127);
    EXPECT_NE(missing.err.find("/nonexistent/cmd"), std::string::npos) << missing.err;
    auto nouser = lg({"run", "--user", "no-such-user-here", "--", "true"});
    EXPECT_EQ(nouser.status, 1);
    EXPECT_NE(nouser.err.find("no such user"), std::string::npos) << nouser.err;
}

TEST_F(Cli, RunCleansUpItsSession) {
    auto before = lg({"status", "--json"});
    // A background child outlives the command; run must end it, remove the
    // cgroup and untag it.
    auto r = lg({"run", "--", "sh", "-c", "sleep 1000 & echo $!; cat /proc/self/cgroup"});
    ASSERT_EQ(r.status, 0) << r.err;
    pid_t bg = std::stoi(r.out);
    auto stat = read_file("/proc/" + std::to_string(bg) + "/stat");
    EXPECT_TRUE(!stat || stat->find(") Z ") != std::string::npos) << *stat;
    std::string cg = r.out.substr(r.out.find("0::") + 3);
    cg.pop_back();
    EXPECT_FALSE(exists(cgroup_root() + cg)) << cg;
    auto after = lg({"status", "--json"});
    EXPECT_EQ(after.out.find(cg), std::string::npos) << after.out;
}

TEST_F(Cli, StatusListsProtectedProcessesAndSessions) {
    Target t;
    protect(t.pid());
    Session s;
    // One member that stays while status looks.
    Target member;
    {
        std::ofstream procs(s.dir() + "/cgroup.procs");
        procs << member.pid();
    }
    auto r = lg({"status", "--json"});
    ASSERT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("\"loaded\":true"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("{\"pid\":" + std::to_string(t.pid()) +
                         ",\"comm\":\"lg-gateway\",\"alive\":true"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("{\"kind\":\"cgroup\",\"path\":\"" + s.dir() + "\",\"cgroup_id\":" +
                         std::to_string(s.id()) + ",\"members\":1,"),
              std::string::npos)
        << r.out;
    auto text = lg({"status"});
    EXPECT_NE(text.out.find(std::to_string(t.pid())), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(s.dir()), std::string::npos) << text.out;
}

TEST_F(Cli, DoctorFindsEnforcementPossibleHere) {
    auto r = lg({"doctor"});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("enforcement: possible"), std::string::npos) << r.out;
    auto j = lg({"doctor", "--json"});
    EXPECT_NE(j.out.find("\"enforcement_possible\":true"), std::string::npos) << j.out;
}
