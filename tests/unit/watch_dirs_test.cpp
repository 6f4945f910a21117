// Which directories the watcher watches for a glob, and which names in
// them wake a pass: the ones the glob goes through, not their neighbours.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "policy/resolver.h"
#include "temp_dir.h"

using namespace liveguard;
namespace fs = std::filesystem;

TEST(WatchDirs, EachLevelOfAGlobWatchesTheNameBelowIt) {
    TempDir tmp;
    fs::create_directories(tmp.path + "/home/a/.hermes");
    fs::create_directories(tmp.path + "/home/b");
    auto dirs = glob_watch_dirs(tmp.path + "/home/*/.hermes/gateway.pid");
    ASSERT_EQ(dirs.size(), 4u);
    EXPECT_EQ(dirs[tmp.path + "/home"], std::set<std::string>{"*"});
    EXPECT_EQ(dirs[tmp.path + "/home/a"], std::set<std::string>{".hermes"});
    EXPECT_EQ(dirs[tmp.path + "/home/b"], std::set<std::string>{".hermes"});
    EXPECT_EQ(dirs[tmp.path + "/home/a/.hermes"], std::set<std::string>{"gateway.pid"});
}

TEST(WatchDirs, AMissingAncestorIsWatchedForAnyName) {
    TempDir tmp;
    auto dirs = glob_watch_dirs(tmp.path + "/not/yet/gateway.pid");
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(dirs[tmp.path], std::set<std::string>{"*"});
}

TEST(WatchDirs, OnlyTheNamesAGlobGoesThroughConcernIt) {
    TempDir tmp;
    fs::create_directories(tmp.path + "/run");
    auto dirs = glob_watch_dirs(tmp.path + "/run/gateway-*.pid");
    EXPECT_TRUE(watch_concerns(dirs, tmp.path + "/run", "gateway-default.pid"));
    EXPECT_TRUE(watch_concerns(dirs, tmp.path + "/run", "gateway-.pid"));
    EXPECT_FALSE(watch_concerns(dirs, tmp.path + "/run", "state.db"));
    EXPECT_FALSE(watch_concerns(dirs, tmp.path + "/run", "gateway.log"));
    // A directory the watch does not know (dropped since) is not filtered.
    EXPECT_TRUE(watch_concerns(dirs, tmp.path + "/elsewhere", "state.db"));
    watch(dirs, tmp.path + "/run", kAnyName);
    EXPECT_TRUE(watch_concerns(dirs, tmp.path + "/run", "state.db"));
}

TEST(WatchDirs, APidFileTargetWatchesItsFileNotItsNeighbours) {
    TempDir tmp;
    std::ofstream(tmp.path + "/gateway.pid") << "999999\n";
    ProtectTarget t;
    t.kind = TargetKind::PidFile;
    t.pattern = tmp.path + "/gateway.pid";
    t.source = 1;
    auto r = resolve(t, "/sys/fs/cgroup");
    EXPECT_TRUE(watch_concerns(r.watch_dirs, tmp.path, "gateway.pid"));
    EXPECT_FALSE(watch_concerns(r.watch_dirs, tmp.path, "state.db"));
    EXPECT_FALSE(watch_concerns(r.watch_dirs, tmp.path, "state.db-journal"));
}

TEST(WatchDirs, AnS6ScanDirectoryIsWatchedForTheSvscanThatStartsLater) {
    TempDir tmp;
    fs::create_directories(tmp.path + "/scan/gateway");
    ProtectTarget t;
    t.kind = TargetKind::S6;
    t.pattern = tmp.path + "/scan/gateway";
    t.source = 1;
    auto r = resolve(t, "/sys/fs/cgroup");
    EXPECT_TRUE(watch_concerns(r.watch_dirs, tmp.path + "/scan", ".s6-svscan"));
    EXPECT_TRUE(watch_concerns(r.watch_dirs, tmp.path + "/scan", "gateway"));
    EXPECT_FALSE(watch_concerns(r.watch_dirs, tmp.path + "/scan", "other-service"));
}
