// The user and group lookup `run --user` makes without NSS.
#include <gtest/gtest.h>

#include "base/user_db.h"

namespace liveguard {
namespace {

const char* kPasswd =
    "# the machine's users\n"
    "root:x:0:0:root:/root:/bin/bash\n"
    "\n"
    "+nisuser::::::\n"
    "-excluded:x:5:5::/:/bin/sh\n"
    "broken:x:12\n"
    "nouid:x::100::/:/bin/sh\n"
    "baduid:x:12a:100::/:/bin/sh\n"
    "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\r\n"
    "1001:x:1005:1005:a name that is a number:/home/n:/bin/sh\n"
    "bob:x:1001:1001:Bob:/home/bob:/bin/sh\n"
    "short:x:1002:1002";

TEST(UserDb, FindsAUserByNameWithItsIdsAndIgnoresACarriageReturn) {
    auto a = find_in_passwd(kPasswd, "alice");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->name, "alice");
    EXPECT_EQ(a->uid, 1000u);
    EXPECT_EQ(a->gid, 1000u);
}

TEST(UserDb, FindsAUserByUidWhenNoNameMatches) {
    auto a = find_in_passwd(kPasswd, "0");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->name, "root");
    EXPECT_EQ(a->uid, 0u);
}

TEST(UserDb, ANameThatIsANumberIsTakenAsTheNameFirst) {
    auto a = find_in_passwd(kPasswd, "1001");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->name, "1001");
    EXPECT_EQ(a->uid, 1005u);
    auto b = find_in_passwd(kPasswd, "1000");
    ASSERT_TRUE(b);
    EXPECT_EQ(b->name, "alice");
}

TEST(UserDb, EntriesWithMissingOrBadFieldsCommentsAndCompatLinesAreSkipped) {
    EXPECT_FALSE(find_in_passwd(kPasswd, "broken"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "nouid"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "baduid"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "12"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "+nisuser"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "excluded"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "# the machine's users"));
    EXPECT_FALSE(find_in_passwd(kPasswd, ""));
    EXPECT_FALSE(find_in_passwd(kPasswd, "nobody"));
    EXPECT_FALSE(find_in_passwd(kPasswd, "-1"));
    EXPECT_FALSE(find_in_passwd("", "root"));
    // Four fields are enough: the home and shell are not needed.
    auto s = find_in_passwd(kPasswd, "short");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->uid, 1002u);
}

TEST(UserDb, GroupsListingTheUserFollowThePrimaryGroupEachOnce) {
    const char* group =
        "# groups\n"
        "root:x:0:\n"
        "adm:x:4:syslog,alice\n"
        "alice:x:1000:\n"
        "sudo:x:27:bob,alice,carol\n"
        "again:x:4:alice\n"
        "broken:x:30\n"
        "badgid:x:3x:alice\n"
        "alicex:x:31:alicexx,xalice\n"
        "docker:x:999:alice\n"
        "spaced:x:1234:syslog, alice ,bob";
    EXPECT_EQ(groups_in_group_file(group, "alice", 1000), (std::vector<gid_t>{1000, 4, 27, 999, 1234}));
    EXPECT_EQ(groups_in_group_file(group, "bob", 1001), (std::vector<gid_t>{1001, 27, 1234}));
    EXPECT_EQ(groups_in_group_file(group, "nobody", 65534), (std::vector<gid_t>{65534}));
    EXPECT_EQ(groups_in_group_file("", "alice", 1000), (std::vector<gid_t>{1000}));
}

}  // namespace
}  // namespace liveguard
