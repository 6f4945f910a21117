// Automatic sessions on the real kernel: a test runner started by any user,
// with no wrapper, is a session from its first instruction; what it leaves
// running is reaped; an unprivileged `run` is a session through the
// watcher. AutoSessionGuard.* tests assert refusals and are part of the
// control run; AutoSession.* assert the rest.
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "harness.h"
#include "liveguard/abi.h"

using namespace lgtest;
namespace fs = std::filesystem;

namespace {

const std::string kDir = "/tmp/lgauto";
const uid_t kNobody = 65534;
const std::string kPolicy = kDir + "/policy.toml";
const std::string kJournal = "/var/log/liveguard/events.jsonl";

// The pytest plugin where pytest finds installed plugins: the first
// site-packages directory of the system's python3, over which a tmpfs is
// mounted (the guest's root is the host's, read-only) holding the plugin
// and its entry point, as the package installs them.
void install_plugin_once() {
    static bool done = false;
    if (done) return;
    done = true;
    auto r = run_cmd({"/usr/bin/python3", "-c", "import site; print(site.getsitepackages()[0])"});
    std::string site = r.out.substr(0, r.out.find('\n'));
    ASSERT_FALSE(site.empty()) << r.err;
    if (!fs::exists(site)) GTEST_SKIP() << site << " does not exist; cannot install the plugin";
    ASSERT_EQ(::mount("tmpfs", site.c_str(), "tmpfs", 0, "mode=0755"), 0) << std::strerror(errno);
    std::string src = fs::path(lg_binary()).parent_path().string() + "/python";
    fs::copy(src, site, fs::copy_options::recursive);
}

void write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
    write_text(path, text);
    ::chmod(path.c_str(), mode);
}

// Runs argv as uid 65534 with the gateway's pid in LG_GATEWAY.
CmdResult as_nobody(const std::vector<std::string>& argv, pid_t gateway = 0,
                    const std::vector<std::string>& env = {}) {
    std::vector<std::string> a{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               "env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent",
                               "PYTHONDONTWRITEBYTECODE=1", "LG_GATEWAY=" + std::to_string(gateway)};
    a.insert(a.end(), env.begin(), env.end());
    a.insert(a.end(), argv.begin(), argv.end());
    return run_cmd(a);
}

std::vector<std::string> pytest_args(const std::string& file) {
    return {"-q", "-p", "no:cacheprovider", kDir + "/" + file};
}

const char* kKillTest =
    "import os, signal, pytest\n"
    "def test_signals_the_gateway():\n"
    "    with pytest.raises(PermissionError):\n"
    "        os.kill(int(os.environ['LG_GATEWAY']), signal.SIGTERM)\n";

// Leaves a `sleep` behind in a session of its own (setsid) and writes its
// pid to LG_PIDFILE.
const char* kLeaveTest =
    "import os, subprocess\n"
    "def test_leaves_a_daemon():\n"
    "    p = subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
    "    with open(os.environ['LG_PIDFILE'], 'w') as f:\n"
    "        f.write(str(p.pid))\n";

// The policy the guard was last loaded with by these tests: loading is
// most of a test's time in the VM, so consecutive tests share one load.
std::string g_loaded_policy;

class AutoSessionFixture : public ::testing::Test {
protected:
    static void TearDownTestSuite() {
        lg({"unload"});
        g_loaded_policy.clear();
    }
    void SetUp() override {
        install_plugin_once();
        fs::remove_all(kDir);
        fs::create_directories(kDir);
        ::chmod(kDir.c_str(), 0777);
        write_file(kDir + "/test_kill.py", kKillTest);
        write_file(kDir + "/test_leave.py", kLeaveTest);
    }
    // The guard and its watcher as the last load_auto left them. In the
    // control run `status` calls the guard without its kill link not
    // loaded; loading it again would cost each test a load (over a
    // minute on 7.x in the fmod_ret form).
    static bool still_loaded() {
        if (!sabotaged()) return lg({"status"}).out.find("policy watcher: running") != std::string::npos;
        auto pid = read_file("/run/liveguard/watcher.pid").value_or("");
        return ::access("/sys/fs/bpf/liveguard/link_lg_bprm_check", F_OK) == 0 &&
               ::access("/sys/fs/bpf/liveguard/link_lg_task_kill", F_OK) != 0 && std::atoi(pid.c_str()) > 0 &&
               ::kill(std::atoi(pid.c_str()), 0) == 0;
    }
    void load_auto(const std::string& extra = "") {
        std::string policy =
            "[sessions]\nauto = [\"pytest\", \"py.test\", \"python3 -m pytest\", \"tox\", \"nox\"]\n" + extra;
        write_text(kPolicy, policy);
        if (policy == g_loaded_policy && still_loaded()) return;
        lg({"unload"});
        g_loaded_policy.clear();
        auto r = lg({"load", "--config", kPolicy});
        ASSERT_EQ(r.status, 0) << r.out << r.err;
        sabotage_if_control();
        g_loaded_policy = policy;
    }

public:
    // A journal line about a refusal aimed at `target`, naming `test`.
    bool journal_names(pid_t target, const std::string& test) {
        auto j = read_file(kJournal).value_or("");
        std::string tp = "\"target_pid\":" + std::to_string(target) + ",";
        std::size_t pos = 0;
        while ((pos = j.find(tp, pos)) != std::string::npos) {
            std::size_t start = j.rfind('\n', pos), end = j.find('\n', pos);
            std::string line = j.substr(start == std::string::npos ? 0 : start, end - start);
            if (line.find(test) != std::string::npos) return true;
            pos = end;
        }
        return false;
    }
};

class AutoSessionGuard : public AutoSessionFixture {};
// What pytest's report says of refusals (the plugin), and the test ids of
// a run without it: in the full scope and in the 6.1 fmod_ret lane
// (tests/vm/suite: subset+report).
class PytestReport : public AutoSessionFixture {};
class AutoSession : public AutoSessionFixture {};

void expect_refused_and_named(AutoSessionFixture* f, const CmdResult& r, Target& gw) {
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out << r.err;
    EXPECT_TRUE(gw.untouched());
    EXPECT_TRUE(wait_until([&] { return f->journal_names(gw.pid(), "test_kill.py::test_signals_the_gateway"); },
                           5000))
        << "no journalled refusal names the test; the journal ends:\n" << [] {
               auto j = read_file(kJournal).value_or("");
               return j.substr(j.size() > 1500 ? j.size() - 1500 : 0);
           }();
}

}  // namespace

TEST_F(AutoSessionGuard, PythonDashMPytestRunByAnyUserIsASession) {
    load_auto();
    Target gw({.uid = kNobody});
    protect(gw.pid());
    auto args = pytest_args("test_kill.py");
    args.insert(args.begin(), {"/usr/bin/python3", "-m", "pytest"});
    expect_refused_and_named(this, as_nobody(args, gw.pid()), gw);
}

TEST_F(AutoSessionGuard, UsrBinPytestRunByAnyUserIsASession) {
    load_auto();
    Target gw({.uid = kNobody});
    protect(gw.pid());
    auto args = pytest_args("test_kill.py");
    args.insert(args.begin(), "/usr/bin/pytest");
    expect_refused_and_named(this, as_nobody(args, gw.pid()), gw);
}

TEST_F(AutoSessionGuard, AToxLikeScriptThatExecsPytestIsASession) {
    load_auto();
    write_file(kDir + "/run_tests.sh", "#!/bin/sh\nexec pytest \"$@\"\n", 0755);
    Target gw({.uid = kNobody});
    protect(gw.pid());
    auto args = pytest_args("test_kill.py");
    args.insert(args.begin(), kDir + "/run_tests.sh");
    expect_refused_and_named(this, as_nobody(args, gw.pid()), gw);
}

TEST_F(AutoSessionGuard, AMatchingExecInsideARunSessionStaysInIt) {
    load_auto();
    Target gw({.uid = kNobody});
    protect(gw.pid());
    auto r = lg({"run", "--user", "65534", "--name", "outer", "--", "env", "LG_GATEWAY=" + std::to_string(gw.pid()),
                 "PYTHONDONTWRITEBYTECODE=1", "/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 kDir + "/test_kill.py"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(gw.untouched());
    // The refusal is the run session's (a cgroup id), not a new one's.
    EXPECT_NE(r.err.find("session outer: 1 act refused"), std::string::npos) << r.err;
}

TEST_F(AutoSessionGuard, AnExecThatCannotRecordItsSessionJoinsTheOverflowSession) {
    load_auto();
    Target gw({.uid = kNobody});
    protect(gw.pid());
    int fd = bpf_obj_get("/sys/fs/bpf/liveguard/lg_sessions");
    ASSERT_GE(fd, 0);
    // Fill the map with keys no cgroup and no process session uses.
    std::vector<std::uint64_t> filler;
    lg_session s{};
    for (std::uint64_t k = 0x4000000000000000ull; filler.size() < 2 * LG_MAX_SESSIONS; ++k) {
        if (bpf_map_update_elem(fd, &k, &s, BPF_NOEXIST) != 0) break;
        filler.push_back(k);
    }
    auto before = lg({"status", "--json"}).out;
    auto args = pytest_args("test_kill.py");
    args.insert(args.begin(), {"/usr/bin/python3", "-m", "pytest"});
    auto r = as_nobody(args, gw.pid());
    auto after = lg({"status", "--json"}).out;
    for (auto k : filler) bpf_map_delete_elem(fd, &k);
    ::close(fd);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(gw.untouched());
    auto overflow = [](const std::string& j) {
        auto p = j.find("\"session_overflow\":");
        return p == std::string::npos ? -1 : std::stol(j.substr(p + 19));
    };
    EXPECT_GT(overflow(after), overflow(before)) << before << "\n" << after;
}

TEST_F(AutoSessionGuard, AnUnprivilegedRunCannotKillTheGateway) {
    load_auto();
    Target gw({.uid = kNobody});
    protect(gw.pid());
    auto r = as_nobody({lg_binary(), "run", "--", "sh", "-c", "kill -9 " + std::to_string(gw.pid())});
    EXPECT_EQ(r.status, 1) << "sh's own status (kill failed) must come back\n" << r.out << r.err;
    EXPECT_TRUE(gw.untouched());
    // The watcher's summary of the session, printed by `run`.
    EXPECT_NE(r.err.find("1 act refused (task_kill 1)"), std::string::npos) << r.err;
}

// Ranked first for the OOM killer by the watcher (within its tick of the
// session's start), children included, and not able to lower it.
const char* kOomRankTest =
    "import os, subprocess, time\n"
    "def adj():\n"
    "    with open('/proc/self/oom_score_adj') as f:\n"
    "        return f.read().strip()\n"
    "def test_ranked_first_for_the_oom_killer():\n"
    "    deadline = time.monotonic() + 10\n"
    "    while adj() != '1000' and time.monotonic() < deadline:\n"
    "        time.sleep(0.05)\n"
    "    assert adj() == '1000'\n"
    "    child = subprocess.run(['cat', '/proc/self/oom_score_adj'], capture_output=True, text=True)\n"
    "    assert child.stdout.strip() == '1000'\n"
    "    try:\n"
    "        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)\n"
    "        os.write(fd, b'0')\n"
    "    except PermissionError:\n"
    "        pass\n"
    "    else:\n"
    "        raise AssertionError('a member lowered its OOM score')\n"
    "    assert adj() == '1000'\n";

TEST_F(AutoSession, AnAutomaticSessionIsTheOomKillersFirstChoice) {
    load_auto();
    write_file(kDir + "/test_oom_rank.py", kOomRankTest);
    auto args = pytest_args("test_oom_rank.py");
    args.insert(args.begin(), "/usr/bin/pytest");
    auto r = as_nobody(args);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("1 passed"), std::string::npos) << r.out << r.err;
}

TEST_F(AutoSession, AnUnprivilegedRunIsTheOomKillersFirstChoice) {
    load_auto();
    auto r = as_nobody({lg_binary(), "run", "--", "cat", "/proc/self/oom_score_adj"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "1000\n") << r.err;
}

TEST_F(AutoSession, APythonThatIsNotRunningPytestIsNoMember) {
    load_auto();
    Target standin({.uid = kNobody});
    protect(standin.pid());
    auto r = as_nobody({"/usr/bin/python3", "-c",
                        "import os, signal; os.kill(int(os.environ['LG_GATEWAY']), signal.SIGTERM)"},
                       standin.pid());
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(standin.wait_killed());
}

TEST_F(AutoSession, WhatASessionLeavesRunningIsReapedAndLogged) {
    load_auto();
    std::string pidfile = kDir + "/left.pid";
    auto args = pytest_args("test_leave.py");
    args.insert(args.begin(), "/usr/bin/pytest");
    auto r = as_nobody(args, 0, {"LG_PIDFILE=" + pidfile});
    auto exited = std::chrono::steady_clock::now();
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    pid_t left = std::stoi(read_file(pidfile).value_or("0"));
    ASSERT_GT(left, 0);
    // How soon is a speed figure, printed and never a limit: under an
    // emulator sharing its core with another VM it has passed 1 s.
    bool gone = wait_until([&] { return ::kill(left, 0) != 0; }, 30000);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - exited);
    ASSERT_TRUE(gone) << "the detached sleep outlived its session";
    std::printf("the leftover was gone %lld ms after pytest exited\n", static_cast<long long>(ms.count()));
    // The watcher logs what it reaped once the kill is done: the test can
    // see the process gone first.
    std::string log;
    EXPECT_TRUE(wait_until([&] {
        log = read_file("/run/liveguard/watcher.log").value_or("");
        return log.find("reaped " + std::to_string(left) + " sleep 1000") != std::string::npos;
    })) << log;
}

TEST_F(AutoSession, WithReapOffWhatASessionLeavesKeepsRunning) {
    load_auto("reap = false\n");
    std::string pidfile = kDir + "/left.pid";
    auto args = pytest_args("test_leave.py");
    args.insert(args.begin(), "/usr/bin/pytest");
    auto r = as_nobody(args, 0, {"LG_PIDFILE=" + pidfile});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    pid_t left = std::stoi(read_file(pidfile).value_or("0"));
    ASSERT_GT(left, 0);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    EXPECT_EQ(::kill(left, 0), 0) << "reap = false, yet the sleep was killed";
    ::kill(left, SIGKILL);  // started by this test's pytest
}

TEST_F(AutoSession, AnUnprivilegedUserCannotUntagUnprotectOrUnload) {
    load_auto();
    Target gw({.uid = kNobody});
    protect(gw.pid());
    Session s;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {lg_binary(), "untag", s.dir()},
             {lg_binary(), "unprotect", "--pid", std::to_string(gw.pid())},
             {lg_binary(), "unload"}}) {
        auto r = as_nobody(args);
        EXPECT_NE(r.status, 0) << args[1] << " succeeded without root";
        EXPECT_NE(r.err.find("root"), std::string::npos) << args[1] << ": " << r.err;
    }
    EXPECT_TRUE(listed_protected(gw.pid()));
    auto st = lg({"status", "--json"});
    EXPECT_NE(st.out.find("\"loaded\":true"), std::string::npos) << st.out;
    EXPECT_NE(st.out.find(std::to_string(s.id())), std::string::npos) << "the session was untagged";
}

TEST_F(AutoSession, WithoutAWatcherAnUnprivilegedRunStartsNothing) {
    lg({"unload"});
    g_loaded_policy.clear();
    auto l = lg({"load"});
    ASSERT_EQ(l.status, 0) << l.err;
    std::string marker = kDir + "/ran";
    auto r = as_nobody({lg_binary(), "run", "--", "touch", marker});
    EXPECT_NE(r.status, 0);
    EXPECT_FALSE(fs::exists(marker)) << "the command ran outside any session";
    EXPECT_NE(r.err.find("watcher"), std::string::npos) << r.err;
}

// --- what pytest's own report says ------------------------------------------

namespace {

// One test swallows the refusal of its kill (as cleanup code catching
// OSError would), one signals only its own child, one kills through
// pkill in a child: the line numbers below are the file's.
const char* kReportTest =
    "import os, signal, subprocess\n"                                          // 1
    "GW = int(os.environ['LG_GATEWAY'])\n"                                     // 2
    "def test_swallows_the_refusal():\n"                                       // 3
    "    try:\n"                                                               // 4
    "        os.kill(GW, signal.SIGTERM)\n"                                    // 5
    "    except OSError:\n"                                                    // 6
    "        pass\n"                                                           // 7
    "def test_signals_its_own_child():\n"                                      // 8
    "    p = subprocess.Popen(['sleep', '100'])\n"                             // 9
    "    os.kill(p.pid, signal.SIGTERM)\n"                                     // 10
    "    p.wait()\n"                                                           // 11
    "def test_pkills_the_gateway():\n"                                         // 12
    "    subprocess.run(['pkill', '-TERM', 'lg-report-gatew'])\n";    // 13

// The same acts as a plugin-less run sees them: os.kill, pkill, and a C
// extension's kill (ctypes stands in for one).
const char* kNamedTest =
    "import ctypes, os, signal, subprocess\n"
    "GW = int(os.environ['LG_GATEWAY'])\n"
    "def test_by_os_kill():\n"
    "    try:\n"
    "        os.kill(GW, signal.SIGTERM)\n"
    "    except OSError:\n"
    "        pass\n"
    "def test_by_pkill():\n"
    "    subprocess.run(['pkill', '-TERM', 'lg-report-gatew'])\n"
    "def test_by_c_code():\n"
    "    ctypes.CDLL(None, use_errno=True).kill(GW, signal.SIGUSR1)\n";

// Two tests for two workers, each refused once.
const char* kXdistTest =
    "import os, signal\n"
    "GW = int(os.environ['LG_GATEWAY'])\n"
    "def test_first_worker_kill():\n"
    "    try: os.kill(GW, signal.SIGTERM)\n"
    "    except OSError: pass\n"
    "def test_second_worker_kill():\n"
    "    try: os.kill(GW, signal.SIGKILL)\n"
    "    except OSError: pass\n";

// A line of pytest's short summary ("FAILED ../path/test_x.py::test_y")
// for the test `nodeid` with outcome `outcome`; paths there are relative
// to the directory pytest ran in.
bool summary_has(const std::string& out, const std::string& outcome, const std::string& nodeid) {
    std::size_t pos = 0;
    while ((pos = out.find(outcome + " ", pos)) != std::string::npos) {
        auto end = out.find('\n', pos);
        std::string line = out.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        if ((pos == 0 || out[pos - 1] == '\n') && line.find(nodeid) != std::string::npos) return true;
        pos += outcome.size();
    }
    return false;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

// A virtualenv with nothing of liveguard's in it: pytest and what it
// imports copied from Debian's packages into its site-packages, as a
// user's `pip install pytest` would have put them there (PyPI is out of
// reach here).
std::string make_bare_venv(bool with_xdist = false) {
    std::string venv = kDir + "/venv";
    auto r = run_cmd({"/usr/bin/python3", "-m", "venv", "--without-pip", venv});
    if (r.status != 0) return "";
    auto site = run_cmd({venv + "/bin/python3", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"});
    std::string dst = site.out.substr(0, site.out.find('\n'));
    auto mods = run_cmd({"/usr/bin/python3", "-c",
                         "import sys, os, pytest, _pytest.config, pluggy, iniconfig, packaging\n"
                         "import _pytest.python, _pytest.terminal, _pytest.warnings\n" +
                             std::string(with_xdist ? "import xdist, xdist.plugin, execnet, importlib.metadata\n"
                                                      // its pytest11 entry point, as pip installs it
                                                      "print(importlib.metadata.distribution('pytest-xdist')._path)\n"
                                                    : "") +
                         "seen = set()\n"
                         "for m in list(sys.modules.values()):\n"
                         "    f = getattr(m, '__file__', None) or ''\n"
                         "    if '/dist-packages/' not in f: continue\n"
                         "    top = f.split('/dist-packages/')[0] + '/dist-packages/' + f.split('/dist-packages/')[1].split('/')[0]\n"
                         "    if top not in seen: seen.add(top); print(top)\n"});
    if (mods.status != 0 || dst.empty()) return "";
    std::size_t pos = 0;
    while (pos < mods.out.size()) {
        auto nl = mods.out.find('\n', pos);
        std::string src = mods.out.substr(pos, nl - pos);
        pos = nl == std::string::npos ? mods.out.size() : nl + 1;
        if (src.empty() || src.find("liveguard") != std::string::npos) continue;
        fs::copy(src, dst + "/" + fs::path(src).filename().string(), fs::copy_options::recursive);
    }
    run_cmd({"chmod", "-R", "a+rX", venv});
    return venv;
}

// Debian's pytest, quiet, on kReportTest with `options`, as nobody, with
// `gw` protected.
CmdResult run_report_test(Target& gw, const std::vector<std::string>& options) {
    write_file(kDir + "/test_report.py", kReportTest);
    protect(gw.pid());
    std::vector<std::string> argv{"/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back(kDir + "/test_report.py");
    return as_nobody(argv, gw.pid());
}

// pytest's closing line without its time: "5 failed, 723 passed, 18 skipped".
std::string outcome_line(const std::string& out) {
    std::size_t end = out.find_last_not_of('\n');
    if (end == std::string::npos) return "";
    std::size_t start = out.rfind('\n', end);
    std::string line = out.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
    line.erase(0, line.find_first_not_of("= "));
    if (auto in = line.rfind(" in "); in != std::string::npos) line.erase(in);
    return line;
}

}  // namespace

// The plugin installed where pytest finds it: the test that swallowed its
// refusal still passes, but its report has a section saying what was
// refused, to whom and from which line, and a LiveguardRefusal warning;
// the test that signalled only its own child has neither.
TEST_F(PytestReport, APytestReportShowsEachRefusalOnItsTest) {
    load_auto();
    write_file(kDir + "/test_report.py", kReportTest);
    Target gw({.uid = kNobody, .name = "lg-report-gateway"});
    protect(gw.pid());
    auto r = as_nobody({"/usr/bin/python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider", kDir + "/test_report.py"},
                       gw.pid());
    std::printf("%s\n", r.out.c_str());
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("3 passed"), std::string::npos) << r.out;
    EXPECT_TRUE(gw.untouched());
    EXPECT_EQ(count_of(r.out, "liveguard refusals (call)"), 2u) << r.out;
    EXPECT_NE(r.out.find("to lg-report-gatew"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("protected by: liveguard-bpf protect"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("test_report.py:5: os.kill(GW, signal.SIGTERM)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("this test's own process"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pkill["), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("started by this test"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("test_report.py:13: subprocess.run"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("LiveguardRefusal"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("test_report.py::test_swallows_the_refusal: 1 refused"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("test_report.py::test_pkills_the_gateway: 1 refused"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("test_signals_its_own_child: "), std::string::npos) << r.out;
}

TEST_F(PytestReport, LiveguardStrictFailsExactlyTheRefusedTests) {
    load_auto();
    Target gw({.uid = kNobody, .name = "lg-report-gateway"});
    auto r = run_report_test(gw, {"--liveguard-strict"});
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("2 failed, 1 passed"), std::string::npos) << r.out;
    EXPECT_TRUE(summary_has(r.out, "FAILED", "test_report.py::test_swallows_the_refusal")) << r.out;
    EXPECT_TRUE(summary_has(r.out, "FAILED", "test_report.py::test_pkills_the_gateway")) << r.out;
    EXPECT_TRUE(gw.untouched());
}

TEST_F(PytestReport, WarningsAsErrorsMakeARefusalAnError) {
    load_auto();
    Target gw({.uid = kNobody, .name = "lg-report-gateway"});
    auto r = run_report_test(gw, {"-W", "error::liveguard_pytest.LiveguardRefusal"});
    EXPECT_NE(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(summary_has(r.out, "ERROR", "test_report.py::test_swallows_the_refusal")) << r.out;
    EXPECT_FALSE(summary_has(r.out, "ERROR", "test_report.py::test_signals_its_own_child")) << r.out;
    EXPECT_NE(r.out.find("3 passed"), std::string::npos) << "a refusal is an error of its test, not a failure: " << r.out;
    EXPECT_TRUE(gw.untouched());
}

// Nothing of liveguard's in the interpreter: each refusal still names its
// test, read from the pytest process (PYTEST_CURRENT_TEST) or the child's
// inherited environment.
TEST_F(PytestReport, WithoutThePluginEachRefusalNamesItsTest) {
    load_auto();
    std::string venv = make_bare_venv();
    ASSERT_FALSE(venv.empty()) << "could not make a virtualenv with pytest";
    auto probe = run_cmd({venv + "/bin/python3", "-c",
                          "import importlib.metadata as m; print([e.name for e in m.entry_points(group='pytest11')])"});
    ASSERT_EQ(probe.out.find("liveguard"), std::string::npos) << "the venv sees the plugin: " << probe.out;
    write_file(kDir + "/test_named.py", kNamedTest);
    Target gw({.uid = kNobody, .name = "lg-report-gateway"});
    protect(gw.pid());
    auto r = as_nobody({venv + "/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        kDir + "/test_named.py"},
                       gw.pid());
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find("liveguard"), std::string::npos) << "the plugin ran: " << r.out;
    EXPECT_TRUE(gw.untouched());
    for (const char* test : {"test_named.py::test_by_os_kill", "test_named.py::test_by_pkill",
                             "test_named.py::test_by_c_code"})
        EXPECT_TRUE(wait_until([&] { return journal_names(gw.pid(), test); }, 5000))
            << test << " is named by no refusal; the journal ends:\n" << [] {
                   auto j = read_file(kJournal).value_or("");
                   return j.substr(j.size() > 3000 ? j.size() - 3000 : 0);
               }();
}

TEST_F(PytestReport, EachXdistWorkersRefusalLandsOnItsTest) {
    load_auto();
    if (run_cmd({"/usr/bin/python3", "-c", "import xdist"}).status != 0) GTEST_SKIP() << "python3-pytest-xdist missing";
    write_file(kDir + "/test_xdist.py", kXdistTest);
    Target gw({.uid = kNobody, .name = "lg-report-gateway"});
    protect(gw.pid());
    auto r = as_nobody({"/usr/bin/python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-n", "2",
                        kDir + "/test_xdist.py"},
                       gw.pid());
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(gw.untouched());
    EXPECT_NE(r.out.find("test_xdist.py::test_first_worker_kill: 1 refused"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("test_xdist.py::test_second_worker_kill: 1 refused"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("sent SIGTERM"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("sent SIGKILL"), std::string::npos) << r.out;
    for (const char* test : {"test_xdist.py::test_first_worker_kill", "test_xdist.py::test_second_worker_kill"})
        EXPECT_TRUE(wait_until([&] { return journal_names(gw.pid(), test); }, 5000)) << test;
}

// A suite nobody here wrote, Debian's own tests of pyflakes (some of which
// run pyflakes in subprocesses): in an automatic session with the plugin
// loaded it ends as it does with no guard loaded at all.
TEST_F(PytestReport, ADebianPackagesOwnSuiteEndsAsWithoutTheGuard) {
    ASSERT_TRUE(fs::exists("/usr/lib/python3/dist-packages/pyflakes/test")) << "python3-pyflakes is not installed";
    const std::vector<std::string> argv{"/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
                                        "pyflakes.test"};
    lg({"unload"});
    g_loaded_policy.clear();
    auto without = as_nobody(argv);
    load_auto();
    auto with = as_nobody(argv);
    std::printf("without the guard: %s\nwith it: %s\n", outcome_line(without.out).c_str(),
                outcome_line(with.out).c_str());
    EXPECT_NE(outcome_line(without.out).find(" passed"), std::string::npos) << without.out << without.err;
    EXPECT_EQ(outcome_line(with.out), outcome_line(without.out)) << with.out;
    EXPECT_EQ(with.status, without.status);
    EXPECT_NE(with.out.find("liveguard-pytest"), std::string::npos) << "the plugin was not loaded: " << with.out;
    EXPECT_EQ(with.out.find("refused"), std::string::npos) << with.out;
    EXPECT_TRUE(wait_until(
        [] {
            auto j = read_file(kJournal).value_or("");
            return j.find("\"type\":\"session_end\"") != std::string::npos &&
                   j.find("--pyargs pyflakes.test\"") != std::string::npos;
        },
        5000))
        << "the run was no automatic session";
}

// pytest-xdist's workers without the plugin: each refusal names the test
// its worker was running.
TEST_F(PytestReport, WithoutThePluginEachXdistWorkersRefusalNamesItsTest) {
    load_auto();
    if (run_cmd({"/usr/bin/python3", "-c", "import xdist"}).status != 0) GTEST_SKIP() << "python3-pytest-xdist missing";
    std::string venv = make_bare_venv(true);
    ASSERT_FALSE(venv.empty()) << "could not make a virtualenv with pytest and pytest-xdist";
    write_file(kDir + "/test_xdist.py", kXdistTest);
    Target gw({.uid = kNobody, .name = "lg-report-gateway"});
    protect(gw.pid());
    auto r = as_nobody({venv + "/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                        kDir + "/test_xdist.py"},
                       gw.pid());
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("2 passed"), std::string::npos) << r.out << r.err;
    EXPECT_TRUE(gw.untouched());
    for (const char* test : {"test_xdist.py::test_first_worker_kill", "test_xdist.py::test_second_worker_kill"})
        EXPECT_TRUE(wait_until([&] { return journal_names(gw.pid(), test); }, 5000)) << test;
}
