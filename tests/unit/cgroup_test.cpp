#include <gtest/gtest.h>

#include "base/cgroup.h"
#include "kernel/protected_cgroups.h"
#include "base/error.h"

using liveguard::find_cgroup2_mount;

TEST(Cgroup2Mount, PureV2) {
    const char* info =
        "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
        "26 23 0:24 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n"
        "27 23 0:25 / /sys/fs/bpf rw,nosuid - bpf bpf rw,mode=700\n";
    EXPECT_EQ(find_cgroup2_mount(info).value_or(""), "/sys/fs/cgroup");
}

TEST(Cgroup2Mount, Hybrid) {
    const char* info =
        "25 23 0:23 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
        "26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid shared:5 - cgroup2 cgroup2 rw,nsdelegate\n"
        "27 25 0:25 / /sys/fs/cgroup/systemd rw,nosuid shared:6 - cgroup cgroup "
        "rw,xattr,name=systemd\n"
        "28 25 0:26 / /sys/fs/cgroup/memory rw shared:7 - cgroup cgroup rw,memory\n";
    EXPECT_EQ(find_cgroup2_mount(info).value_or(""), "/sys/fs/cgroup/unified");
}

TEST(Cgroup2Mount, NoneMounted) {
    const char* info =
        "25 23 0:23 / /sys/fs/cgroup ro - tmpfs tmpfs ro\n"
        "28 25 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
    EXPECT_FALSE(find_cgroup2_mount(info));
    EXPECT_FALSE(find_cgroup2_mount(""));
}

TEST(Cgroup2Mount, PrefersTheHierarchyRootOverABindMountOfASubtree) {
    const char* info =
        "40 30 0:24 /user.slice /mnt/sub rw - cgroup2 cgroup2 rw\n"
        "26 23 0:24 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    EXPECT_EQ(find_cgroup2_mount(info).value_or(""), "/sys/fs/cgroup");
}

TEST(Cgroup2Mount, UnescapesSpaces) {
    const char* info = "26 23 0:24 / /mnt/cg\\040two rw - cgroup2 none rw\n";
    EXPECT_EQ(find_cgroup2_mount(info).value_or(""), "/mnt/cg two");
}

TEST(Cgroup2Mount, OptionalFieldsAndGarbageLines) {
    const char* info =
        "garbage\n"
        "\n"
        "1 2 3\n"
        "26 23 0:24 / /sys/fs/cgroup rw shared:4 master:1 unbindable - cgroup2 cgroup2 rw\n";
    EXPECT_EQ(find_cgroup2_mount(info).value_or(""), "/sys/fs/cgroup");
}

TEST(CgroupLevel, CountsComponentsBelowTheMount) {
    EXPECT_EQ(liveguard::cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup"), 0);
    EXPECT_EQ(liveguard::cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup/a"), 1);
    EXPECT_EQ(liveguard::cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroup/a/b/c/"), 3);
    EXPECT_THROW(liveguard::cgroup_level("/sys/fs/cgroup", "/sys/fs/cgroupx/a"), liveguard::Error);
    EXPECT_THROW(liveguard::cgroup_level("/sys/fs/cgroup", "/tmp"), liveguard::Error);
}

// What the kernel tests before asking the protected-cgroup map: each
// protected id's bit set, as the BPF side computes it from the same
// header, and nothing else.
TEST(CgroupFilter, SetsTheBitOfEveryProtectedIdAndNoOther) {
    std::vector<std::uint64_t> ids = {1, 63, 64, 4242, (1ull << 40) + 3, LG_CGROUP_FILTER_BITS + 7};
    lg_cgroup_filter f = liveguard::cgroup_filter_of(ids);
    auto has = [&](std::uint64_t id) {
        return (f.words[lg_cgroup_filter_word(id)] & lg_cgroup_filter_bit(id)) != 0;
    };
    for (std::uint64_t id : ids) EXPECT_TRUE(has(id)) << id;
    // An id one filter-width away lands on the same bit: a lookup, never a miss.
    EXPECT_TRUE(has(7));
    int set = 0;
    for (std::uint64_t w : f.words) set += __builtin_popcountll(w);
    EXPECT_EQ(set, 6);  // six ids, six distinct bits
    for (std::uint64_t id : {0ull, 2ull, 62ull, 65ull, 4243ull}) EXPECT_FALSE(has(id)) << id;
    lg_cgroup_filter empty = liveguard::cgroup_filter_of({});
    for (std::uint64_t w : empty.words) EXPECT_EQ(w, 0u);
}
