// Journal records: what the writer writes reads back field for field,
// and `events` shows a line as its filter says; a session's summary
// counts its events and its end record prints as `run` prints it.
#include <gtest/gtest.h>

#include "events/event_format.h"
#include "events/journal_record.h"
#include "liveguard/abi.h"
#include "sessions/session_summary.h"

using namespace liveguard;

namespace {

JournalEvent full_event() {
    JournalEvent e;
    e.time = "2026-11-30T00:00:00.123Z";
    e.verdict = "denied";
    e.hook = "task_kill";
    e.pid = 100;
    e.tid = 101;
    e.comm = "py\"th}on";
    e.target_pid = 200;
    e.target_tid = 201;
    e.target_comm = "hermes-gateway!!";
    e.signal = "SIGTERM";
    e.signal_number = 15;
    e.object_id = 77;
    e.detail = 3;
    e.act = "sent SIGTERM to hermes-gateway!![200/201]";
    e.session_cgroup_id = 4242;
    EventDetails d;
    d.argv = {"sh", "-c", "echo \"{\\\"pid\\\":1}\" ]}", ""};
    d.exe = "/usr/bin/da\"sh";
    d.parents = {{99, "a}b"}, {98, "{\"pid\":5,"}, {97, "[x]"}};
    d.session_path = "/sys/fs/cgroup/liveguard/run-1";
    d.session_name = "ci {1}";
    d.protected_by = "pidfile \"/p\"";
    d.test = "t.py::test_x[{a: \"b\"}] (call)";
    e.details = d;
    return e;
}

}  // namespace

TEST(JournalRecord, EventWithQuotesAndBracesInItsListsReadsBackAsWritten) {
    JournalEvent in = full_event();
    std::string line = write_journal_record({in});
    auto back = parse_journal_record(line);
    ASSERT_TRUE(back.has_value()) << line;
    const auto* out = std::get_if<JournalEvent>(&back->body);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->time, in.time);
    EXPECT_EQ(out->verdict, in.verdict);
    EXPECT_EQ(out->hook, in.hook);
    EXPECT_EQ(out->pid, in.pid);
    EXPECT_EQ(out->tid, in.tid);
    EXPECT_EQ(out->comm, in.comm);
    EXPECT_EQ(out->target_pid, in.target_pid);
    EXPECT_EQ(out->target_tid, in.target_tid);
    EXPECT_EQ(out->target_comm, in.target_comm);
    EXPECT_EQ(out->signal, in.signal);
    EXPECT_EQ(out->signal_number, in.signal_number);
    EXPECT_EQ(out->object_id, in.object_id);
    EXPECT_EQ(out->detail, in.detail);
    EXPECT_EQ(out->act, in.act);
    EXPECT_EQ(out->session_cgroup_id, in.session_cgroup_id);
    ASSERT_TRUE(out->details.has_value());
    const EventDetails& d = *out->details;
    EXPECT_EQ(d.argv, in.details->argv);
    EXPECT_EQ(d.exe, in.details->exe);
    EXPECT_EQ(d.culprit_gone, in.details->culprit_gone);
    ASSERT_EQ(d.parents.size(), in.details->parents.size());
    for (std::size_t i = 0; i < d.parents.size(); ++i) {
        EXPECT_EQ(d.parents[i].pid, in.details->parents[i].pid);
        EXPECT_EQ(d.parents[i].comm, in.details->parents[i].comm);
    }
    EXPECT_EQ(d.session_path, in.details->session_path);
    EXPECT_EQ(d.session_name, in.details->session_name);
    EXPECT_EQ(d.protected_by, in.details->protected_by);
    EXPECT_EQ(d.test, in.details->test);
    EXPECT_EQ(write_journal_record(*back), line);
    EXPECT_NE(format_journal_text(*back, false).find("\n    parents: a}b[99] < {\"pid\":5,[98] < [x][97]\n"),
              std::string::npos);
}

TEST(JournalRecord, RenderedLinesFollowTheFilterAndLossesAlwaysPass) {
    JournalEvent e = full_event();
    e.details->parents.clear();
    e.details->argv.clear();
    std::string event = write_journal_record({e});
    std::string loss = write_journal_record({JournalLoss{12, 6000}});
    EXPECT_EQ(loss, "{\"lost\":\"ring buffer full\",\"count\":12,\"total\":6000}");

    EXPECT_EQ(render_journal_line(event, {}, true, false).value_or(""), event);
    EXPECT_EQ(render_journal_line(event, {}, false, false).value_or(""),
              "2026-11-30T00:00:00.123Z DENIED task_kill: py\"th}on[100] sent SIGTERM to "
              "hermes-gateway!![200/201] (session ci {1})\n"
              "    test: t.py::test_x[{a: \"b\"}] (call)\n"
              "    exe: /usr/bin/da\"sh\n"
              "    target protected by: pidfile \"/p\"");
    EXPECT_TRUE(render_journal_line(event, {"2026-11-30T00:00:00.123Z", {}}, true, false));
    EXPECT_FALSE(render_journal_line(event, {"2026-11-30T00:00:01.000Z", {}}, true, false));
    EXPECT_TRUE(render_journal_line(event, {{}, "ci {1}"}, true, false));
    EXPECT_TRUE(render_journal_line(event, {{}, "4242"}, true, false));
    EXPECT_FALSE(render_journal_line(event, {{}, "ci"}, true, false));

    JournalFilter none_match{"2027-01-01T00:00:00.000Z", "other"};
    EXPECT_EQ(render_journal_line(loss, none_match, false, true).value_or(""),
              "liveguard: 12 events lost (ring buffer full; 6000 in total)");
    EXPECT_FALSE(render_journal_line(event.substr(0, 40), {}, false, false));
    EXPECT_FALSE(render_journal_line("{\"time\":\"T\",\"pid\":\"x1\"}", {}, false, false));
    EXPECT_FALSE(render_journal_line("{\"name\":\"ci\",\"root_pid\":1}", {}, false, false));
}

namespace {

JournalSessionEnd full_session_end() {
    JournalSessionEnd s;
    s.time = "2026-12-01T10:00:00.000Z";
    s.session_cgroup_id = LG_SESSION_PROCESS_BIT | 12345678ull;
    s.name = "pytest[12345]";
    s.root_pid = 12345;
    s.command = "python3 -m pytest \"tests/\" -k 'a or {b}'";
    s.refusals = 3;
    s.audited = false;
    s.oom_killed = 2;
    s.per_hook = {{"task_kill", 2}, {"ptrace", 1}};
    s.culprits = {"python3[12346] sent SIGTERM to gw[42]\n      in test t.py::test_x[{a: \"b\"}] (call)",
                  "gdb[12400] tried to attach to gw[42] (ptrace)"};
    s.reaped = {{4242, "sleep 1000"}, {4243, "sh -c \"sleep 5; echo ]}\""}};
    s.left_running = {{5000, ""}};
    return s;
}

}  // namespace

TEST(JournalRecord, SessionEndReadsBackAsWritten) {
    JournalSessionEnd in = full_session_end();
    std::string line = write_journal_record({in});
    EXPECT_EQ(line.rfind("{\"type\":\"session_end\",\"time\":\"2026-12-01T10:00:00.000Z\",", 0), 0u) << line;
    auto back = parse_journal_record(line);
    ASSERT_TRUE(back.has_value()) << line;
    const auto* out = std::get_if<JournalSessionEnd>(&back->body);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->time, in.time);
    EXPECT_EQ(out->session_cgroup_id, in.session_cgroup_id);
    EXPECT_EQ(out->name, in.name);
    EXPECT_EQ(out->root_pid, in.root_pid);
    EXPECT_EQ(out->command, in.command);
    EXPECT_EQ(out->refusals, in.refusals);
    EXPECT_EQ(out->audited, in.audited);
    EXPECT_EQ(out->oom_killed, in.oom_killed);
    EXPECT_EQ(out->per_hook, in.per_hook);
    EXPECT_EQ(out->culprits, in.culprits);
    ASSERT_EQ(out->reaped.size(), in.reaped.size());
    for (std::size_t i = 0; i < in.reaped.size(); ++i) {
        EXPECT_EQ(out->reaped[i].pid, in.reaped[i].pid);
        EXPECT_EQ(out->reaped[i].command, in.reaped[i].command);
    }
    ASSERT_EQ(out->left_running.size(), 1u);
    EXPECT_EQ(out->left_running[0].pid, 5000u);
    EXPECT_EQ(out->left_running[0].command, "");
    EXPECT_EQ(write_journal_record(*back), line);

    in.audited = true;
    in.per_hook.clear();
    in.culprits.clear();
    in.reaped.clear();
    in.left_running.clear();
    line = write_journal_record({in});
    back = parse_journal_record(line);
    ASSERT_TRUE(back.has_value()) << line;
    EXPECT_TRUE(std::get<JournalSessionEnd>(back->body).audited);
    EXPECT_EQ(write_journal_record(*back), line);
}

TEST(JournalRecord, SessionEndWithoutItsOptionalMembersReadsAsEmpty) {
    auto back = parse_journal_record(
        "{\"type\":\"session_end\",\"time\":\"2026-12-01T10:00:00.000Z\",\"session_cgroup_id\":9,\"name\":\"ci\"}");
    ASSERT_TRUE(back.has_value());
    const auto* s = std::get_if<JournalSessionEnd>(&back->body);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->time, "2026-12-01T10:00:00.000Z");
    EXPECT_EQ(s->session_cgroup_id, 9u);
    EXPECT_EQ(s->name, "ci");
    EXPECT_EQ(s->root_pid, 0u);
    EXPECT_EQ(s->command, "");
    EXPECT_EQ(s->refusals, 0u);
    EXPECT_FALSE(s->audited);
    EXPECT_TRUE(s->per_hook.empty());
    EXPECT_TRUE(s->culprits.empty());
    EXPECT_TRUE(s->reaped.empty());
    EXPECT_TRUE(s->left_running.empty());

    // A kind this version does not know is no record (not an event).
    EXPECT_FALSE(parse_journal_record("{\"type\":\"later\",\"time\":\"2026-12-01T10:00:00.000Z\"}"));
    // Members that do not read as their kind.
    EXPECT_FALSE(parse_journal_record("{\"type\":\"session_end\",\"refusals\":-1}"));
    EXPECT_FALSE(parse_journal_record("{\"type\":\"session_end\",\"per_hook\":{\"task_kill\":\"x\"}}"));
    EXPECT_FALSE(parse_journal_record("{\"type\":\"session_end\",\"per_hook\":[1]}"));
    EXPECT_FALSE(parse_journal_record("{\"type\":\"session_end\",\"reaped\":[{\"pid\":\"a\"}]}"));
    EXPECT_FALSE(parse_journal_record("{\"type\":\"session_end\",\"left_running\":[5]}"));
    EXPECT_FALSE(parse_journal_record("{\"type\":\"session_end\",\"audited\":1}"));
}

TEST(JournalRecord, SessionEndIsOneLineForPeopleAndFollowsTheFilter) {
    JournalSessionEnd s = full_session_end();
    s.command = "python3 -m pytest tests/";
    s.refusals = 2;
    s.per_hook = {{"task_kill", 2}};
    s.reaped = {{4242, "sleep 1000"}};
    s.left_running.clear();
    std::string line = write_journal_record({s});
    EXPECT_EQ(render_journal_line(line, {}, false, false).value_or(""),
              "2026-12-01T10:00:00.000Z session pytest[12345] ended (python3 -m pytest tests/): "
              "2 refused (task_kill 2); the OOM killer took 2 of its processes; reaped 1: 4242 sleep 1000");
    EXPECT_EQ(render_journal_line(line, {}, true, false).value_or(""), line);

    JournalSessionEnd quiet;
    quiet.time = "2026-12-01T10:00:00.000Z";
    quiet.session_cgroup_id = 77;
    quiet.left_running = {{1, "a"}, {2, "b c"}};
    EXPECT_EQ(format_journal_text({quiet}, false),
              "2026-12-01T10:00:00.000Z session cgroup 77 ended: nothing refused; left running 2: 1 a, 2 b c");
    quiet.refusals = 1;
    quiet.audited = true;
    quiet.per_hook = {{"ptrace", 1}};
    quiet.left_running.clear();
    EXPECT_EQ(format_journal_text({quiet}, false),
              "2026-12-01T10:00:00.000Z session cgroup 77 ended: 1 audited, not blocked (ptrace 1)");

    std::string key = std::to_string(s.session_cgroup_id);
    EXPECT_TRUE(render_journal_line(line, {{}, "pytest[12345]"}, true, false));
    EXPECT_TRUE(render_journal_line(line, {{}, key}, true, false));
    EXPECT_FALSE(render_journal_line(line, {{}, "pytest[1234]"}, true, false));
    EXPECT_TRUE(render_journal_line(line, {"2026-12-01T10:00:00.000Z", {}}, true, false));
    EXPECT_FALSE(render_journal_line(line, {"2026-12-01T10:00:00.001Z", {}}, true, false));
}

TEST(JournalRecord, EventsOfAProcessSessionMatchItsNameAndKey) {
    JournalEvent e = full_event();
    e.session_cgroup_id = LG_SESSION_PROCESS_BIT | 5;
    std::string key = std::to_string(e.session_cgroup_id);
    e.details->session_name = "pytest[12345]";
    std::string named = write_journal_record({e});
    EXPECT_TRUE(render_journal_line(named, {{}, "pytest[12345]"}, true, false));
    EXPECT_TRUE(render_journal_line(named, {{}, key}, true, false));

    // Gathered before the watcher named the session: the filter asks.
    e.details->session_name.clear();
    std::string unnamed = write_journal_record({e});
    EXPECT_NE(render_journal_line(unnamed, {}, false, false).value_or("").find("(session " + key + ")\n"),
              std::string::npos);
    EXPECT_FALSE(render_journal_line(unnamed, {{}, "pytest[12345]"}, true, false));
    JournalFilter by_name{{}, "pytest[12345]", [&](std::uint64_t id) {
                              return id == e.session_cgroup_id ? std::string("pytest[12345]") : std::string();
                          }};
    EXPECT_TRUE(render_journal_line(unnamed, by_name, true, false));
    by_name.session = "pytest[999]";
    EXPECT_FALSE(render_journal_line(unnamed, by_name, true, false));
    // A name in the event's details is what it says, whatever the lookup.
    by_name.session = "pytest[12345]";
    e.details->session_name = "other";
    EXPECT_FALSE(render_journal_line(write_journal_record({e}), by_name, true, false));
}

TEST(SessionSummary, MembersTheOomKillerTookAreNoRefusals) {
    JournalEvent e = full_event();
    JournalEvent killed = e;
    killed.verdict = "killed";
    killed.hook = "oom";
    killed.act = "ran out of memory, and the OOM killer took session member python3[7] (oom_score_adj 1000)";
    SessionSummary s = summarise_session({write_journal_record({e}), write_journal_record({killed})},
                                         e.session_cgroup_id);
    EXPECT_EQ(s.total, 1u);
    EXPECT_EQ(s.oom_killed, 1u);
    EXPECT_EQ(s.per_hook, (std::map<std::string, std::size_t>{{"task_kill", 1}}));
    ASSERT_EQ(s.culprits.size(), 2u);
    EXPECT_NE(s.culprits[1].find("(OOM) ran out of memory"), std::string::npos) << s.culprits[1];
    JournalSessionEnd rec = session_end_record(s, e.session_cgroup_id, "ci", 100, "pytest");
    EXPECT_EQ(rec.oom_killed, 1u);
    testing::internal::CaptureStderr();
    print_session_end(rec);
    std::string text = testing::internal::GetCapturedStderr();
    EXPECT_EQ(text.rfind("liveguard: session ci: the OOM killer took 1 of its processes (members go first)\n"
                         "liveguard: session ci: 1 act refused (task_kill 1)\n",
                         0),
              0u)
        << text;
}

TEST(SessionSummary, CountsEventsOnlyAndItsEndRecordPrintsAsRunWould) {
    JournalEvent e = full_event();
    e.details->test.clear();
    JournalSessionEnd end = full_session_end();
    end.session_cgroup_id = e.session_cgroup_id;
    std::vector<std::string> lines = {write_journal_record({e}), write_journal_record({end}),
                                      write_journal_record({JournalLoss{1, 1}}), write_journal_record({e})};
    SessionSummary s = summarise_session(lines, e.session_cgroup_id);
    EXPECT_EQ(s.total, 2u);
    EXPECT_EQ(s.per_hook, (std::map<std::string, std::size_t>{{"task_kill", 2}}));

    JournalSessionEnd rec = session_end_record(s, e.session_cgroup_id, "ci", 100, "python3 -m pytest");
    EXPECT_EQ(rec.time.size(), std::string("2026-12-01T10:00:00.000Z").size());
    EXPECT_EQ(rec.session_cgroup_id, e.session_cgroup_id);
    EXPECT_EQ(rec.name, "ci");
    EXPECT_EQ(rec.root_pid, 100u);
    EXPECT_EQ(rec.command, "python3 -m pytest");
    EXPECT_EQ(rec.refusals, 2u);
    EXPECT_FALSE(rec.audited);
    EXPECT_EQ(rec.per_hook, s.per_hook);
    EXPECT_EQ(rec.culprits, s.culprits);
    EXPECT_TRUE(rec.reaped.empty());

    testing::internal::CaptureStderr();
    print_session_summary(s, "ci");
    std::string run_text = testing::internal::GetCapturedStderr();
    testing::internal::CaptureStderr();
    print_session_end(rec);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), run_text);
    EXPECT_EQ(run_text.rfind("liveguard: session ci: 2 acts refused (task_kill 2)\n", 0), 0u) << run_text;

    rec.reaped = {{4242, "sleep 1000"}};
    testing::internal::CaptureStderr();
    print_session_end(rec);
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              run_text + "  left running, killed as the session ended (1):\n    4242 sleep 1000\n");
}

TEST(JournalRecord, MembersOfAnotherKindOrShapeMakeNoRecordAndUnknownOnesAreSkipped) {
    std::string line = write_journal_record({full_event()});
    ASSERT_TRUE(parse_journal_record(line).has_value());
    auto with = [&](const std::string& member) { return "{" + member + "," + line.substr(1); };
    // A later version's members, of any shape, are skipped whole.
    auto later = parse_journal_record(with(R"("later":{"a":[1,{"pid":"x","b":[[]]}]})"));
    ASSERT_TRUE(later.has_value());
    EXPECT_EQ(std::get<JournalEvent>(later->body).details->parents.size(), 3u);
    // A member of the record's holding another kind makes no record.
    for (std::string bad : {R"("pid":"100")", R"("pid":-1)", R"("pid":4294967296)", R"("pid":1.5)",
                            R"("comm":7)", R"("argv":[1])", R"("argv":"sh")", R"("parents":[{"pid":-2}])",
                            R"("parents":[[1]])", R"("culprit_gone":"yes")", R"("time":{"a":1})"}) {
        std::string moved = "{" + bad + line.substr(line.find(',')) ;
        EXPECT_FALSE(parse_journal_record(moved).has_value()) << moved;
    }
    // null reads as empty, as the writer writes an absent string.
    auto nulls = parse_journal_record(R"({"time":"2026-12-01T10:00:00.000Z","signal":null,"argv":null,"pid":null})");
    ASSERT_TRUE(nulls.has_value());
    EXPECT_EQ(std::get<JournalEvent>(nulls->body).signal, "");
    EXPECT_FALSE(parse_journal_record("[1]"));
    EXPECT_FALSE(parse_journal_record("\"time\""));
    EXPECT_FALSE(parse_journal_record(line.substr(0, line.size() - 1)));  // torn
}

TEST(JournalRecord, ARecordOlderThanSinceIsLeftOutFromItsFirstMembers) {
    const std::optional<std::string> since = "2026-12-01T10:00:00.000Z";
    JournalEvent e = full_event();
    e.time = "2026-12-01T09:59:59.999Z";
    std::string older = write_journal_record({e});
    EXPECT_TRUE(parse_journal_record(older).has_value());
    EXPECT_FALSE(parse_journal_record(older, since).has_value());
    // Not read past its time: what follows may be anything.
    EXPECT_FALSE(parse_journal_record(older.substr(0, older.find(',') + 1) + "garbage", since).has_value());
    e.time = *since;
    EXPECT_TRUE(parse_journal_record(write_journal_record({e}), since).has_value());

    JournalSessionEnd s;
    s.time = "2026-12-01T09:00:00.000Z";
    s.name = "ci";
    EXPECT_FALSE(parse_journal_record(write_journal_record({s}), since).has_value());
    s.time = "2026-12-01T11:00:00.000Z";
    EXPECT_TRUE(parse_journal_record(write_journal_record({s}), since).has_value());

    // Repeats are dated by their last, which follows their first's time.
    JournalRepeats r;
    r.of = full_event();
    r.of.time = "2026-12-01T09:59:59.000Z";
    r.count = 3;
    r.until = "2026-12-01T10:00:00.500Z";
    EXPECT_TRUE(parse_journal_record(write_journal_record({r}), since).has_value());
    r.until = "2026-12-01T09:59:59.900Z";
    EXPECT_FALSE(parse_journal_record(write_journal_record({r}), since).has_value());

    // And `events --since` shows the same either way.
    JournalFilter filter{since, std::nullopt, {}};
    EXPECT_FALSE(render_journal_line(older, filter, true, false).has_value());
    EXPECT_FALSE(render_journal_line(older, filter, false, false).has_value());
}
