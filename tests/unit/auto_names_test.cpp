// The names whose exec starts a session: how entries are read, how names
// lose their version suffix (as the kernel strips it), and the keys the
// kernel looks up.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/auto_names.h"
#include "kernel/exec_words.h"
#include "liveguard/abi.h"
#include "policy/policy.h"
#include "sessions/process_sessions.h"

using namespace liveguard;

TEST(AutoNames, EntriesAreAProgramOrAnInterpreterRunningAModule) {
    EXPECT_EQ(parse_auto_entry("pytest"), (AutoEntry{"pytest", ""}));
    EXPECT_EQ(parse_auto_entry("python3 -m pytest"), (AutoEntry{"python3", "pytest"}));
    EXPECT_EQ(parse_auto_entry("  tox  "), (AutoEntry{"tox", ""}));
    for (const std::string& bad : std::vector<std::string>{"", "python3 pytest", "python3 -c pytest", "/usr/bin/pytest",
                                                            "a -m b c", "python3 -m", std::string(80, 'x')})
        EXPECT_THROW(parse_auto_entry(bad), std::invalid_argument) << bad;
}

TEST(AutoNames, VersionSuffixesAreDroppedAsTheKernelDropsThem) {
    EXPECT_EQ(auto_base_name("python3.11"), "python");
    EXPECT_EQ(auto_base_name("/usr/bin/python3"), "python");
    EXPECT_EQ(auto_base_name("/venv/bin/python"), "python");
    EXPECT_EQ(auto_base_name("pytest-3"), "pytest");
    EXPECT_EQ(auto_base_name("py.test"), "py.test");
    EXPECT_EQ(auto_base_name("tox"), "tox");
    EXPECT_EQ(auto_base_name("2to3-2.7"), "2to3");
    EXPECT_EQ(auto_base_name("3.11"), "3.11");  // all suffix: kept whole
}

TEST(AutoNames, KeysNameProgramsInterpretersAndModules) {
    auto keys = auto_name_keys({{"pytest", ""}, {"python3", "pytest"}, {"python", "tox"}});
    auto flags_of = [&](std::uint64_t k) {
        auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& p) { return p.first == k; });
        return it == keys.end() ? 0u : it->second;
    };
    EXPECT_EQ(flags_of(fnv1a("pytest")), static_cast<std::uint32_t>(LG_AUTO_PROGRAM));
    // python3 and python are one interpreter once the suffix is gone.
    EXPECT_EQ(flags_of(fnv1a("python")), static_cast<std::uint32_t>(LG_AUTO_INTERPRETER));
    EXPECT_EQ(flags_of(fnv1a(std::string("python\0pytest", 13))), static_cast<std::uint32_t>(LG_AUTO_MODULE));
    EXPECT_EQ(flags_of(fnv1a(std::string("python\0tox", 10))), static_cast<std::uint32_t>(LG_AUTO_MODULE));
    EXPECT_EQ(keys.size(), 4u);
}

TEST(AutoNames, ThePolicyReadsAutoAndReap) {
    Policy p = parse_policy("[sessions]\nauto = [\"pytest\", \"python3 -m pytest\"]\nreap = false\n", "t.toml");
    ASSERT_EQ(p.auto_sessions.size(), 2u);
    EXPECT_EQ(p.auto_sessions[1], (AutoEntry{"python3", "pytest"}));
    EXPECT_FALSE(p.reap);
    EXPECT_TRUE(parse_policy("", "t.toml").auto_sessions.empty());
    EXPECT_TRUE(parse_policy("", "t.toml").reap);
    try {
        parse_policy("[sessions]\nauto = [\"python3 pytest\"]\n", "t.toml");
        FAIL() << "a bad entry was accepted";
    } catch (const PolicyError& e) {
        EXPECT_NE(std::string(e.what()).find("t.toml:2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parse_policy("[sessions]\nreap = 1\n", "t.toml"), PolicyError);
    EXPECT_THROW(parse_policy("[sessions]\nauto = \"pytest\"\n", "t.toml"), PolicyError);
}

TEST(AutoNames, ASessionIsNamedAfterItsRunner) {
    EXPECT_EQ(automatic_session_name({"/usr/bin/python3", "/usr/bin/pytest", "-x"}, 12), "pytest[12]");
    EXPECT_EQ(automatic_session_name({"/usr/bin/python3", "-m", "pytest"}, 7), "pytest[7]");
    EXPECT_EQ(automatic_session_name({"python3.11", "-X", "dev", "-mpytest"}, 7), "pytest[7]");
    EXPECT_EQ(automatic_session_name({"tox", "-e", "py311"}, 9), "tox[9]");
    EXPECT_EQ(automatic_session_name({}, 9), "session[9]");
}
