#include <gtest/gtest.h>

#include <algorithm>

#include "kernel/exec_words.h"
#include "kernel/guarded_inodes.h"

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

#include "events/event_details.h"
#include "events/event_format.h"
#include "events/journal_record.h"
#include "base/json.h"

TEST(EventDetails, ArgsSplitAtNulAndKeepACutLastOne) {
    std::string b("python3\0-m\0pytest\0tests/x", 25);
    auto v = split_args(b);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[2], "pytest");
    EXPECT_EQ(v[3], "tests/x");
    EXPECT_TRUE(split_args("").empty());
}

TEST(EventDetails, PytestIdFromEnvironmentAndPluginLog) {
    std::string env("A=1\0PYTEST_CURRENT_TEST=t.py::test_a (call)\0B=2\0", 47);
    EXPECT_EQ(pytest_test_from_environ(env), "t.py::test_a (call)");
    EXPECT_EQ(pytest_test_from_environ(std::string("A=1\0", 4)), "");
    std::string log = "100\tt.py::a (setup)\n200\tt.py::a (call)\n300\tt.py::b (setup)\n400\tt.py::b (ca";
    EXPECT_EQ(test_at_since(log, 250), "t.py::a (call)");
    EXPECT_EQ(test_at_since(log, 50), "");
    EXPECT_EQ(test_at_since(log, 999), "t.py::b (setup)");  // the torn last line is not read
}

TEST(EventFormat, JournalLineForPeopleShowsTheCulprit) {
    auto r = parse_journal_record(
        "{\"time\":\"T\",\"verdict\":\"denied\",\"hook\":\"task_kill\",\"pid\":7,\"comm\":\"sh\","
        "\"act\":\"sent SIGTERM to gw[9]\",\"session_cgroup_id\":5,\"session_name\":\"ci\","
        "\"exe\":null,\"culprit_gone\":true,\"argv\":[\"sh\"],\"test\":\"t.py::x (call)\","
        "\"parents\":[{\"pid\":6,\"comm\":\"python3\"}],\"target_protected_by\":\"pidfile \\\"/p\\\"\"}");
    ASSERT_TRUE(r.has_value());
    std::string text = format_journal_text(*r, false);
    EXPECT_EQ(text,
              "T DENIED task_kill: sh[7] sent SIGTERM to gw[9] (session ci)\n"
              "    test: t.py::x (call)\n"
              "    exe: (process gone)\n"
              "    argv: [\"sh\"]\n"
              "    parents: python3[6]\n"
              "    target protected by: pidfile \"/p\"");
}
