// Inputs that crashed a parser, or broke what its header promises, found
// by the libFuzzer targets (tests/fuzz/) or while fixing what they found.
// Each is also a seed in tests/fuzz/corpus/ (the deep JSON at seed size).
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "base/json.h"
#include "policy/pidfile.h"
#include "policy/policy.h"

using namespace liveguard;

namespace {

// The message of the PolicyError `text` raises; "" when it parses.
std::string policy_error(const std::string& text) {
    try {
        parse_policy(text, "p.toml");
    } catch (const PolicyError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(FuzzRegress, PidFileCutAfterAnInnerBraceIsStillBeingWritten) {
    // The Hermes record with an argv entry that ends in '}', read before
    // its start_time was written: a record without start_time would skip
    // the PID-reuse check.
    std::string whole =
        "{\"pid\": 1234, \"kind\": \"hermes-gateway\", \"argv\": [\"hermes\", \"gateway\", "
        "\"run\", \"{\\\"pid\\\": 9}\"], \"start_time\": 987654}\n";
    std::string torn = whole.substr(0, whole.find("9}") + 2);
    auto r = parse_pid_file(torn);
    ASSERT_TRUE(std::holds_alternative<PidFileProblem>(r));
    EXPECT_EQ(std::get<PidFileProblem>(r), PidFileProblem::Incomplete);
    EXPECT_EQ(std::get<PidFileProblem>(parse_pid_file("{\"pid\": 12, \"a\": {}")),
              PidFileProblem::Incomplete);

    auto full = parse_pid_file(whole);
    ASSERT_TRUE(std::holds_alternative<PidFileRecord>(full));
    EXPECT_EQ(std::get<PidFileRecord>(full).start_time.value_or(0), 987654u);

    // What the fuzzer found: quotes out of step, so the object never closes.
    EXPECT_EQ(std::get<PidFileProblem>(parse_pid_file(
                  "{\"pid\": 1234, \"kind\": \"he: 1234, \"kind\": \"hermes-gateway\", \"argv\": "
                  "[\"hrmes-gateway\", \"argv\": [\"hermes\", \"gateway\", \"run\"], \"start_time\": 987654}")),
              PidFileProblem::Incomplete);
}

TEST(FuzzRegress, PolicyTableHeaderWithoutAKeyIsAnErrorNotAnAbort) {
    // toml++ 3.3.0 failed an assertion (abort) on these.
    EXPECT_EQ(policy_error("[[[protprotect)\n"),
              "p.toml:1: a table header needs a name inside its brackets, e.g. [[protect]] or [sessions]");
    EXPECT_EQ(policy_error("[[protect]]\npid = 1\n[=\n").substr(0, 9), "p.toml:3:");
    EXPECT_EQ(policy_error("[[ [protect]]\n").substr(0, 9), "p.toml:1:");  // toml++'s own error
}

TEST(FuzzRegress, PolicyBraceWhereAnArrayValueGoesIsAnErrorNotAnAbort) {
    EXPECT_EQ(policy_error("[[protect]]\r\npid =[\n} \"e"),
              "p.toml:3: `}` inside an array; an array ends with `]`");
    EXPECT_EQ(policy_error("[sessions]\ntag = [\"/a\", }]\n"),
              "p.toml:2: `}` inside an array; an array ends with `]`");
}

TEST(FuzzRegress, PolicyDateThenALoneDigitIsAnErrorNotAnAbort) {
    // toml++ read on for a date-time's time and failed an assertion.
    EXPECT_EQ(policy_error("[[protect]]\npid = 2026-11-30 1\n"),
              "p.toml:2: a date followed by a space and a lone digit; a date-time is written "
              "2026-11-30 07:32:00");
    EXPECT_EQ(policy_error("[sessions]\ntag = [2_026-11-30 1]\n").substr(0, 9), "p.toml:2:");
    // The fuzzer's input: the value follows four tabs.
    EXPECT_EQ(policy_error("[[protect]]\np=\t\t\t\t3767----id 7 policy\n").substr(0, 9), "p.toml:2:");
    // A real date-time is toml++'s to judge (here: not a pid).
    EXPECT_EQ(policy_error("[[protect]]\npid = 2026-11-30 07:32:00\n"),
              "p.toml:2: `pid` must be a positive integer");
}

TEST(FuzzRegress, PolicyNonAsciiOutsideStringsIsAnError) {
    // U+0485 after a number reached __builtin_unreachable() in toml++;
    // U+2028 where an array expects a value failed an assertion.
    for (std::string text : {std::string("[[protect]]\npid = 42\xd2\x85\n"),
                             std::string("[sessions]\ntag = [\xe2\x80\xa8]\n"),
                             std::string("[[protect]]\n\xc2\xa7pid = 1\n")}) {
        std::string e = policy_error(text);
        EXPECT_EQ(e.substr(0, 9), "p.toml:2:") << e;
        EXPECT_NE(e.find("non-ASCII character outside a quoted string"), std::string::npos) << e;
    }
}

TEST(FuzzRegress, PolicyFloatPidBeyondInt64IsRefusedWithoutConversion) {
    // toml++ converted the float to int64 with an out-of-range cast.
    EXPECT_EQ(policy_error("[[protect]]\npid =\t777777777777777777777777.7\n"),
              "p.toml:2: `pid` must be a positive integer");
    EXPECT_EQ(policy_error("[[protect]]\npid = 42.0\n"), "p.toml:2: `pid` must be a positive integer");
}

TEST(FuzzRegress, PolicyLineContinuedByABackslashBeforeNonAscii) {
    // Valid TOML that reached __builtin_unreachable() in toml++ 3.3.0.
    auto p = parse_policy("[[protect]]\npidfile = \"\"\"/a\\\n  \xc2\xa7/b\"\"\"\n", "p.toml");
    ASSERT_EQ(p.targets.size(), 1u);
    EXPECT_EQ(p.targets[0].pattern, "/a\xc2\xa7/b");
}

TEST(FuzzRegress, PolicyChecksSkipStringsAndComments) {
    // What the checks above refuse is fine inside strings and comments, and
    // in headers and arrays written as TOML allows.
    auto p = parse_policy(
        "# [[[ } \xc2\xa7\n"
        "[[ protect ]]\n"
        "pidfile = \"\"\"/a\n[[[x]]]\n}\xc2\xa7\"\"\"\n"
        "[[protect]]\n"
        "cgroup = '/sys/fs/cgroup/[}'  # } [[[\n"
        "[sessions]\n"
        "tag = [\n"
        "  \"/sys/fs/cgroup/a\",  # }\n"
        "  '/sys/fs/cgroup/b\xc3\xa9',\n"
        "]\n"
        "parent = \"/sys/fs/cgroup/t\xc3\xabsts\"\n",
        "p.toml");
    ASSERT_EQ(p.targets.size(), 2u);
    EXPECT_EQ(p.targets[0].pattern, "/a\n[[[x]]]\n}\xc2\xa7");
    EXPECT_EQ(p.targets[1].pattern, "/sys/fs/cgroup/[}");
    ASSERT_EQ(p.session_tags.size(), 2u);
    EXPECT_EQ(p.session_tags[1], "/sys/fs/cgroup/b\xc3\xa9");
    EXPECT_EQ(p.session_parent.value_or(""), "/sys/fs/cgroup/t\xc3\xabsts");
}

