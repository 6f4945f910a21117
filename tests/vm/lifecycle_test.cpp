// Loading, unloading, and what the CLI says about it, on the real kernel.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

#include "base/cgroup.h"
#include "harness.h"
#include "kernel/hook_args.h"
#include "kernel/kernel_btf.h"
#include "kernel/pinned_maps.h"
#include "kernel/skeleton.h"
#include "kernel/protected_cgroups.h"

using namespace lgtest;

namespace {

bool exists(const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

// No load in TearDown: every fixture loads what it needs in SetUp, and a
// load after UnloadStops... would be undone at once by the next fixture's
// unload (a load costs a minute and a half on 7.x fmod_ret under emulation).
class Lifecycle : public ::testing::Test {
protected:
    void SetUp() override { ensure_guard(); }
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

// The argument table against this kernel: every LSM program finds the
// arguments it reads, by name, in this kernel's prototype of its hook, in
// both forms. One that did not would be left out, its door open.
TEST_F(Lifecycle, EveryHookFindsItsArgumentsOnThisKernel) {
    liveguard::Skeleton skel = liveguard::open_skeleton();
    auto newer = liveguard::kernel_functions_among(liveguard::newer_hook_functions(skel->obj, liveguard::Attach::Lsm));
    std::size_t hooks = liveguard::declared_hook_args(skel->obj).size();
    EXPECT_GT(hooks, 30u);
    for (auto attach : {liveguard::Attach::Lsm, liveguard::Attach::FmodRet}) {
        for (const auto& [hook, why] : liveguard::unresolved_hooks(skel->obj, attach)) {
            // A hook this kernel is older than (an older one covers it).
            if (liveguard::hook_newer_than_its_cover(hook) && !newer.count("bpf_lsm_" + hook)) continue;
            ADD_FAILURE() << liveguard::attach_name(attach) << ": " << hook << ": " << why;
        }
    }
    std::printf("%zu hooks resolved by name in both forms on this kernel\n", hooks);
}

// doctor tries the forms in load's order, so it names the form load took
// on this boot (and the one the suite's lane is meant to prove).
TEST_F(Lifecycle, DoctorNamesTheFormLoadChose) {
    auto status = lg({"status", "--json"});
    auto doctor = lg({"doctor", "--json"});
    std::string loaded;
    for (const char* form : {"lsm", "fmod_ret", "audit-only"})
        if (status.out.find(std::string("\"attach\":\"") + form + "\"") != std::string::npos) loaded = form;
    ASSERT_FALSE(loaded.empty()) << status.out;
    EXPECT_NE(doctor.out.find("\"form\":\"" + loaded + "\""), std::string::npos)
        << "load chose " << loaded << "; doctor said: " << doctor.out;
    if (const char* expected = std::getenv("LIVEGUARD_EXPECT_ATTACH"))
        EXPECT_EQ(loaded, expected) << status.out;
}

TEST_F(Cli, DoctorFindsEnforcementPossibleHere) {
    auto r = lg({"doctor"});
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("enforcement: possible"), std::string::npos) << r.out;
    auto j = lg({"doctor", "--json"});
    EXPECT_NE(j.out.find("\"enforcement_possible\":true"), std::string::npos) << j.out;
}
