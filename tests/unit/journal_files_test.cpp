// The journal's files on disk: appends rotate by size and keep a bounded
// number of files, and readers go through every one of them in order,
// whether reading from the start, following across a rotation or reading
// the last lines backwards.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "events/event_journal.h"
#include "events/journal_files.h"
#include "events/journal_tail.h"
#include "temp_dir.h"

using namespace liveguard;
namespace fs = std::filesystem;

namespace {

using Lines = std::vector<std::string>;

// "line 007": each the same length, so a file holds a known number.
std::string numbered(int n) {
    std::string digits = std::to_string(n);
    return "line " + std::string(3 - std::min<std::size_t>(3, digits.size()), '0') + digits;
}

Lines numbers(int from, int to) {
    Lines out;
    for (int n = from; n <= to; ++n) out.push_back(numbered(n));
    return out;
}

Lines file_lines(const std::string& path) {
    Lines out;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// Each line is 9 bytes with its newline: a file past 27 bytes (three
// lines) is rotated before the fourth, so each file holds four lines.
constexpr JournalLimits kSmall{27, 3};

}  // namespace

TEST(JournalFiles, AppendsRotateBySizeAndKeepOnlyTheNewestFiles) {
    TempDir dir;
    std::string journal = dir.path + "/log/events.jsonl";
    for (int n = 1; n <= 30; ++n) append_journal_line(journal, numbered(n), kSmall);
    // The directory was made; 30 lines are 4 + 4 + 4 + ... : the current
    // file has lines 29-30, then .1 25-28, .2 21-24, .3 17-20; older dropped.
    EXPECT_EQ(file_lines(journal), numbers(29, 30));
    EXPECT_EQ(file_lines(journal + ".1"), numbers(25, 28));
    EXPECT_EQ(file_lines(journal + ".2"), numbers(21, 24));
    EXPECT_EQ(file_lines(journal + ".3"), numbers(17, 20));
    EXPECT_FALSE(fs::exists(journal + ".4"));
    struct stat st {};
    ASSERT_EQ(::stat((dir.path + "/log").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST(JournalFiles, AppendingWhereNoDirectoryCanBeMadeSaysWhy) {
    TempDir dir;
    std::ofstream(dir.path + "/file") << "x";
    try {
        append_journal_line(dir.path + "/file/sub/events.jsonl", "x", kSmall);
        FAIL() << "appended under a regular file";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find(dir.path + "/file/sub"), std::string::npos) << e.what();
    }
}

TEST(JournalFiles, ReadingFromTheStartGoesThroughEveryKeptFileOldestFirst) {
    TempDir dir;
    std::string journal = dir.path + "/events.jsonl";
    for (int n = 1; n <= 30; ++n) append_journal_line(journal, numbered(n), kSmall);
    JournalReader reader(true, journal);
    EXPECT_EQ(reader.read_new(), numbers(17, 30));
    // And on from there as the journal grows, across another rotation.
    for (int n = 31; n <= 40; ++n) append_journal_line(journal, numbered(n), kSmall);
    EXPECT_EQ(reader.read_new(), numbers(31, 40));
}

TEST(JournalFiles, AFollowingReaderLosesNothingWhenRotationsComeBetweenReads) {
    TempDir dir;
    std::string journal = dir.path + "/events.jsonl";
    for (int n = 1; n <= 2; ++n) append_journal_line(journal, numbered(n), kSmall);
    JournalReader reader(false, journal);
    // It holds the file it read: a rotation renames it, and what was
    // appended to it before the rotation is read to its end first, then
    // the new file from its start.
    for (int n = 3; n <= 6; ++n) append_journal_line(journal, numbered(n), kSmall);
    EXPECT_EQ(reader.read_new(), numbers(3, 6));
    // Two more rotations before the next read: the file it holds is now
    // .2, and .1 comes between it and the current one.
    for (int n = 7; n <= 14; ++n) append_journal_line(journal, numbered(n), kSmall);
    EXPECT_EQ(reader.read_new(), numbers(7, 14));
    // So many that the held file is dropped: what was appended to it is
    // still read through its descriptor, then every file kept, each newer
    // (17-24 went with the files dropped, past the bound).
    for (int n = 15; n <= 40; ++n) append_journal_line(journal, numbered(n), kSmall);
    Lines expected = numbers(15, 16);
    for (const auto& line : numbers(25, 40)) expected.push_back(line);
    EXPECT_EQ(reader.read_new(), expected);
}

TEST(JournalFiles, TheLastLinesSpanSeveralRotatedFiles) {
    TempDir dir;
    std::string journal = dir.path + "/events.jsonl";
    for (int n = 1; n <= 30; ++n) append_journal_line(journal, numbered(n), kSmall);
    auto tail = read_journal_tail(journal, 9, [](std::string_view) { return true; });
    EXPECT_EQ(tail.lines, numbers(22, 30));
    // All that is kept, when more is asked for.
    EXPECT_EQ(read_journal_tail(journal, 100, [](std::string_view) { return true; }).lines, numbers(17, 30));
    // Reading on starts at the current file's end.
    JournalReader reader(std::move(tail), journal);
    EXPECT_EQ(reader.read_new(), numbers(22, 30));
    append_journal_line(journal, numbered(31), kSmall);
    EXPECT_EQ(reader.read_new(), numbers(31, 31));
}

TEST(JournalFiles, TheCurrentFileMissingLeavesTheRotatedOnesReadable) {
    TempDir dir;
    std::string journal = dir.path + "/events.jsonl";
    for (int n = 1; n <= 8; ++n) append_journal_line(journal, numbered(n), kSmall);
    fs::remove(journal);
    EXPECT_EQ(read_journal_tail(journal, 100, [](std::string_view) { return true; }).lines, numbers(1, 4));
    JournalReader reader(true, journal);
    EXPECT_EQ(reader.read_new(), numbers(1, 4));
    append_journal_line(journal, numbered(9), kSmall);
    EXPECT_EQ(reader.read_new(), numbers(9, 9));
}

TEST(JournalFiles, ConcurrentAppendersRotateOnceAndLoseNoLineOfTheKeptFiles) {
    TempDir dir;
    std::string journal = dir.path + "/events.jsonl";
    // Large enough a bound that nothing is dropped: every line is kept.
    const JournalLimits limits{900, 50};
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w)
        writers.emplace_back([&, w] {
            for (int n = 0; n < 100; ++n) append_journal_line(journal, numbered(w * 100 + n), limits);
        });
    for (auto& t : writers) t.join();
    JournalReader reader(true, journal);
    auto lines = reader.read_new();
    std::sort(lines.begin(), lines.end());
    EXPECT_EQ(lines, numbers(0, 399));
    // No file far past the bound: a double rotation would have left one
    // file of a line or two and another past twice the size.
    for (int n = 1; n <= 50; ++n) {
        struct stat st {};
        if (::stat(rotated_journal_path(journal, n).c_str(), &st) != 0) continue;
        EXPECT_LE(st.st_size, 900 + 4 * 9) << n;
    }
}
