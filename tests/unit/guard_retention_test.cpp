#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kernel/guarded_inodes.h"
#include "watcher/guard_retention.h"

using namespace liveguard;

TEST(GuardRetention, AGuardOutlivesItsNameButNotItsInodeOrItsOwner) {
    const InodeId wanted_again{1, 10}, renamed_aside{1, 11}, unlinked{1, 12}, owner_gone{1, 13};
    std::map<InodeId, HeldGuard> held = {
        {wanted_again, {"s6 \"/run/service/a\"", 1}},
        {renamed_aside, {"s6 \"/run/service/a\"", 1}},
        {unlinked, {"s6 \"/run/service/a\"", 0}},
        {owner_gone, {"s6 \"/run/service/b\"", 1}},
    };
    auto release = guards_to_release(held, {wanted_again, {1, 20}}, {"s6 \"/run/service/a\""});
    EXPECT_EQ(release, (std::set<InodeId>{unlinked, owner_gone}));
}

TEST(GuardRetention, AWantedInodeStaysEvenWhenUnlinked) {
    // Still resolved to (a race with its removal): the next pass decides.
    std::map<InodeId, HeldGuard> held = {{{1, 10}, {"t", 0}}};
    EXPECT_TRUE(guards_to_release(held, {{1, 10}}, {}).empty());
}

TEST(GuardedInodes, AHeldInodeCountsItsNamesAcrossRenameAndUnlink) {
    char tmpl[] = "/tmp/liveguard-hold-XXXXXX";
    ASSERT_TRUE(::mkdtemp(tmpl));
    std::string dir = tmpl;
    std::string control = dir + "/control";
    ASSERT_EQ(::mkfifo(control.c_str(), 0600), 0);
    // O_PATH: holding a FIFO must not block waiting for a writer.
    auto held = hold_inode(control);
    ASSERT_TRUE(held);
    auto key = inode_key(control);
    ASSERT_TRUE(key);
    EXPECT_EQ(held->key.dev, key->dev);
    EXPECT_EQ(held->key.ino, key->ino);
    EXPECT_EQ(link_count(*held), 1u);
    ASSERT_EQ(::rename(control.c_str(), (dir + "/control.old").c_str()), 0);
    EXPECT_EQ(link_count(*held), 1u);
    ASSERT_EQ(::unlink((dir + "/control.old").c_str()), 0);
    EXPECT_EQ(link_count(*held), 0u);
    EXPECT_FALSE(hold_inode(control));
    std::filesystem::remove_all(dir);
}
