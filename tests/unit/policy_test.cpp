#include <gtest/gtest.h>

#include <algorithm>

#include <string>

#include "kernel/exec_words.h"
#include "kernel/path_excepts.h"
#include "kernel/protected_ports.h"
#include "policy/pidfile.h"
#include "liveguard/abi.h"
#include "policy/policy.h"
#include "policy/s6_status.h"

using namespace liveguard;

TEST(PidFile, HermesJsonRecord) {
    auto r = parse_pid_file(
        "{\"pid\": 1234, \"kind\": \"hermes-gateway\", \"argv\": [\"hermes\", \"gateway\", "
        "\"run\", \"{\\\"pid\\\": 9}\"], \"start_time\": 987654, \"hermes_home\": \"/home/u/.hermes\"}\n");
    ASSERT_TRUE(std::holds_alternative<PidFileRecord>(r));
    EXPECT_EQ(std::get<PidFileRecord>(r).pid, 1234);
    EXPECT_EQ(std::get<PidFileRecord>(r).start_time.value_or(0), 987654u);
}

TEST(PidFile, BareInteger) {
    auto r = parse_pid_file("4321\n");
    ASSERT_TRUE(std::holds_alternative<PidFileRecord>(r));
    EXPECT_EQ(std::get<PidFileRecord>(r).pid, 4321);
    EXPECT_FALSE(std::get<PidFileRecord>(r).start_time);
}

TEST(PidFile, TornWritesAreRetriedNotRejected) {
    EXPECT_EQ(std::get<PidFileProblem>(parse_pid_file("")), PidFileProblem::Empty);
    EXPECT_EQ(std::get<PidFileProblem>(parse_pid_file("  \n")), PidFileProblem::Empty);
    EXPECT_EQ(std::get<PidFileProblem>(parse_pid_file("{\"pid\": 12, \"kind\": \"herm")),
              PidFileProblem::Incomplete);
    // "12" may be the first half of "1234\n": a bare integer needs its newline.
    EXPECT_EQ(std::get<PidFileProblem>(parse_pid_file("12")), PidFileProblem::Incomplete);
}

TEST(PidFile, GarbageIsMalformed) {
    for (std::string bad : std::initializer_list<std::string>{"abc", "-5", "0", "12 13", "{\"pid\": \"12\"}", "{\"pid\": -1}",
                            "{\"kind\": \"x\"}", "99999999999", std::string("\x7f" "ELF", 4),
                            "{\"nested\": {\"pid\": 5}}"}) {
        auto r = parse_pid_file(bad);
        ASSERT_TRUE(std::holds_alternative<PidFileProblem>(r)) << bad;
        EXPECT_EQ(std::get<PidFileProblem>(r), PidFileProblem::Malformed) << bad;
    }
}

TEST(S6Status, ReadsThePidOfARunningService) {
    std::string b(35, '\0');
    b[24 + 6] = 0x42;
    b[24 + 7] = static_cast<char>(0xb8);  // 17080, as s6 2.11 wrote it
    auto st = parse_s6_status(b);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->pid.value_or(0), 17080);
}

TEST(S6Status, DownAndMalformed) {
    auto down = parse_s6_status(std::string(35, '\0'));
    ASSERT_TRUE(down);
    EXPECT_FALSE(down->pid);
    EXPECT_FALSE(parse_s6_status(""));
    EXPECT_FALSE(parse_s6_status(std::string(26, '\1')));  // pre-2.11 layout
    EXPECT_FALSE(parse_s6_status(std::string(4096, '\1')));
    std::string huge(35, '\0');
    huge[24] = 0x7f;  // a PID no kernel hands out
    EXPECT_FALSE(parse_s6_status(huge));
}

TEST(Policy, EveryKind) {
    auto p = parse_policy(
        "[[protect]]\npid = 42\n"
        "[[protect]]\npidfile = \"/home/*/.hermes/gateway.pid\"\n"
        "[[protect]]\ns6 = \"/run/service/gateway-*\"\n"
        "[[protect]]\nsystemd_unit = \"hermes-gateway*.service\"\n"
        "[[protect]]\ncgroup = \"/sys/fs/cgroup/system.slice/x.service\"\n"
        "[sessions]\nparent = \"/sys/fs/cgroup/tests\"\ntag = [\"/sys/fs/cgroup/ci\"]\n"
        "refuse_service_manager_sockets = true\n",
        "p.toml");
    ASSERT_EQ(p.targets.size(), 5u);
    EXPECT_EQ(p.targets[0].kind, TargetKind::Pid);
    EXPECT_EQ(p.targets[0].pid, 42);
    EXPECT_EQ(p.targets[1].kind, TargetKind::PidFile);
    EXPECT_EQ(p.targets[2].kind, TargetKind::S6);
    EXPECT_EQ(p.targets[3].kind, TargetKind::SystemdUnit);
    EXPECT_EQ(p.targets[4].kind, TargetKind::Cgroup);
    EXPECT_EQ(p.targets[4].source, 5u);
    EXPECT_EQ(p.targets[1].line, 4);
    EXPECT_EQ(p.session_parent.value_or(""), "/sys/fs/cgroup/tests");
    ASSERT_EQ(p.session_tags.size(), 1u);
    EXPECT_TRUE(p.refuse_service_manager_sockets);
    EXPECT_FALSE(parse_policy("[[protect]]\npid = 1\n", "p.toml").refuse_service_manager_sockets);
}

TEST(Policy, AllowOpensTheNamedMachineDoorsToSessions) {
    auto p = parse_policy("[sessions]\nallow = [\"clock\", \"module\"]\n", "p.toml");
    EXPECT_EQ(p.allowed_doors, (std::uint64_t{1} << LG_HOOK_CLOCK) | (std::uint64_t{1} << LG_HOOK_MODULE));
    EXPECT_EQ(parse_policy("[sessions]\nallow = [\"oom\"]\n", "p.toml").allowed_doors, std::uint64_t{1} << LG_HOOK_OOM);
    EXPECT_EQ(parse_policy("[sessions]\nallow = [\"user_counts\"]\n", "p.toml").allowed_doors,
              std::uint64_t{1} << LG_HOOK_USER_COUNTS);
    EXPECT_EQ(parse_policy("[[protect]]\npid = 1\n", "p.toml").allowed_doors, 0u);
    EXPECT_EQ(parse_policy("[sessions]\nallow = []\n", "p.toml").allowed_doors, 0u);
}

TEST(Policy, HandoffPathsDefaultToTheSpoolsAndCanBeReplaced) {
    auto p = parse_policy("[sessions]\nreap = true\n", "p.toml");
    EXPECT_EQ(p.handoff, default_handoff_paths());
    EXPECT_NE(std::find(p.handoff.begin(), p.handoff.end(), "/var/spool/cron"), p.handoff.end());
    EXPECT_NE(std::find(p.handoff.begin(), p.handoff.end(), "/etc/modprobe.d"), p.handoff.end());
    EXPECT_NE(std::find(p.handoff.begin(), p.handoff.end(), "/run/udev/rules.d"), p.handoff.end());
    p = parse_policy("[sessions]\nhandoff = [\"/run/jobs.fifo\"]\n", "p.toml");
    EXPECT_EQ(p.handoff, std::vector<std::string>{"/run/jobs.fifo"});
    p = parse_policy("[sessions]\nhandoff = []\n", "p.toml");
    EXPECT_TRUE(p.handoff.empty());
}

TEST(Policy, SessionsHaveATaskLimit) {
    auto p = parse_policy("", "p.toml");
    EXPECT_EQ(p.max_tasks, kDefaultSessionMaxTasks);
    p = parse_policy("[sessions]\nmax_tasks = 200\n", "p.toml");
    EXPECT_EQ(p.max_tasks, 200u);
    p = parse_policy("[sessions]\nmax_tasks = 0\n", "p.toml");
    EXPECT_EQ(p.max_tasks, 0u);
}

TEST(Policy, PortsBelongToTheirTarget) {
    auto p = parse_policy("[[protect]]\npidfile = \"/run/g.pid\"\nports = [8642, 443]\n", "p.toml");
    ASSERT_EQ(p.targets.size(), 1u);
    EXPECT_EQ(p.targets[0].ports, (std::vector<std::uint16_t>{8642, 443}));
}

TEST(ProtectedPorts, ListeningTcpAndBoundUdpRowsOfTheProcessOnly) {
    // Rows as /proc/net/tcp prints them: 127.0.0.1:18642 listening (0A)
    // with inode 100, an established row of the same process, and a
    // listener of another process (inode 300).
    std::string tcp =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:48D2 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 100 1 0 100 0 0 10 0\n"
        "   1: 0100007F:48D2 0100007F:9C40 01 00000000:00000000 00:00000000 00000000 65534        0 200 1 0 20 4 30 10 -1\n"
        "   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 300 1 0 100 0 0 10 0\n"
        "garbage\n";
    EXPECT_EQ(ports_in_table(tcp, true, {100, 200}), (std::vector<std::uint16_t>{18642}));
    EXPECT_TRUE(ports_in_table(tcp, true, {}).empty());
    EXPECT_TRUE(ports_in_table("", true, {100}).empty());
}

TEST(ProtectedPorts, UdpServersNotClients) {
    // Bound and unconnected (07) on 18642: a server. The same unconnected
    // on 40000, in the ephemeral range: a client's (a resolver's query).
    // Connected (01) to a peer: a client's too.
    std::string udp =
        "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
        "  1: 0100007F:48D2 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 100 2 0 0\n"
        "  2: 0100007F:9C40 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 200 2 0 0\n"
        "  3: 0100007F:1F90 0100007F:0035 01 00000000:00000000 00:00000000 00000000     0        0 300 2 0 0\n";
    EXPECT_EQ(ports_in_table(udp, false, {100, 200, 300}, {32768, 60999}), (std::vector<std::uint16_t>{18642}));
    EXPECT_EQ(ports_in_table(udp, false, {100, 200, 300}, {50000, 60999}), (std::vector<std::uint16_t>{18642, 40000}));
}

TEST(Policy, ErrorsNameFileAndLine) {
    struct Case {
        const char* text;
        const char* want;
    } cases[] = {
        {"[[protect]]\npid = 0\n", "p.toml:2: `pid` must be a positive integer"},
        {"[[protect]]\npid = \"12\"\n", "p.toml:2: `pid` must be a positive integer"},
        {"[[protect]]\npidfile = \"rel/x.pid\"\n", "p.toml:2: `pidfile` must be an absolute path"},
        {"[[protect]]\n", "p.toml:1: a [[protect]] table needs exactly one"},
        {"[[protect]]\npid = 1\ns6 = \"/x\"\n", "needs exactly one of"},
        {"[[protect]]\npidfil = \"/x\"\n", "p.toml:2: unknown key `pidfil`"},
        {"[[protect]]\nsystemd_unit = \"/etc/x.service\"\n", "is a unit name, not a path"},
        {"[protect]\npid = 1\n", "must be written as [[protect]] tables"},
        {"colour = 1\n", "p.toml:1: unknown key `colour`"},
        {"[sessions]\nparent = 5\n", "p.toml:2: `parent` must be a string"},
        {"[sessions]\nrefuse_service_manager_sockets = \"yes\"\n",
         "p.toml:2: `refuse_service_manager_sockets` must be true or false"},
        {"[sessions]\nallow = \"clock\"\n", "p.toml:2: `allow` must be an array of door names"},
        {"[sessions]\nallow = [\"task_kill\"]\n",
         "p.toml:2: `allow`: \"task_kill\" is no door a policy may open (these may: reboot, module, clock, "
         "raw_io, power, securityfs, network, hostname, swap, oom, user_counts, fs_space, service_bus)"},
        {"[sessions]\nallow = [\"clocks\"]\n", "p.toml:2: `allow`: \"clocks\" is no door"},
        {"[sessions]\nallow = [3]\n", "p.toml:2: `allow`: this entry is no door"},
        {"[[protect]\n", "p.toml:1: "},
        {"[[protect]]\npid = 1\npid = 2\n", "p.toml:3: "},
        {"[sessions]\nhandoff = \"/var/spool/cron\"\n", "p.toml:2: `handoff` must be an array of paths"},
        {"[sessions]\nhandoff = [\"spool\"]\n", "p.toml:2: `handoff` must be an absolute path"},
        {"[sessions]\nmax_tasks = -1\n", "p.toml:2: `max_tasks` must be a whole number of tasks"},
        {"[sessions]\nmax_tasks = \"many\"\n", "p.toml:2: `max_tasks` must be a whole number of tasks"},
        {"[sessions]\nmax_tasks = 4294967296\n", "p.toml:2: `max_tasks` must be a whole number of tasks"},
        {"[[protect]]\npid = 1\nports = 8642\n", "p.toml:3: `ports` must be an array of port numbers"},
        {"[[protect]]\npid = 1\nports = [0]\n", "p.toml:3: each `ports` entry must be a port number"},
        {"[[protect]]\npid = 1\nports = [65536]\n", "each `ports` entry must be a port number from 1 to 65535"},
        {"[[protect]]\npid = 1\nports = [\"http\"]\n", "each `ports` entry must be a port number"},
    };
    for (const auto& c : cases) {
        try {
            parse_policy(c.text, "p.toml");
            ADD_FAILURE() << "accepted: " << c.text;
        } catch (const PolicyError& e) {
            EXPECT_NE(std::string(e.what()).find(c.want), std::string::npos)
                << c.text << " -> " << e.what();
        }
    }
}

TEST(Policy, PathWithExceptNames) {
    auto p = parse_policy(
        "[[protect]]\npath = \"/home/*/.hermes\"\nexcept = [\"__pycache__\", \"*.pyc\", \".pytest_cache\"]\n"
        "[[protect]]\npath = \"/srv/app/.git\"\n",
        "p.toml");
    ASSERT_EQ(p.targets.size(), 2u);
    EXPECT_EQ(p.targets[0].kind, TargetKind::Path);
    EXPECT_EQ(p.targets[0].pattern, "/home/*/.hermes");
    EXPECT_EQ(p.targets[0].except, (std::vector<std::string>{"__pycache__", "*.pyc", ".pytest_cache"}));
    EXPECT_TRUE(p.targets[1].except.empty());
    EXPECT_EQ(p.targets[0].describe(), "path \"/home/*/.hermes\"");
}

TEST(Policy, ExceptEntriesTheKernelCannotMatchAreRefused) {
    struct Case {
        const char* text;
        const char* want;
    } cases[] = {
        {"[[protect]]\npath = \"/x\"\nexcept = \"__pycache__\"\n", "p.toml:3: `except` must be an array of names"},
        {"[[protect]]\npath = \"/x\"\nexcept = [1]\n", "each `except` entry must be a string"},
        {"[[protect]]\npath = \"/x\"\nexcept = [\"a/b\"]\n", "a name, not a path"},
        {"[[protect]]\npath = \"/x\"\nexcept = [\"test_*\"]\n", "a wildcard only as \"*.suffix\""},
        {"[[protect]]\npath = \"/x\"\nexcept = [\"*.tar.gz\"]\n", "a suffix of one part"},
        {"[[protect]]\npath = \"/x\"\nexcept = [\"\"]\n", "an empty name"},
        {"[[protect]]\npath = \"/x\"\nexcept = [\"..\"]\n", "not a name a file can have"},
        {"[[protect]]\npath = \"/x\"\nexcept = [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]\n", "longer than 30 bytes"},
        {"[[protect]]\npidfile = \"/x.pid\"\nexcept = [\"a\"]\n", "p.toml:1: `except` belongs to a [[protect]] path table"},
        {"[[protect]]\npath = \"relative\"\n", "p.toml:2: `path` must be an absolute path"},
    };
    for (const auto& c : cases) {
        try {
            parse_policy(c.text, "p.toml");
            ADD_FAILURE() << "accepted: " << c.text;
        } catch (const PolicyError& e) {
            EXPECT_NE(std::string(e.what()).find(c.want), std::string::npos) << c.text << " -> " << e.what();
        }
    }
}

TEST(Policy, ExceptNamesBecomeTheHashesTheKernelComputes) {
    auto p = parse_policy(
        "[[protect]]\npath = \"/a\"\nexcept = [\"__pycache__\", \"*.pyc\"]\n"
        "[[protect]]\npath = \"/b\"\nexcept = [\"__pycache__\"]\n",
        "p.toml");
    auto keys = path_except_keys(p.targets);
    ASSERT_EQ(keys.size(), 2u);
    // FNV-1a as bpf/lib/trees.h computes it: of the whole name, and of a
    // suffix from its last '.'.
    EXPECT_EQ(keys.at(fnv1a("__pycache__")).exact_sources, 0b11u);
    EXPECT_EQ(keys.at(fnv1a("__pycache__")).suffix_sources, 0u);
    EXPECT_EQ(keys.at(fnv1a(".pyc")).suffix_sources, 0b01u);
    EXPECT_EQ(keys.at(fnv1a(".pyc")).exact_sources, 0u);
}

TEST(Policy, ExampleShipsValid) {
    auto p = load_policy(std::string(LIVEGUARD_SOURCE_DIR) + "/examples/hermes.toml");
    EXPECT_GE(p.targets.size(), 4u);
}

TEST(Policy, FsReserveIsAShareOrASize) {
    EXPECT_EQ(parse_policy("[[protect]]\npid = 1\n", "p.toml").fs_reserve, (FsReserve{false, 1ull << 30}));
    EXPECT_EQ((FsReserve{false, 1ull << 30}).bytes_of(4ull << 30), (4ull << 30) / 10);
    EXPECT_EQ((FsReserve{false, 1ull << 30}).bytes_of(100ull << 30), 1ull << 30);
    EXPECT_EQ(parse_policy("[sessions]\nfs_reserve = \"10%\"\n", "p.toml").fs_reserve, (FsReserve{true, 10}));
    EXPECT_EQ(parse_policy("[sessions]\nfs_reserve = \"512M\"\n", "p.toml").fs_reserve,
              (FsReserve{false, 512ull << 20}));
    EXPECT_EQ(parse_policy("[sessions]\nfs_reserve = 0\n", "p.toml").fs_reserve, (FsReserve{false, 0}));
    EXPECT_EQ((FsReserve{true, 5}).bytes_of(1000), 50u);
    for (const char* bad : {"\"60%\"", "\"5 %\"", "\"lots\"", "-1", "\"\""})
        EXPECT_THROW(parse_policy(std::string("[sessions]\nfs_reserve = ") + bad + "\n", "p.toml"), PolicyError) << bad;
}

TEST(Policy, MetricsTextfileDirectoryDefaultsToDebiansCollectorAndTakesAnAbsolutePathOrNothing) {
    EXPECT_EQ(parse_policy("", "p.toml").metrics_textfile_dir, "/var/lib/prometheus/node-exporter");
    EXPECT_EQ(parse_policy("[metrics]\ntextfile_directory = \"/srv/textfile\"\n", "p.toml").metrics_textfile_dir,
              "/srv/textfile");
    EXPECT_EQ(parse_policy("[metrics]\ntextfile_directory = \"\"\n", "p.toml").metrics_textfile_dir, "");
    for (const char* bad : {"\"relative/dir\"", "1", "[\"/a\"]"})
        EXPECT_THROW(parse_policy(std::string("[metrics]\ntextfile_directory = ") + bad + "\n", "p.toml"),
                     PolicyError)
            << bad;
    try {
        parse_policy("[metrics]\nport = 9100\n", "p.toml");
        ADD_FAILURE() << "an unknown [metrics] key was accepted";
    } catch (const PolicyError& e) {
        EXPECT_NE(std::string(e.what()).find("p.toml:2: unknown key `port` in [metrics]"), std::string::npos) << e.what();
    }
}
