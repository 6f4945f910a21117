#include <gtest/gtest.h>

#include <cstring>

#include "cli/doctor.h"
#include "kernel/lsm_list.h"
#include "events/event_format.h"
#include "base/json.h"
#include "base/proc.h"
#include "sessions/session_runner.h"

using namespace liveguard;

namespace {

lg_event sample_event() {
    lg_event e{};
    e.boot_ns = 5'000'000'000ull;
    e.session_cgroup_id = 4242;
    e.verdict = LG_VERDICT_DENIED;
    e.hook = LG_HOOK_TASK_KILL;
    e.pid = 100;
    e.tid = 101;
    e.target_pid = 200;
    e.target_tid = 200;
    e.signal = 15;
    std::strcpy(e.comm, "python3");
    std::memcpy(e.target_comm, "hermes-gateway!!", 16);  // full length, no NUL
    return e;
}

}  // namespace

TEST(Abi, LayoutMatchesTheBpfSide) {
    // The header's static_asserts already hold at compile time; these keep
    // the numbers visible in the test report.
    EXPECT_EQ(sizeof(lg_event), 104u + 24u * LG_CHAIN_LEN + LG_ARGS_LEN + LG_TEST_LEN);
    EXPECT_EQ(offsetof(lg_event, test), 104u + 24u * LG_CHAIN_LEN + LG_ARGS_LEN);
    EXPECT_EQ(sizeof(lg_exe_key), 16u);
    EXPECT_EQ(offsetof(lg_event, object_id), 80u);
    EXPECT_EQ(sizeof(lg_exec_args), 8u + 8u * LG_EXEC_MAX_ARGS);
    EXPECT_EQ(sizeof(lg_protected), 16u);
    EXPECT_EQ(sizeof(lg_session), 16u);
    EXPECT_EQ(offsetof(lg_event, comm), 48u);
}

TEST(EventFormat, Json) {
    // 2026-11-30T00:00:00Z = 1795996800
    std::int64_t offset = 1795996800ll * 1000000000ll - 5'000'000'000ll + 123'000'000ll;
    std::string line = format_event_json(sample_event(), offset);
    EXPECT_EQ(line,
              "{\"time\":\"2026-11-30T00:00:00.123Z\",\"verdict\":\"denied\",\"hook\":\"task_kill\","
              "\"pid\":100,\"tid\":101,\"ns_pid\":0,\"comm\":\"python3\",\"target_pid\":200,\"target_ns_pid\":0,"
              "\"target_tid\":200,"
              "\"target_comm\":\"hermes-gateway!!\",\"signal\":\"SIGTERM\",\"signal_number\":15,"
              "\"object_id\":0,\"detail\":0,\"act\":\"sent SIGTERM to hermes-gateway!![200]\","
              "\"session_cgroup_id\":4242}");
}

TEST(EventFormat, SideDoorsSayWhatWasRefused) {
    lg_event e = sample_event();
    e.signal = 0;
    e.target_pid = 0;
    e.hook = LG_HOOK_CGROUP_FILE;
    e.object_id = 77;
    std::memset(e.target_comm, 0, sizeof e.target_comm);
    std::strcpy(e.target_comm, "cgroup.kill");
    EXPECT_EQ(describe_act(e), "opened cgroup.kill of cgroup 77 for writing");
    std::string json = format_event_json(e, 0);
    EXPECT_NE(json.find("\"hook\":\"cgroup_file\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"signal\":null"), std::string::npos) << json;
    e.hook = LG_HOOK_EXEC;
    std::strcpy(e.target_comm, "systemctl");
    EXPECT_EQ(describe_act(e), "ran systemctl against a protected service");
    for (std::uint32_t h = 0; h < LG_HOOK_COUNT; ++h) EXPECT_STRNE(hook_name(h), "unknown") << h;
}

TEST(EventFormat, RulesForMembersSayWhatWasRefused) {
    lg_event e = sample_event();
    e.signal = 0;
    e.target_pid = 0;
    std::memset(e.target_comm, 0, sizeof e.target_comm);
    e.hook = LG_HOOK_CGROUP_FILE;
    e.object_id = 77;
    e.detail = LG_DETAIL_OPEN_FD;
    std::strcpy(e.target_comm, "cgroup.freeze");
    EXPECT_EQ(describe_act(e), "opened cgroup.freeze of cgroup 77 through a file opened earlier");
    e.hook = LG_HOOK_MOUNT;
    e.detail = LG_MOUNT_UMOUNT;
    std::strcpy(e.target_comm, "/");
    EXPECT_EQ(describe_act(e), "tried to unmount at / in a mount namespace shared with the machine");
    e.hook = LG_HOOK_SYSCTL;
    e.detail = 0;
    std::strcpy(e.target_comm, "core_pattern");
    EXPECT_EQ(describe_act(e), "wrote /proc/sys file core_pattern");
    e.hook = LG_HOOK_SIGIO;
    e.detail = LG_DETAIL_MAP_FULL;
    std::strcpy(e.target_comm, "null");
    EXPECT_EQ(describe_act(e), "set the owner (F_SETOWN) of null while liveguard's file-owner map was full");
    e.hook = LG_HOOK_CONTROL_FIFO;
    e.detail = LG_DETAIL_RENAME;
    e.object_id = 9;
    std::strcpy(e.target_comm, "control");
    EXPECT_EQ(describe_act(e), "tried to rename, link or remove supervisor control FIFO control (inode 9)");
    e.hook = LG_HOOK_REALTIME;
    e.detail = LG_DETAIL_SCHED_SETATTR;
    e.target_pid = 5;
    e.target_tid = 5;
    std::strcpy(e.target_comm, "python3");
    EXPECT_EQ(describe_act(e), "called sched_setattr (refused to members whatever the policy) for python3[5]");
    e.detail = 1;
    EXPECT_EQ(describe_act(e), "asked for realtime scheduling (policy 1) for python3[5]");
    e.hook = LG_HOOK_PATH;
    e.detail = LG_PATH_LOCK;
    e.object_id = 12;
    std::strcpy(e.target_comm, "gateway.pid");
    EXPECT_EQ(describe_act(e), "took a lock or lease on gateway.pid in a protected tree (inode 12)");
    e.detail = LG_PATH_WRITE | LG_DETAIL_OPEN_FD | LG_DETAIL_SHARED_MAP;
    EXPECT_EQ(describe_act(e), "mapped gateway.pid shared for writing in a protected tree (inode 12)");
    e.hook = LG_HOOK_TERMINAL;
    e.detail = 0x5412;
    e.object_id = (136ULL << 20) | 3;
    e.target_pid = 42;
    EXPECT_EQ(describe_act(e),
              "used terminal ioctl 0x5412 (input, settings, foreground group or hangup) on device 136:3, "
              "the terminal of protected process 42");
    e.hook = LG_HOOK_PORT;
    e.detail = 6;
    e.object_id = 8642;
    EXPECT_EQ(describe_act(e), "bound TCP port 8642, which a protected service listens on");
    e.hook = LG_HOOK_TASKS;
    e.detail = LG_TASKS_LIMIT;
    e.object_id = 4096;
    EXPECT_EQ(describe_act(e), "forked past the session's limit of 4096 tasks ([sessions] max_tasks)");
    e.detail = LG_TASKS_MAP_FULL;
    EXPECT_NE(describe_act(e).find("table of session task counts is full"), std::string::npos);
    e.hook = LG_HOOK_MULTIPLEXER;
    e.detail = 0;
    e.target_pid = 77;
    std::strcpy(e.target_comm, "default");
    EXPECT_EQ(describe_act(e), "connected to the terminal multiplexer server 77 (socket default), which runs outside "
                               "the session what a client sends it");
    e.hook = LG_HOOK_USER_COUNTS;
    e.detail = LG_USER_COUNT_INOTIFY_INSTANCES;
    e.object_id = 128;
    EXPECT_EQ(describe_act(e),
              "made an inotify instance from the last eighth of its user's fs.inotify.max_user_instances (128), "
              "kept for processes outside sessions");
    e.detail = LG_USER_COUNT_FANOTIFY_MARKS;
    EXPECT_NE(describe_act(e).find("a fanotify mark from the last eighth of its user's fs.fanotify.max_user_marks"),
              std::string::npos);
    e.hook = LG_HOOK_OOM;
    e.detail = LG_OOM_SCORE_WRITE;
    e.target_pid = 42;
    std::strcpy(e.target_comm, "oom_score_adj");
    EXPECT_EQ(describe_act(e), "opened /proc/42/oom_score_adj for writing (session members stay the OOM "
                               "killer's first choice)");
    e.detail = LG_OOM_MEMBER_KILLED;
    e.target_tid = 42;
    e.object_id = 2000;
    std::strcpy(e.target_comm, "python3");
    EXPECT_EQ(describe_act(e),
              "ran out of memory, and the OOM killer took session member python3[42] (oom_score_adj 1000)");
    e.detail = LG_OOM_PROTECTED_KILLED;
    e.object_id = 999;
    EXPECT_EQ(describe_act(e),
              "ran out of memory, and the OOM killer took protected process python3[42] (oom_score_adj -1)");
    e.verdict = LG_VERDICT_KILLED;
    EXPECT_EQ(std::string(verdict_name(e.verdict)), "killed");
    e.verdict = LG_VERDICT_DENIED;
    std::strcpy(e.target_comm, "gateway.pid");
    e.target_tid = 5;
    e.hook = LG_HOOK_NETWORK;
    e.detail = LG_NETWORK_ADMIN;
    EXPECT_NE(describe_act(e).find("CAP_NET_ADMIN in the machine's network namespace"), std::string::npos);
    e.hook = LG_HOOK_PTRACE;
    e.detail = 0x5;  // PTRACE_MODE_READ_FSCREDS
    EXPECT_EQ(describe_act(e), "called process_madvise on gateway.pid[42/5]");
    for (std::uint32_t h = LG_HOOK_CLONE_INTO_CGROUP; h < LG_HOOK_COUNT; ++h) {
        e.hook = h;
        EXPECT_NE(describe_act(e), "did something refused") << hook_name(h);
    }
}

TEST(EventFormat, ACulpritInAContainerHasBothPids) {
    lg_event e = sample_event();
    e.ns_pid = 7;
    std::int64_t offset = 1795996800ll * 1000000000ll - 5'000'000'000ll;
    EXPECT_NE(format_event_text(e, offset).find("python3[100/101, 7 in its namespace]"), std::string::npos)
        << format_event_text(e, offset);
}

TEST(EventFormat, Text) {
    std::int64_t offset = 1795996800ll * 1000000000ll - 5'000'000'000ll;
    std::string line = format_event_text(sample_event(), offset);
    EXPECT_EQ(line,
              "2026-11-30T00:00:00.000Z DENIED task_kill: python3[100/101] sent SIGTERM to "
              "hermes-gateway!![200] (session cgroup 4242)");
}

TEST(EventFormat, CommWithQuotesAndControlBytesStaysValidJson) {
    lg_event e = sample_event();
    std::memcpy(e.comm, "a\"b\\c\n\x01\xff", 9);
    std::string line = format_event_json(e, 0);
    EXPECT_NE(line.find("\"comm\":\"a\\\"b\\\\c\\n\\u0001\\u00ff\""), std::string::npos) << line;
}

TEST(EventFormat, SignalNames) {
    EXPECT_EQ(signal_name(9), "SIGKILL");
    EXPECT_EQ(signal_name(1), "SIGHUP");
    EXPECT_EQ(signal_name(31), "SIGSYS");
    EXPECT_EQ(signal_name(32), "SIGRTMIN");
    EXPECT_EQ(signal_name(35), "SIGRTMIN+3");
    EXPECT_EQ(signal_name(200), "SIG200");
}

TEST(Json, QuoteKeepsUtf8) {
    EXPECT_EQ(json::quote("h\xc3\xa9"), "\"h\xc3\xa9\"");
    EXPECT_EQ(json::quote("\xc3"), "\"\\u00c3\"");
}

TEST(ProcStat, ParsesCommWithParensAndSpaces) {
    std::string line =
        "4321 (evil) (x) y) S 1 4321 4321 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 "
        "10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    auto st = parse_proc_stat(line);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->pid, 4321);
    EXPECT_EQ(st->comm, "evil) (x) y");
    EXPECT_EQ(st->state, 'S');
    EXPECT_EQ(st->ppid, 1);
    EXPECT_EQ(st->start_ticks, 987654u);
}

TEST(ProcStat, RejectsTruncatedLines) {
    EXPECT_FALSE(parse_proc_stat(""));
    EXPECT_FALSE(parse_proc_stat("12 (x) S 1 2"));
    EXPECT_FALSE(parse_proc_stat("12 (x"));
}

TEST(Pid, StrictParsing) {
    EXPECT_EQ(parse_pid("1").value_or(0), 1);
    EXPECT_EQ(parse_pid("4194304").value_or(0), 4194304);
    EXPECT_FALSE(parse_pid("0"));
    EXPECT_FALSE(parse_pid("+3"));
    EXPECT_FALSE(parse_pid("-3"));
    EXPECT_FALSE(parse_pid(" 3"));
    EXPECT_FALSE(parse_pid("3 "));
    EXPECT_FALSE(parse_pid("2147483648"));
}

TEST(Doctor, LsmList) {
    EXPECT_TRUE(lsm_list_has_bpf("lockdown,capability,landlock,bpf\n"));
    EXPECT_TRUE(lsm_list_has_bpf("bpf,yama"));
    EXPECT_FALSE(lsm_list_has_bpf("lockdown,capability,bpfx,apparmor"));
    EXPECT_FALSE(lsm_list_has_bpf(""));
}

TEST(Run, ShellStatus) {
    EXPECT_EQ(shell_status(0), 0);
    EXPECT_EQ(shell_status(3 << 8), 3);
    EXPECT_EQ(shell_status(9), 128 + 9);   // killed by SIGKILL
    EXPECT_EQ(shell_status(15), 128 + 15);
}

TEST(EventFormat, UnfilteredJsonPassesWellFormedLinesAsTheyAre) {
    std::string line = R"({"time":"2026-11-30T00:00:00Z","hook":"task_kill","pid":1})";
    EXPECT_EQ(render_journal_line(line, {}, true, false).value_or(""), line);
    EXPECT_FALSE(render_journal_line(line.substr(0, 30), {}, true, false));
}

TEST(EventFormat, UnfilteredJsonPassesOnlyWhatBeginsAsARecord) {
    EXPECT_TRUE(render_journal_line(R"({"type":"repeats","count":2})", {}, true, false));
    EXPECT_TRUE(render_journal_line(R"({"lost":"ring buffer full","count":1,"total":1})", {}, true, false));
    EXPECT_FALSE(render_journal_line(R"({"type":"from a later version","time":"x"})", {}, true, false));
    EXPECT_FALSE(render_journal_line(R"({"a":1})", {}, true, false));
}
