#include <gtest/gtest.h>

#include <algorithm>

#include "exec_words.h"
#include "guarded_inodes.h"

using namespace liveguard;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST(ExecWords, Fnv1aMatchesTheReferenceVectors) {
    // The kernel side hashes the same way; these are FNV-1a's published values.
    EXPECT_EQ(fnv1a(""), 0xcbf29ce484222325ull);
    EXPECT_EQ(fnv1a("a"), 0xaf63dc4c8601ec8cull);
    EXPECT_EQ(fnv1a("foobar"), 0x85944171f73967e8ull);
}

TEST(ExecWords, UnitsAreNamedWithAndWithoutTheirSuffix) {
    auto w = unit_words("hermes-gateway");
    EXPECT_TRUE(has(w, "hermes-gateway"));
    EXPECT_TRUE(has(w, "hermes-gateway.service"));
    w = unit_words("hermes-gateway.service");
    EXPECT_TRUE(has(w, "hermes-gateway"));
    w = unit_words("hermes.socket");
    EXPECT_EQ(w.size(), 1u);
}

TEST(ExecWords, DirectoriesAreNamedEveryWayACommandLineCan) {
    auto w = path_words("/run/service/gateway-default/", true);
    EXPECT_TRUE(has(w, "/run/service/gateway-default"));
    EXPECT_TRUE(has(w, "/run/service/gateway-default/"));
    EXPECT_TRUE(has(w, "gateway-default"));
    EXPECT_TRUE(has(w, "./gateway-default/"));
    auto scan = path_words("/run/service", false);
    EXPECT_FALSE(has(scan, "service"));
    EXPECT_TRUE(has(scan, "/run/service/"));
}

TEST(ExecWords, MutatingVerbsCoverTheHermesGuardsList) {
    for (const char* v : {"restart", "start", "stop", "kill", "reload", "reset-failed", "enable",
                          "disable", "mask", "unmask", "daemon-reload", "try-restart",
                          "reload-or-restart"})
        EXPECT_TRUE(has(mutating_systemctl_verbs(), v)) << v;
    for (const char* v : {"status", "show", "is-active", "list-units"})
        EXPECT_FALSE(has(mutating_systemctl_verbs(), v)) << v;
}

TEST(GuardedInodes, KeyFollowsSymlinksAndUsesTheKernelsDevEncoding) {
    auto a = inode_key("/proc/self/exe");
    ASSERT_TRUE(a.has_value());
    EXPECT_NE(a->ino, 0u);
    EXPECT_FALSE(inode_key("/nonexistent/liveguard").has_value());
}
