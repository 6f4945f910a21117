// Files on btrfs, where stat() gives each subvolume (a snapshot is one)
// its own anonymous device and every subvolume numbers its inodes anew:
// a protected tree is matched in its subvolume, and the same inode number
// in a snapshot of it is another file. Run by the btrfs lane
// (LIVEGUARD_SUITE=btrfs, with LIVEGUARD_TEST_ROOT on a btrfs mount);
// elsewhere they skip. BtrfsGuard.* go red in the control run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "harness.h"

using namespace lgtest;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = test_root() + "/lgbtrfs";
const std::string kVolume = kRoot + "/volume";      // a subvolume
const std::string kSnapshot = kRoot + "/snapshot";  // a snapshot of it, taken before load
const std::string kTree = "/home/.hermes";

int open_for_writing(const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
}

int create(const std::string& path) {
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
}

class BtrfsGuard : public ::testing::Test {
protected:
    void SetUp() override {
        struct statfs sfs {};
        if (::statfs(test_root().c_str(), &sfs) != 0 || sfs.f_type != BTRFS_SUPER_MAGIC)
            GTEST_SKIP() << test_root() << " is not on btrfs (the btrfs lane sets LIVEGUARD_TEST_ROOT)";
        lg({"unload"});
        run_cmd({"btrfs", "subvolume", "delete", kSnapshot});
        run_cmd({"btrfs", "subvolume", "delete", kVolume});
        fs::remove_all(kRoot);
        fs::create_directories(kRoot);
        auto made = run_cmd({"btrfs", "subvolume", "create", kVolume});
        ASSERT_EQ(made.status, 0) << made.out << made.err;
        fs::create_directories(kVolume + kTree + "/sessions");
        write_text(kVolume + kTree + "/config.yaml", "model: live\n");
        write_text(kVolume + kTree + "/gateway.pid", std::to_string(::getpid()) + "\n");
        auto snap = run_cmd({"btrfs", "subvolume", "snapshot", kVolume, kSnapshot});
        ASSERT_EQ(snap.status, 0) << snap.out << snap.err;
        write_text(kRoot + "/policy.toml", "[[protect]]\npath = \"" + kVolume + kTree + "\"\n");
        auto r = lg({"load", "--config", kRoot + "/policy.toml"});
        ASSERT_EQ(r.status, 0) << r.out << r.err;
        ASSERT_TRUE(wait_until([] { return lg({"status", "--json"}).out.find("\"kind\":\"path\"") != std::string::npos; }))
            << lg({"status", "--json"}).out;
        if (sabotaged()) take_path_hooks_off();
    }
    void TearDown() override { lg({"unload"}); }
};

}  // namespace

TEST_F(BtrfsGuard, ATreeInASubvolumeIsProtectedAndItsSnapshotIsAnotherTree) {
    struct stat live {}, copy {};
    ASSERT_EQ(::stat((kVolume + kTree + "/config.yaml").c_str(), &live), 0);
    ASSERT_EQ(::stat((kSnapshot + kTree + "/config.yaml").c_str(), &copy), 0);
    // What makes btrfs different: the same inode number, another device.
    ASSERT_EQ(live.st_ino, copy.st_ino);
    ASSERT_NE(live.st_dev, copy.st_dev);
    Session s;
    EXPECT_EQ(s.as_member([] { return open_for_writing(kVolume + kTree + "/config.yaml"); }), EPERM);
    EXPECT_EQ(s.as_member([] { return open_for_writing(kVolume + kTree + "/gateway.pid"); }), EPERM);
    EXPECT_EQ(s.as_member([] { return create(kVolume + kTree + "/sessions/new.db"); }), EPERM);
    EXPECT_EQ(read_file(kVolume + kTree + "/config.yaml").value_or(""), "model: live\n");
    // The snapshot is not protected: a test may change its own copy.
    EXPECT_EQ(s.as_member([] { return open_for_writing(kSnapshot + kTree + "/config.yaml"); }), 0);
    EXPECT_EQ(s.as_member([] { return create(kSnapshot + kTree + "/sessions/new.db"); }), 0);
}
