// Journal records: what the writer writes reads back field for field,
// and `events` shows a line as its filter says.
#include <gtest/gtest.h>

#include "events/event_format.h"
#include "events/journal_record.h"

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
