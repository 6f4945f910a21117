// The run broker's protocol: what an unprivileged `run` sends, what the
// watcher answers, which session names pass, and the environment the
// session's command gets.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "sessions/brokered_run.h"
#include "sessions/run_protocol.h"

using namespace liveguard;

namespace {

std::string request_error(std::string_view line) {
    auto r = parse_run_request(line);
    auto* why = std::get_if<std::string>(&r);
    return why ? *why : std::string();
}

}  // namespace

TEST(RunProtocol, NamesArePrintableAsciiUpTo64Bytes) {
    EXPECT_FALSE(validate_session_name("pytest"));
    EXPECT_FALSE(validate_session_name("ci job #12 {unit} [py3.12]"));
    EXPECT_FALSE(validate_session_name(std::string(64, 'x')));
    EXPECT_TRUE(validate_session_name(std::string(65, 'x')));
    EXPECT_TRUE(validate_session_name(""));
    EXPECT_TRUE(validate_session_name("a\nb"));
    EXPECT_TRUE(validate_session_name("tab\there"));
    EXPECT_TRUE(validate_session_name("del\x7f"));
    EXPECT_TRUE(validate_session_name("caf\xc3\xa9"));
    EXPECT_TRUE(validate_session_name(std::string_view("nul\0x", 5)));
}

TEST(RunProtocol, DefaultNameIsTheCommandsFileName) {
    EXPECT_EQ(default_session_name("pytest"), "pytest");
    EXPECT_EQ(default_session_name("/usr/bin/python3"), "python3");
    EXPECT_EQ(default_session_name("./tools/run-tests/"), "run-tests");
    EXPECT_EQ(default_session_name("/"), "run");
    EXPECT_EQ(default_session_name(""), "run");
    EXPECT_EQ(default_session_name("t\xc3\xa9st"), "t??st");
    std::string long_name(100, 'y');
    EXPECT_EQ(default_session_name("/bin/" + long_name), std::string(64, 'y'));
    for (const char* cmd : {"pytest", "/", "t\xc3\xa9st", "a\tb"})
        EXPECT_FALSE(validate_session_name(default_session_name(cmd))) << cmd;
}

TEST(RunProtocol, RequestRoundTrips) {
    std::string line = format_run_request(RunRequest{"ci \"job\" \\ 1"});
    EXPECT_EQ(line.find('\n'), std::string::npos);
    auto r = parse_run_request(line);
    ASSERT_TRUE(std::holds_alternative<RunRequest>(r)) << std::get<std::string>(r);
    EXPECT_EQ(std::get<RunRequest>(r).name, "ci \"job\" \\ 1");
    EXPECT_EQ(format_run_request(RunRequest{"pytest"}), R"({"op":"start","name":"pytest"})");
}

TEST(RunProtocol, RequestsOtherThanAValidStartAreRefused) {
    EXPECT_NE(request_error(""), "");
    EXPECT_NE(request_error("start pytest"), "");
    EXPECT_NE(request_error(R"({"op":"start","name":"x"} trailing)"), "");
    EXPECT_NE(request_error(R"(["start","x"])"), "");
    EXPECT_NE(request_error(R"({"name":"x"})").find("op"), std::string::npos);
    EXPECT_NE(request_error(R"({"op":"stop","name":"x"})").find("unknown op"), std::string::npos);
    EXPECT_NE(request_error(R"({"op":"protect","pid":1})").find("unknown op"), std::string::npos);
    EXPECT_NE(request_error(R"({"op":"start"})").find("name"), std::string::npos);
    EXPECT_NE(request_error(R"({"op":"start","name":""})"), "");
    EXPECT_NE(request_error(R"({"op":"start","name":"a\nb"})"), "");
    EXPECT_NE(request_error(R"({"op":"start","name":")" + std::string(65, 'n') + "\"}"), "");
    EXPECT_NE(request_error(R"({"op":"start","name":"x","pad":")" + std::string(5000, 'p') + "\"}")
                  .find("too long"),
              std::string::npos);
    // Members it does not know are no business of the broker's.
    auto r = parse_run_request(R"({"op":"start","name":"x","pid":1})");
    ASSERT_TRUE(std::holds_alternative<RunRequest>(r));
    EXPECT_EQ(std::get<RunRequest>(r).name, "x");
}

TEST(RunProtocol, ReplyRoundTrips) {
    RunReply ok{true, "", (1ULL << 63) | 123456789ULL, false, "/run/liveguard/tests/9223372036978232597"};
    std::string line = format_run_reply(ok);
    EXPECT_EQ(line, R"({"ok":true,"session":"9223372036978232597","joined":false,)"
                    R"("test_log_dir":"/run/liveguard/tests/9223372036978232597"})");
    auto back = parse_run_reply(line);
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->ok);
    EXPECT_EQ(back->session, ok.session);
    EXPECT_FALSE(back->joined);
    EXPECT_EQ(back->test_log_dir, ok.test_log_dir);

    RunReply joined{true, "", 42, true, ""};
    back = parse_run_reply(format_run_reply(joined));
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->joined);
    EXPECT_EQ(back->session, 42u);
    EXPECT_EQ(back->test_log_dir, "");

    RunReply refused{false, "too many sessions (4096)", 0, false, ""};
    EXPECT_EQ(format_run_reply(refused), R"x({"ok":false,"error":"too many sessions (4096)"})x");
    back = parse_run_reply(format_run_reply(refused));
    ASSERT_TRUE(back);
    EXPECT_FALSE(back->ok);
    EXPECT_EQ(back->error, "too many sessions (4096)");
}

TEST(RunProtocol, RepliesThatAreNotOneAreRejected) {
    EXPECT_FALSE(parse_run_reply(""));
    EXPECT_FALSE(parse_run_reply("ok"));
    EXPECT_FALSE(parse_run_reply(R"({"session":"1"})"));
    EXPECT_FALSE(parse_run_reply(R"({"ok":"yes","session":"1"})"));
    EXPECT_FALSE(parse_run_reply(R"({"ok":true})"));
    EXPECT_FALSE(parse_run_reply(R"({"ok":true,"session":"0"})"));
    EXPECT_FALSE(parse_run_reply(R"({"ok":true,"session":"-1"})"));
    EXPECT_FALSE(parse_run_reply(R"({"ok":true,"session":"12x"})"));
    EXPECT_FALSE(parse_run_reply(R"({"ok":true,"session":"18446744073709551616"})"));
    auto r = parse_run_reply(R"({"ok":true,"session":"18446744073709551615"})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->session, 18446744073709551615ULL);
    // A refusal always carries a reason for the user.
    r = parse_run_reply(R"({"ok":false})");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->ok);
    EXPECT_FALSE(r->error.empty());
}

TEST(RunProtocol, NoWatcherErrorsSayWhatToStart) {
    Error not_loaded = no_broker_error(ENOENT, true, std::nullopt);
    EXPECT_NE(std::string(not_loaded.what()).find("not loaded"), std::string::npos);
    EXPECT_NE(not_loaded.hint().find("sudo liveguard-bpf load --config"), std::string::npos);

    Error none = no_broker_error(ENOENT, false, std::nullopt);
    std::string what = none.what();
    EXPECT_NE(what.find("no policy watcher is running"), std::string::npos);
    EXPECT_NE(what.find("/run/liveguard/run.sock"), std::string::npos);
    EXPECT_NE(none.hint().find("sudo systemctl start liveguard-bpf"), std::string::npos);
    EXPECT_NE(none.hint().find("sudo liveguard-bpf load --config POLICY"), std::string::npos);
    EXPECT_NE(none.exit_code(), 0);

    Error deaf = no_broker_error(ECONNREFUSED, false, 4321);
    EXPECT_NE(std::string(deaf.what()).find("4321"), std::string::npos);
    EXPECT_NE(deaf.hint().find("restart"), std::string::npos);
}

TEST(RunProtocol, TheSessionsEndIsFoundAmongOtherLines) {
    JournalSessionEnd mine;
    mine.time = "2026-12-01T10:00:00.000Z";
    mine.session_cgroup_id = (1ULL << 63) | 5;
    mine.name = "pytest";
    mine.root_pid = 4242;
    mine.refusals = 2;
    mine.per_hook = {{"task_kill", 2}};
    JournalSessionEnd other = mine;
    other.session_cgroup_id = (1ULL << 63) | 6;
    other.refusals = 9;
    JournalLoss loss{3, 3};
    std::vector<std::string> lines = {write_journal_record({loss}), "not json",
                                      write_journal_record({other}), write_journal_record({mine})};
    auto found = find_session_end(lines, mine.session_cgroup_id);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->refusals, 2u);
    EXPECT_EQ(found->name, "pytest");
    EXPECT_FALSE(find_session_end(lines, (1ULL << 63) | 7));
    EXPECT_FALSE(find_session_end({}, mine.session_cgroup_id));
}

TEST(RunProtocol, SyncNeedsNoName) {
    auto parsed = parse_run_request(R"({"op":"sync"})");
    ASSERT_TRUE(std::holds_alternative<RunRequest>(parsed));
    EXPECT_EQ(std::get<RunRequest>(parsed).op, RunOp::Sync);
    EXPECT_EQ(format_run_request(RunRequest{"", RunOp::Sync}), R"({"op":"sync"})");
    auto other = parse_run_request(R"({"op":"stop"})");
    ASSERT_TRUE(std::holds_alternative<std::string>(other));
    EXPECT_NE(std::get<std::string>(other).find("\"sync\""), std::string::npos);
}

// pytest registers the plugin by its entry point (the dist-info beside it
// on PYTHONPATH); naming the module in PYTEST_PLUGINS as well would make
// pytest refuse to start wherever the plugin is installed in site-packages.
TEST(RunProtocol, TheSessionEnvLetsPytestLoadThePluginOnce) {
    const char* names[] = {"PYTHONPATH", "PYTEST_PLUGINS", "PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
                           "LIVEGUARD_TEST_LOG_DIR", "LIVEGUARD_SESSION"};
    std::vector<std::optional<std::string>> saved;
    for (const char* n : names) {
        const char* v = ::getenv(n);
        saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
        ::unsetenv(n);
    }
    auto env = [](const char* n) { const char* v = ::getenv(n); return std::string(v ? v : "(unset)"); };

    ::setenv("PYTHONPATH", "/src", 1);
    set_session_env("/lg/python", "/run/lg/tests/5", "ci");
    EXPECT_EQ(env("PYTHONPATH"), "/lg/python:/src");
    EXPECT_EQ(env("PYTEST_PLUGINS"), "(unset)");
    EXPECT_EQ(env("PYTEST_ADDOPTS"), "(unset)");
    EXPECT_EQ(env("LIVEGUARD_TEST_LOG_DIR"), "/run/lg/tests/5");
    EXPECT_EQ(env("LIVEGUARD_SESSION"), "ci");
    // A session's command that starts `run` again adds nothing twice.
    set_session_env("/lg/python", "/run/lg/tests/5", "ci");
    EXPECT_EQ(env("PYTHONPATH"), "/lg/python:/src");

    // Entry points off: -p names the plugin, ahead of the user's options
    // so that their -p no:liveguard still wins.
    ::setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1", 1);
    ::setenv("PYTEST_ADDOPTS", "-x -p no:liveguard", 1);
    set_session_env("/lg/python", "", "");
    EXPECT_EQ(env("PYTEST_ADDOPTS"), "-p liveguard -x -p no:liveguard");
    set_session_env("/lg/python", "", "");
    EXPECT_EQ(env("PYTEST_ADDOPTS"), "-p liveguard -x -p no:liveguard");
    EXPECT_EQ(env("PYTEST_PLUGINS"), "(unset)");

    for (std::size_t i = 0; i < std::size(names); ++i) {
        if (saved[i]) ::setenv(names[i], saved[i]->c_str(), 1);
        else ::unsetenv(names[i]);
    }
}
