// Where the pytest plugin is found, and how its log by pid is read: only
// the lines the process that has the pid now wrote.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/install_paths.h"
#include "events/event_details.h"

using namespace liveguard;

TEST(TestLogByPid, LinesFromBeforeTheProcessStartedAreAnotherProcesses) {
    // A dead process with the same pid wrote up to 150; this one started at 200.
    std::string log = "100\told.py::a (call)\n150\told.py::b (call)\n210\tt.py::a (setup)\n"
                      "220\tt.py::a (call)\n300\tt.py::b (setup)\n";
    EXPECT_EQ(test_at_since(log, 160, 200), "");
    EXPECT_EQ(test_at_since(log, 205, 200), "");
    EXPECT_EQ(test_at_since(log, 215, 200), "t.py::a (setup)");
    EXPECT_EQ(test_at_since(log, 299, 200), "t.py::a (call)");
    EXPECT_EQ(test_at_since(log, 1000, 200), "t.py::b (setup)");
    // A line stamped in the tick the process started in is its own.
    EXPECT_EQ(test_at_since("200\tt.py::a (setup)\n", 200, 200), "t.py::a (setup)");
    // Without a start, as the session's own log is read.
    EXPECT_EQ(test_at_since(log, 160, 0), "old.py::b (call)");
    EXPECT_EQ(test_at_since(log, 160), "old.py::b (call)");
    // Nothing after the process started yet: nothing, not the old test.
    EXPECT_EQ(test_at_since("100\told.py::a (call)\n", 1000, 200), "");
}

TEST(TestLogByPid, AStampTooLargeForNanosecondsIsLaterThanAnyEvent) {
    std::string log = "100\tt.py::a (call)\n99999999999999999999999\tt.py::b (call)\n";
    EXPECT_EQ(test_at_since(log, 500), "t.py::a (call)");
    std::uint64_t next = UINT64_MAX - 1;
    test_at_since(log, 500, 0, &next);
    EXPECT_EQ(next, UINT64_MAX - 1) << "no stamp below the bound";
    // A line whose stamp is no number reads as stamped at boot.
    EXPECT_EQ(test_at_since("x1\tt.py::c (call)\n", 500), "t.py::c (call)");
}

TEST(TestLogByPid, StartTicksInBootNanoseconds) {
    EXPECT_EQ(ticks_to_ns(0, 100), 0u);
    EXPECT_EQ(ticks_to_ns(12345, 100), 123450000000ull);
    EXPECT_EQ(ticks_to_ns(7, 3), 2333333333ull);
    // A year of ticks at 1000 Hz does not overflow.
    EXPECT_EQ(ticks_to_ns(31536000000ull, 1000), 31536000000000000ull);
    EXPECT_EQ(ticks_to_ns(5, 0), 0u);
}

TEST(InstallPaths, PluginDirFromTheEnvironmentOrBesideTheBinary) {
    const char* old = ::getenv("LIVEGUARD_PLUGIN_DIR");
    std::string saved = old ? old : "";
    ::setenv("LIVEGUARD_PLUGIN_DIR", "/opt/lg/python", 1);
    EXPECT_EQ(plugin_dir(), "/opt/lg/python");

    ::unsetenv("LIVEGUARD_PLUGIN_DIR");
    // This binary is in build/; build/python holds the plugin once
    // build/liveguard-bpf is built, and nothing does otherwise.
    auto exe_dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
    auto beside = exe_dir / "python";
    if (std::filesystem::exists(beside / "liveguard_pytest.py")) {
        EXPECT_EQ(plugin_dir(), beside.string());
    } else if (!std::filesystem::exists(exe_dir / ".." / "lib" / "liveguard-bpf" / "python" / "liveguard_pytest.py")) {
        try {
            plugin_dir();
            ADD_FAILURE() << "no plugin, yet plugin_dir() returned";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(beside.string()), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("lib/liveguard-bpf/python"), std::string::npos) << e.what();
        }
    }
    if (old) ::setenv("LIVEGUARD_PLUGIN_DIR", saved.c_str(), 1);
}

TEST(TestLog, NextStampSaysHowLongTheAnswerHolds) {
    std::string log = "100\ta (setup)\n200\ta (call)\n300\tb (setup)\n";
    std::uint64_t next = UINT64_MAX;
    EXPECT_EQ(test_at_since(log, 250, 0, &next), "a (call)");
    EXPECT_EQ(next, 300u);
    next = UINT64_MAX;
    EXPECT_EQ(test_at_since(log, 50, 0, &next), "");
    EXPECT_EQ(next, 100u);
    next = UINT64_MAX;
    EXPECT_EQ(test_at_since(log, 400, 0, &next), "b (setup)");
    EXPECT_EQ(next, UINT64_MAX);
}

TEST(DetailsCache, ACulpritsReadingServesItsLaterEventsUntilItNoLongerHolds) {
    DetailsCache cache;
    DetailsCache::Culprit k;
    k.from_ns = 1000;
    k.until_ns = 2000;
    k.comm = "pytest";
    k.session = 7;
    k.pids = {42, 41};
    k.exe = "/usr/bin/python3";
    k.test = "t::a (call)";
    cache.remember(k);
    lg_event e{};
    e.pid = 42;
    e.session_cgroup_id = 7;
    std::strcpy(e.comm, "pytest");
    const std::vector<std::uint32_t> pids{42, 41};
    e.boot_ns = 1500;
    ASSERT_NE(cache.culprit(e, pids), nullptr);
    EXPECT_EQ(cache.culprit(e, pids)->test, "t::a (call)");
    e.boot_ns = 999;  // before what was read for: another test may have run
    EXPECT_EQ(cache.culprit(e, pids), nullptr);
    e.boot_ns = 2000;  // after the reading, or after the log's next line
    EXPECT_EQ(cache.culprit(e, pids), nullptr);
    e.boot_ns = 1500;
    EXPECT_EQ(cache.culprit(e, {42, 40}), nullptr);  // other parents
    std::strcpy(e.comm, "sh");                         // exec'd since
    EXPECT_EQ(cache.culprit(e, pids), nullptr);
    std::strcpy(e.comm, "pytest");
    e.session_cgroup_id = 8;
    EXPECT_EQ(cache.culprit(e, pids), nullptr);
}

TEST(TestLog, ALineStillBeingWrittenEndsWhatTheAnswerHoldsFor) {
    std::uint64_t next = UINT64_MAX;
    EXPECT_EQ(test_at_since("100\ta (call)\n20", 150, 0, &next), "a (call)");
    EXPECT_EQ(next, 151u);
}
