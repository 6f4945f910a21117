// The systemd journal entries each kind of journal record becomes.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "events/journald_sink.h"

using namespace liveguard;

namespace {

std::map<std::string, std::string> fields(const JournaldEntry& e) {
    std::map<std::string, std::string> m;
    for (const auto& f : e) {
        auto eq = f.find('=');
        EXPECT_NE(eq, std::string::npos) << f;
        std::string name = f.substr(0, eq);
        // journald's rule for a field a client may set.
        EXPECT_TRUE(std::regex_match(name, std::regex("[A-Z0-9][A-Z0-9_]*"))) << name;
        EXPECT_FALSE(m.count(name)) << "twice: " << name;
        m[name] = f.substr(eq + 1);
    }
    return m;
}

JournalEvent refusal() {
    JournalEvent e;
    e.time = "2026-12-07T10:00:00.123Z";
    e.verdict = "denied";
    e.hook = "task_kill";
    e.pid = 4242;
    e.comm = "python3";
    e.target_pid = 777;
    e.target_comm = "hermes";
    e.signal = "SIGTERM";
    e.signal_number = 15;
    e.act = "sent SIGTERM to hermes[777]";
    e.session_cgroup_id = 99;
    EventDetails d;
    d.test = "tests/test_gateway.py::test_restart";
    d.session_name = "pytest[4200]";
    d.exe = "/usr/bin/python3.11";
    d.protected_by = "pidfile \"/home/u/.hermes/gateway.pid\"";
    e.details = d;
    return e;
}

}  // namespace

TEST(Journald, ARefusalCarriesItsDoorTargetTestAndSession) {
    auto entries = journald_entries({refusal()});
    ASSERT_EQ(entries.size(), 1u);
    auto f = fields(entries[0]);
    EXPECT_EQ(f["MESSAGE_ID"], kJournaldRefusalId);
    EXPECT_EQ(f["PRIORITY"], "4");
    EXPECT_EQ(f["SYSLOG_IDENTIFIER"], "liveguard-bpf");
    EXPECT_EQ(f["LIVEGUARD_KIND"], "refusal");
    EXPECT_EQ(f["LIVEGUARD_HOOK"], "task_kill");
    EXPECT_EQ(f["LIVEGUARD_TARGET_PID"], "777");
    EXPECT_EQ(f["LIVEGUARD_PID"], "4242");
    EXPECT_EQ(f["LIVEGUARD_SIGNAL"], "SIGTERM");
    EXPECT_EQ(f["LIVEGUARD_TEST"], "tests/test_gateway.py::test_restart");
    EXPECT_EQ(f["LIVEGUARD_SESSION"], "pytest[4200]");
    EXPECT_EQ(f["LIVEGUARD_SESSION_ID"], "99");
    EXPECT_EQ(f["LIVEGUARD_PROTECTED_BY"], "pidfile \"/home/u/.hermes/gateway.pid\"");
    // One line a person reads, naming the door and the target.
    EXPECT_EQ(f["MESSAGE"].find('\n'), std::string::npos) << f["MESSAGE"];
    EXPECT_NE(f["MESSAGE"].find("task_kill"), std::string::npos) << f["MESSAGE"];
    EXPECT_NE(f["MESSAGE"].find("777"), std::string::npos) << f["MESSAGE"];
}

TEST(Journald, AnAuditedActIsANoticeAndEmptyFieldsAreLeftOut) {
    JournalEvent e = refusal();
    e.verdict = "audited";
    e.details.reset();
    e.signal.clear();
    auto f = fields(journald_entries({e})[0]);
    EXPECT_EQ(f["PRIORITY"], "5");
    EXPECT_FALSE(f.count("LIVEGUARD_TEST"));
    EXPECT_FALSE(f.count("LIVEGUARD_SIGNAL"));
    EXPECT_FALSE(f.count("LIVEGUARD_SESSION"));
}

TEST(Journald, RepeatsAreOneEntryWithTheirCount) {
    JournalRepeats r;
    r.of = refusal();
    r.of.details.reset();
    r.count = 49;
    r.until = "2026-12-07T10:00:00.900Z";
    r.session_name = "ci";
    auto entries = journald_entries({r});
    ASSERT_EQ(entries.size(), 1u);
    auto f = fields(entries[0]);
    EXPECT_EQ(f["MESSAGE_ID"], kJournaldRepeatsId);
    EXPECT_EQ(f["LIVEGUARD_COUNT"], "49");
    EXPECT_EQ(f["LIVEGUARD_HOOK"], "task_kill");
    EXPECT_EQ(f["LIVEGUARD_SESSION"], "ci");
}

TEST(Journald, ASessionEndIsItsSummaryThenOneEntryPerReapedProcess) {
    JournalSessionEnd s;
    s.time = "2026-12-07T10:01:00.000Z";
    s.session_cgroup_id = 5;
    s.name = "pytest[4200]";
    s.root_pid = 4200;
    s.command = "python3 -m pytest tests/";
    s.refusals = 2;
    s.per_hook = {{"task_kill", 2}};
    s.reaped = {{4300, "sleep 1000"}, {4301, "hermes gateway run"}};
    auto entries = journald_entries({s});
    ASSERT_EQ(entries.size(), 3u);
    auto end = fields(entries[0]);
    EXPECT_EQ(end["MESSAGE_ID"], kJournaldSessionEndId);
    EXPECT_EQ(end["LIVEGUARD_REFUSALS"], "2");
    EXPECT_EQ(end["LIVEGUARD_REAPED"], "2");
    EXPECT_EQ(end["LIVEGUARD_SESSION"], "pytest[4200]");
    auto second = fields(entries[2]);
    EXPECT_EQ(second["MESSAGE_ID"], kJournaldReapedId);
    EXPECT_EQ(second["LIVEGUARD_PID"], "4301");
    EXPECT_EQ(second["LIVEGUARD_COMMAND"], "hermes gateway run");
    EXPECT_NE(second["MESSAGE"].find("4301 hermes gateway run"), std::string::npos) << second["MESSAGE"];
}

TEST(Journald, EachKindHasItsOwnMessageId) {
    std::set<std::string> ids = {kJournaldRefusalId, kJournaldRepeatsId, kJournaldLossId, kJournaldSessionEndId,
                                 kJournaldReapedId};
    EXPECT_EQ(ids.size(), 5u);
    for (const auto& id : ids) EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}"))) << id;
    auto f = fields(journald_entries({JournalLoss{3, 10}})[0]);
    EXPECT_EQ(f["MESSAGE_ID"], kJournaldLossId);
    EXPECT_EQ(f["LIVEGUARD_COUNT"], "3");
    EXPECT_EQ(f["LIVEGUARD_TOTAL"], "10");
}
