// Coalescing identical refusals: every event is either journalled or
// counted once in the repeats of one that was, and a repeats record reads
// back and counts in a session's summary.
#include <gtest/gtest.h>

#include <cstring>

#include "events/event_coalescer.h"
#include "events/event_format.h"
#include "events/journal_record.h"
#include "sessions/session_summary.h"

using namespace liveguard;

namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;

lg_event refusal(std::uint64_t at_ns, std::uint32_t pid = 10, std::uint32_t target = 20, int sig = 15) {
    lg_event e{};
    e.boot_ns = at_ns;
    e.session_cgroup_id = 4242;
    e.verdict = LG_VERDICT_DENIED;
    e.hook = LG_HOOK_TASK_KILL;
    e.pid = e.tid = pid;
    e.target_pid = e.target_tid = target;
    e.signal = sig;
    std::strcpy(e.comm, "pytest");
    std::strcpy(e.target_comm, "gateway");
    return e;
}

}  // namespace

TEST(EventCoalescer, IdenticalRefusalsWithinASecondAreOneEventAndACount) {
    EventCoalescer c;
    EXPECT_FALSE(c.absorb(refusal(100)));
    for (int i = 1; i < 1000; ++i) EXPECT_TRUE(c.absorb(refusal(100 + i * 1000)));
    EXPECT_TRUE(c.close(100 + kSecond - 1).empty());  // its second is not over
    auto out = c.close(100 + kSecond);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].count, 999u);
    EXPECT_EQ(out[0].first.boot_ns, 100u);
    EXPECT_EQ(out[0].last_boot_ns, 100u + 999 * 1000);
    EXPECT_EQ(c.coalesced(), 999u);
    EXPECT_TRUE(c.close(200 * kSecond, true).empty());  // counted once
}

TEST(EventCoalescer, AnotherCulpritTargetSignalOrDoorIsAnotherEvent) {
    EventCoalescer c;
    EXPECT_FALSE(c.absorb(refusal(1)));
    EXPECT_FALSE(c.absorb(refusal(2, 11)));
    EXPECT_FALSE(c.absorb(refusal(3, 10, 21)));
    EXPECT_FALSE(c.absorb(refusal(4, 10, 20, 9)));
    lg_event other = refusal(5);
    other.hook = LG_HOOK_PTRACE;
    EXPECT_FALSE(c.absorb(other));
    EXPECT_EQ(c.coalesced(), 0u);
    EXPECT_TRUE(c.close(10 * kSecond).empty());
}

TEST(EventCoalescer, EveryEventIsJournalledOrCountedExactlyOnceAcrossSeconds) {
    EventCoalescer c;
    std::uint64_t journalled = 0, repeats = 0, attempts = 0;
    // 5 culprits, one refusal each every 0.37 ms for 3.3 seconds, closed
    // at odd moments in between.
    for (std::uint64_t t = 0; t < 33 * kSecond / 10; t += 370'000) {
        for (std::uint32_t pid = 1; pid <= 5; ++pid) {
            ++attempts;
            if (!c.absorb(refusal(t, pid))) ++journalled;
        }
        if (t % (kSecond / 3) < 370'000)
            for (const auto& r : c.close(t)) repeats += r.count;
    }
    for (const auto& r : c.close(0, true)) repeats += r.count;
    EXPECT_EQ(journalled + repeats, attempts);
    EXPECT_EQ(repeats, c.coalesced());
    EXPECT_LE(journalled, 5u * 4);  // one per culprit per second begun
}

TEST(EventCoalescer, SaysWhenTheNextSecondEnds) {
    EventCoalescer c;
    EXPECT_EQ(c.next_close_ms(0), -1);
    c.absorb(refusal(kSecond));
    EXPECT_EQ(c.next_close_ms(kSecond + kSecond / 4), 750);
    EXPECT_EQ(c.next_close_ms(3 * kSecond), 1);
}

TEST(EventCoalescer, RepeatsReadBackAndCountInTheSessionSummary) {
    lg_event first = refusal(5 * kSecond);
    std::string line = format_repeats_json(first, 96999, 5 * kSecond + 900'000'000, 0);
    auto back = parse_journal_record(line);
    ASSERT_TRUE(back.has_value()) << line;
    const auto* r = std::get_if<JournalRepeats>(&back->body);
    ASSERT_NE(r, nullptr) << line;
    EXPECT_EQ(r->count, 96999u);
    EXPECT_EQ(r->of.pid, 10u);
    EXPECT_EQ(r->of.hook, "task_kill");
    EXPECT_EQ(r->of.session_cgroup_id, 4242u);
    EXPECT_LT(r->of.time, r->until);
    std::string text = format_journal_text(*back, false);
    EXPECT_NE(text.find("again 96999 times"), std::string::npos) << text;
    std::string event = format_event_json(first, 0);
    SessionSummary s = summarise_session({event, line}, 4242);
    EXPECT_EQ(s.total, 97000u);
    EXPECT_EQ(s.per_hook["task_kill"], 97000u);
    EXPECT_EQ(summarise_session({event, line}, 1).total, 0u);
}

TEST(EventCoalescer, RepeatsKeepTheSessionNameForFilteringAfterTheSessionEnded) {
    lg_event first = refusal(5 * kSecond);
    std::string line = format_repeats_json(first, 7, 5 * kSecond + 1000, 0, "flood-1");
    JournalFilter by_name{std::nullopt, std::string("flood-1"), {}};
    auto shown = render_journal_line(line, by_name, true, false);
    ASSERT_TRUE(shown.has_value()) << line;
    JournalFilter other{std::nullopt, std::string("another"), {}};
    EXPECT_FALSE(render_journal_line(line, other, true, false).has_value());
    auto text = render_journal_line(line, by_name, false, false);
    ASSERT_TRUE(text.has_value());
    EXPECT_NE(text->find("session flood-1"), std::string::npos) << *text;
}

TEST(EventCoalescer, AFloodOfDifferentRefusalsKeepsABoundedNumberOfSecondsOpenAndLosesNoCount) {
    EventCoalescer c;
    EXPECT_FALSE(c.absorb(refusal(100, 10, 1)));
    EXPECT_TRUE(c.absorb(refusal(200, 10, 1)));
    // Every one of these differs: the first second is closed early, with
    // its count, to keep the open ones within the bound.
    for (std::uint32_t t = 2; t < EventCoalescer::kMaxOpen + 10; ++t) EXPECT_FALSE(c.absorb(refusal(300 + t, 10, t)));
    auto early = c.close(400);
    ASSERT_EQ(early.size(), 1u);
    EXPECT_EQ(early[0].first.target_pid, 1u);
    EXPECT_EQ(early[0].count, 1u);
    EXPECT_EQ(c.coalesced(), 1u);
    // The next event of that key starts a new second and is journalled.
    EXPECT_FALSE(c.absorb(refusal(500, 10, 1)));
    EXPECT_TRUE(c.close(0, true).empty());
    EXPECT_EQ(c.next_close_ms(600), -1);
}

TEST(EventCoalescer, ClosingLooksOnlyAtSecondsThatAreDue) {
    EventCoalescer c;
    EXPECT_FALSE(c.absorb(refusal(100, 10, 1)));
    EXPECT_TRUE(c.absorb(refusal(150, 10, 1)));
    EXPECT_FALSE(c.absorb(refusal(kSecond / 2, 10, 2)));
    EXPECT_TRUE(c.absorb(refusal(kSecond / 2 + 1, 10, 2)));
    EXPECT_EQ(c.next_close_ms(kSecond / 2), 501);  // rounded up
    auto first = c.close(100 + kSecond);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].first.target_pid, 1u);
    EXPECT_EQ(c.next_close_ms(100 + kSecond), 500);
    auto second = c.close(kSecond / 2 + kSecond);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].first.target_pid, 2u);
}
