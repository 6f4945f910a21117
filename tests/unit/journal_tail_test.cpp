// The journal's last lines, as `events` prints them before following: the
// last N of those the filter keeps, across the rotated file, never a line
// still being written, and reading on from exactly where they end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/journal_record.h"
#include "events/journal_tail.h"
#include "temp_dir.h"

using namespace liveguard;

namespace {

using Lines = std::vector<std::string>;

struct Journal {
    TempDir dir;
    std::string path = dir.path + "/events.jsonl";
    std::string rotated = path + ".1";

    static void append(const std::string& file, const std::string& text) {
        std::ofstream(file, std::ios::app | std::ios::binary) << text;
    }
    void rotate() { ASSERT_EQ(std::rename(path.c_str(), rotated.c_str()), 0); }
    JournalTail tail(std::size_t count, const std::function<bool(std::string_view)>& keep = every_line) const {
        return read_journal_tail(path, count, keep);
    }
    static bool every_line(std::string_view) { return true; }
};

// "line 3" for n = 3.
std::string numbered(int n) { return "line " + std::to_string(n); }

std::string numbered_lines(int from, int to) {
    std::string text;
    for (int n = from; n <= to; ++n) text += numbered(n) + "\n";
    return text;
}

Lines numbers(int from, int to) {
    Lines out;
    for (int n = from; n <= to; ++n) out.push_back(numbered(n));
    return out;
}

JournalEvent event_record(const std::string& session_name, int pid) {
    JournalEvent e;
    e.time = "2026-11-30T00:00:00.000Z";
    e.verdict = "denied";
    e.hook = "task_kill";
    e.pid = static_cast<std::uint32_t>(pid);
    e.comm = "python3";
    e.target_pid = 42;
    e.target_comm = "gw";
    e.signal = "SIGTERM";
    e.signal_number = 15;
    e.act = "sent SIGTERM to gw[42]";
    e.session_cgroup_id = 7;
    EventDetails d;
    d.session_name = session_name;
    e.details = d;
    return e;
}

std::string event_of(const std::string& session_name, int pid) {
    return write_journal_record({event_record(session_name, pid)});
}

// The count of refusals like `session_name`'s event of `pid` that followed it.
std::string repeats_of(const std::string& session_name, int pid) {
    JournalRepeats r;
    r.of = event_record(session_name, pid);
    r.of.details.reset();
    r.count = 4;
    r.until = "2026-11-30T00:00:00.900Z";
    r.session_name = session_name;
    return write_journal_record({r});
}

}  // namespace

TEST(JournalTail, LastLinesSpanTheRotatedFileAndTheCurrentOne) {
    Journal j;
    Journal::append(j.path, numbered_lines(1, 5));
    j.rotate();
    Journal::append(j.path, numbered_lines(6, 8));
    EXPECT_EQ(j.tail(4).lines, numbers(5, 8));
    EXPECT_EQ(j.tail(3).lines, numbers(6, 8));
    EXPECT_EQ(j.tail(8).lines, numbers(1, 8));
}

TEST(JournalTail, FewerLinesThanAskedForAreAllOfThem) {
    Journal j;
    Journal::append(j.path, numbered_lines(1, 3));
    EXPECT_EQ(j.tail(10).lines, numbers(1, 3));
    j.rotate();
    EXPECT_EQ(j.tail(10).lines, numbers(1, 3)) << "only the rotated file";
    Journal empty;
    EXPECT_TRUE(empty.tail(10).lines.empty()) << "no journal at all";
}

TEST(JournalTail, NoneAskedForIsNoneButReadingOnStartsAtTheEnd) {
    Journal j;
    Journal::append(j.path, numbered_lines(1, 3));
    JournalReader reader(j.tail(0), j.path);
    EXPECT_TRUE(reader.read_new().empty());
    Journal::append(j.path, numbered_lines(4, 4));
    EXPECT_EQ(reader.read_new(), numbers(4, 4));
}

TEST(JournalTail, ALineStillBeingWrittenIsReadOnlyOnceComplete) {
    Journal j;
    Journal::append(j.path, numbered_lines(1, 2) + "line 3 half");
    JournalTail tail = j.tail(10);
    EXPECT_EQ(tail.lines, numbers(1, 2));
    JournalReader reader(std::move(tail), j.path);
    EXPECT_EQ(reader.read_new(), numbers(1, 2));
    EXPECT_TRUE(reader.read_new().empty());
    Journal::append(j.path, " written\n");
    EXPECT_EQ(reader.read_new(), Lines{"line 3 half written"});

    Journal only_partial;
    Journal::append(only_partial.path, "no newline yet");
    JournalReader from_start(only_partial.tail(10), only_partial.path);
    EXPECT_TRUE(from_start.read_new().empty());
    Journal::append(only_partial.path, "\n");
    EXPECT_EQ(from_start.read_new(), Lines{"no newline yet"});
}

TEST(JournalTail, TheFilterAppliesBeforeCountingAndCountsAndLossesAreOneEach) {
    Journal j;
    std::string loss = write_journal_record({JournalLoss{3, 3}});
    Lines all = {event_of("ci", 1), event_of("other", 2), event_of("ci", 3), repeats_of("ci", 3),
                 loss,              "not a record",      event_of("other", 4)};
    for (std::size_t i = 0; i < all.size(); ++i) Journal::append(i < 3 ? j.rotated : j.path, all[i] + "\n");
    JournalFilter ci{{}, "ci", {}};
    auto keep = [&](std::string_view line) { return render_journal_line(line, ci, true, false).has_value(); };
    EXPECT_EQ(j.tail(2, keep).lines, (Lines{all[3], loss}));
    EXPECT_EQ(j.tail(3, keep).lines, (Lines{all[2], all[3], loss}));
    EXPECT_EQ(j.tail(10, keep).lines, (Lines{all[0], all[2], all[3], loss}));
    auto records = [](std::string_view line) { return render_journal_line(line, {}, false, false).has_value(); };
    EXPECT_EQ(j.tail(2, records).lines, (Lines{loss, all[6]})) << "a line that is no record is not printed";
}

TEST(JournalTail, LinesLongerThanABlockReadWhole) {
    Journal j;
    std::string long_a(200000, 'a'), long_b(70000, 'b');
    Journal::append(j.rotated, long_a + "\n" + numbered_lines(1, 1));
    Journal::append(j.path, long_b + "\n" + numbered_lines(2, 2) + std::string(100000, 'c'));
    EXPECT_EQ(j.tail(3).lines, (Lines{numbered(1), long_b, numbered(2)}));
    EXPECT_EQ(j.tail(4).lines, (Lines{long_a, numbered(1), long_b, numbered(2)}));
}

TEST(JournalTail, ARotationAfterwardsLosesNothingOfWhatFollows) {
    Journal j;
    Journal::append(j.path, numbered_lines(1, 4));
    JournalReader reader(j.tail(2), j.path);
    Journal::append(j.path, numbered_lines(5, 5));
    j.rotate();
    Journal::append(j.path, numbered_lines(6, 6));
    EXPECT_EQ(reader.read_new(), numbers(3, 6));
}

TEST(JournalTail, AJournalRotatedWhileOpenedIsReadOnce) {
    // Both names are one file when the rotation happened between opening
    // the current file and the rotated one.
    Journal j;
    Journal::append(j.path, numbered_lines(1, 3));
    ASSERT_EQ(::link(j.path.c_str(), j.rotated.c_str()), 0);
    EXPECT_EQ(j.tail(10).lines, numbers(1, 3));
}

TEST(JournalTail, NoJournalYetIsReadFromItsStartOnceItExists) {
    Journal j;
    JournalReader reader(j.tail(10), j.path);
    EXPECT_TRUE(reader.read_new().empty());
    Journal::append(j.path, numbered_lines(1, 2));
    EXPECT_EQ(reader.read_new(), numbers(1, 2));
}
