// The watcher as systemd's Type=notify service, with NOTIFY_SOCKET pointed
// at a socket of the test's: what it tells the manager, and when.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

using namespace lgtest;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

const std::string kRoot = test_root() + "/lgservice";

struct Notification {
    Clock::time_point at;
    std::string text;
    bool has(const std::string& line) const { return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos; }
    std::string field(const std::string& key) const {
        auto at = ("\n" + text).find("\n" + key + "=");
        if (at == std::string::npos) return "";
        auto start = at + key.size() + 1;
        auto end = text.find('\n', start);
        return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
};

// The service manager's side of the protocol: a datagram socket, as
// systemd listens on.
class NotifySocket {
public:
    NotifySocket() {
        fs::create_directories(kRoot);
        path_ = kRoot + "/notify.sock";
        ::unlink(path_.c_str());
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un a {};
        a.sun_family = AF_UNIX;
        path_.copy(a.sun_path, sizeof a.sun_path - 1);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ADD_FAILURE() << "bind: " << errno;
    }
    ~NotifySocket() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    const std::string& path() const { return path_; }
    // The next message within `ms`, or nothing.
    std::optional<Notification> next(int ms) {
        struct pollfd p {fd_, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) return std::nullopt;
        char buf[4096];
        ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n < 0) return std::nullopt;
        return Notification{Clock::now(), std::string(buf, static_cast<std::size_t>(n))};
    }
    // Messages until one has `line`, within `ms`; that one last.
    std::vector<Notification> until(const std::string& line, int ms) {
        std::vector<Notification> got;
        auto end = Clock::now() + std::chrono::milliseconds(ms);
        while (Clock::now() < end) {
            int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
            auto m = next(std::max(left, 1));
            if (!m) break;
            got.push_back(*m);
            if (m->has(line)) break;
        }
        return got;
    }

private:
    std::string path_;
    int fd_ = -1;
};

// `load --foreground` as systemd starts it: NOTIFY_SOCKET, and the
// watchdog's WATCHDOG_USEC for this very process (WATCHDOG_PID).
pid_t start_foreground(const std::string& policy, const std::string& socket, long watchdog_usec) {
    pid_t pid = ::fork();
    if (pid == 0) {
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::setenv("NOTIFY_SOCKET", socket.c_str(), 1);
        if (watchdog_usec > 0) {
            ::setenv("WATCHDOG_USEC", std::to_string(watchdog_usec).c_str(), 1);
            ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
        }
        std::string bin = lg_binary();
        ::execl(bin.c_str(), bin.c_str(), "load", "--foreground", "--config", policy.c_str(), nullptr);
        ::_exit(127);
    }
    return pid;
}

int wait_exit(pid_t pid, int ms) {
    for (int waited = 0; waited < ms; waited += 10) {
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        ::usleep(10 * 1000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
}

class Service : public ::testing::Test {
protected:
    void SetUp() override {
        lg({"unload"});
        fs::remove_all(kRoot);
        fs::create_directories(kRoot);
    }
    void TearDown() override {
        if (watcher_ > 0) {
            ::kill(watcher_, SIGKILL);
            ::waitpid(watcher_, nullptr, 0);
        }
        lg({"unload"});
    }
    std::string policy_path() const { return kRoot + "/policy.toml"; }
    // Protects `gw` by a PID file (the policy's other lines in `extra`),
    // loads the guard with that policy, then makes session `s` (tagging
    // needs the guard loaded) and has its SIGTERM at `gw` refused.
    void load_and_refuse_a_kill(Target& gw, std::optional<Session>& s, const std::string& extra = "") {
        std::string pf = kRoot + "/gateway.pid";
        write_hermes_pid_file(pf, gw.pid());
        write_text(policy_path(), "[[protect]]\npidfile = \"" + pf + "\"\n" + extra);
        auto r = lg({"load", "--config", policy_path()});
        ASSERT_EQ(r.status, 0) << r.out << r.err;
        s.emplace();
        ASSERT_EQ(s->as_member([&] { return sys_kill(gw.pid(), SIGTERM); }), EPERM);
    }
    pid_t watcher_ = -1;
};

}  // namespace

// READY=1 comes only once the programs are attached and the policy is
// applied: at that moment the PID file's gateway is already protected
// and a session's kill of it refused. Then WATCHDOG=1 at half the
// watchdog's timeout; a reload is RELOADING=1 then READY=1, whether the
// new policy was applied or rejected; SIGTERM is STOPPING=1.
TEST_F(Service, ReadyOnlyOnceEnforcingThenWatchdogPingsReloadsAndStop) {
    Target gw;
    std::string pf = kRoot + "/gateway.pid";
    write_hermes_pid_file(pf, gw.pid());
    write_text(policy_path(), "[[protect]]\npidfile = \"" + pf + "\"\n");
    NotifySocket manager;
    // A watchdog of 8 s: a ping each 4 s. Shorter would be met on a real
    // machine, but a turn of the loop under emulation, on the slowest
    // kernels, can take a few seconds.
    watcher_ = start_foreground(policy_path(), manager.path(), 8000000);

    // Loading takes seconds (most of a minute on the newest kernels under
    // emulation): READY within three minutes.
    auto before_ready = manager.until("READY=1", 180000);
    ASSERT_FALSE(before_ready.empty());
    ASSERT_TRUE(before_ready.back().has("READY=1")) << before_ready.back().text;
    // Checked at once, before anything else could finish a late attach.
    EXPECT_TRUE(listed_protected(gw.pid()));
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(gw.pid(), SIGTERM); }), EPERM);
    EXPECT_TRUE(gw.untouched());
    std::string status = before_ready.back().field("STATUS");
    EXPECT_NE(status.find("enforcing, attached as "), std::string::npos) << status;
    EXPECT_NE(status.find("(1 targets)"), std::string::npos) << status;

    // Pings at half the watchdog's timeout, none later than the timeout.
    std::vector<Notification> pings;
    auto end = Clock::now() + std::chrono::milliseconds(17000);
    while (Clock::now() < end) {
        auto m = manager.next(500);
        if (m && m->has("WATCHDOG=1")) pings.push_back(*m);
    }
    EXPECT_GE(pings.size(), 3u);
    for (std::size_t i = 1; i < pings.size(); ++i) {
        EXPECT_LT(pings[i].at - pings[i - 1].at, std::chrono::milliseconds(8000)) << "ping " << i;
        // Not a flood either: about half the timeout apart.
        EXPECT_GT(pings[i].at - pings[i - 1].at, std::chrono::milliseconds(3000)) << "ping " << i;
    }

    // A rejected policy: reloading, then ready again with the old one,
    // and `reload` (systemd's ExecReload) fails with the reason.
    write_text(policy_path(), "[[protect]]\nbogus = 1\n");
    auto bad = lg({"reload"});
    EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
    auto around_bad = manager.until("READY=1", 10000);
    bool reloading = false;
    for (const auto& m : around_bad) {
        if (m.has("RELOADING=1")) {
            reloading = true;
            EXPECT_FALSE(m.field("MONOTONIC_USEC").empty()) << m.text;
        }
    }
    EXPECT_TRUE(reloading);
    ASSERT_FALSE(around_bad.empty());
    EXPECT_NE(around_bad.back().field("STATUS").find("rejected the new policy"), std::string::npos)
        << around_bad.back().text;
    EXPECT_EQ(s.as_member([&] { return sys_kill(gw.pid(), SIGTERM); }), EPERM);

    // A good one: applied before ready.
    Target second;
    write_hermes_pid_file(kRoot + "/second.pid", second.pid());
    write_text(policy_path(), "[[protect]]\npidfile = \"" + pf + "\"\n[[protect]]\npidfile = \"" + kRoot +
                                  "/second.pid\"\n");
    auto good = lg({"reload"});
    EXPECT_EQ(good.status, 0) << good.out << good.err;
    auto around_good = manager.until("READY=1", 10000);
    ASSERT_FALSE(around_good.empty());
    EXPECT_TRUE(listed_protected(second.pid()));
    EXPECT_NE(around_good.back().field("STATUS").find("(2 targets)"), std::string::npos) << around_good.back().text;

    ::kill(watcher_, SIGTERM);
    auto stopping = manager.until("STOPPING=1", 10000);
    ASSERT_FALSE(stopping.empty());
    EXPECT_TRUE(stopping.back().has("STOPPING=1"));
    EXPECT_EQ(wait_exit(watcher_, 10000), 0);
    watcher_ = -1;
    // Stopping the watcher leaves enforcement pinned.
    EXPECT_EQ(s.as_member([&] { return sys_kill(gw.pid(), SIGKILL); }), EPERM);
}

// Without a watchdog set for it, the watcher sends no pings; without
// NOTIFY_SOCKET it sends nothing at all (s6, a shell).
TEST_F(Service, NoWatchdogNoPings) {
    write_text(policy_path(), "[[protect]]\npidfile = \"" + kRoot + "/none.pid\"\n");
    NotifySocket manager;
    watcher_ = start_foreground(policy_path(), manager.path(), 0);
    auto ready = manager.until("READY=1", 180000);
    ASSERT_FALSE(ready.empty());
    ASSERT_TRUE(ready.back().has("READY=1"));
    int pings = 0;
    auto end = Clock::now() + std::chrono::milliseconds(2000);
    while (Clock::now() < end)
        if (auto m = manager.next(200); m && m->has("WATCHDOG=1")) ++pings;
    EXPECT_EQ(pings, 0);
}

namespace {

// Debian's node_exporter, unpacked beside the test binary by the Makefile
// (build/tools), not installed: nothing of it runs on the build machine.
std::string node_exporter_binary() {
    char self[PATH_MAX] = {};
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    std::string dir = n > 0 ? fs::path(std::string(self, static_cast<std::size_t>(n))).parent_path().string() : ".";
    return dir + "/tools/prometheus-node-exporter";
}

// The value of the first sample line starting with `series `, or nothing.
std::optional<std::string> sample_value(const std::string& text, const std::string& series) {
    auto at = ("\n" + text).find("\n" + series + " ");
    if (at == std::string::npos) return std::nullopt;
    auto start = at + series.size() + 1;
    auto end = text.find('\n', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

// The watcher keeps its counters in the textfile collector's directory;
// Debian's node_exporter, reading it, serves the refusal after a refused
// kill, with the count `status --json` gives.
TEST_F(Service, NodeExporterServesTheRefusalCounterAfterARefusedKill) {
    std::string exporter = node_exporter_binary();
    ASSERT_EQ(::access(exporter.c_str(), X_OK), 0)
        << exporter << " is missing: make build/tools/prometheus-node-exporter unpacks Debian's";
    Target gw;
    std::string textdir = kRoot + "/textfile";
    fs::create_directories(textdir);
    std::optional<Session> s;
    ASSERT_NO_FATAL_FAILURE(load_and_refuse_a_kill(gw, s, "[metrics]\ntextfile_directory = \"" + textdir + "\"\n"));
    auto metrics = lg({"metrics"});
    ASSERT_EQ(metrics.status, 0) << metrics.err;
    std::string attach = lg({"status", "--json"}).out.find("\"attach\":\"fmod_ret\"") != std::string::npos
                             ? "fmod_ret" : "lsm";
    EXPECT_EQ(sample_value(metrics.out, "liveguard_refusals_total{door=\"task_kill\",attach=\"" + attach + "\"}"),
              "1")
        << metrics.out;

    const std::string port = "19100";
    pid_t ne = ::fork();
    if (ne == 0) {
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 1);
        ::dup2(null, 2);
        std::string dir_flag = "--collector.textfile.directory=" + textdir;
        std::string listen = "--web.listen-address=127.0.0.1:" + port;
        ::execl(exporter.c_str(), exporter.c_str(), "--collector.disable-defaults", "--collector.textfile",
                dir_flag.c_str(), listen.c_str(), nullptr);
        ::_exit(127);
    }
    // node_exporter sorts a series' labels by name.
    std::string series = "liveguard_refusals_total{attach=\"" + attach + "\",door=\"task_kill\"}";
    std::string scraped;
    bool served = wait_until([&] {
        scraped = run_cmd({"curl", "-sf", "http://127.0.0.1:" + port + "/metrics"}).out;
        return sample_value(scraped, series) == std::optional<std::string>("1");
    }, 60000);
    ::kill(ne, SIGTERM);
    ::waitpid(ne, nullptr, 0);
    ASSERT_TRUE(served) << series << " not served as 1:\n" << scraped;
    EXPECT_EQ(sample_value(scraped, "node_textfile_scrape_error"), "0") << scraped;
    EXPECT_EQ(sample_value(scraped, "liveguard_watcher_up"), "1") << scraped;
    // The same count as status gives.
    auto status = lg({"status", "--json"}).out;
    EXPECT_NE(status.find("\"task_kill\":1,"), std::string::npos) << status;
    EXPECT_TRUE(gw.untouched());
    // Once the watcher stops nothing keeps the counters current: the file
    // goes, rather than say for ever that the guard enforces.
    ASSERT_EQ(lg({"unload"}).status, 0);
    EXPECT_FALSE(fs::exists(textdir + "/liveguard.prom"));
}

namespace {

// Debian's systemd-journald, started for the test as systemd would at
// boot (the VM's init is not systemd), and stopped after it: the guard
// sends to journald only while its socket is there.
class Journald {
public:
    Journald() {
        ::unlink(kSocket);
        pid_ = ::fork();
        if (pid_ == 0) {
            int null = ::open("/dev/null", O_RDWR);
            ::dup2(null, 0);
            ::dup2(null, 1);
            ::dup2(null, 2);
            ::execl("/lib/systemd/systemd-journald", "systemd-journald", nullptr);
            ::_exit(127);
        }
        up_ = wait_until([] { return ::access(kSocket, W_OK) == 0; }, 60000);
    }
    ~Journald() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
        }
        ::unlink(kSocket);
    }
    bool up() const { return up_; }
    // journalctl over the runtime journal this journald writes.
    std::string query(const std::vector<std::string>& matches) const {
        std::vector<std::string> argv = {"journalctl", "-D", "/run/log/journal", "--no-pager", "-o", "export"};
        argv.insert(argv.end(), matches.begin(), matches.end());
        return run_cmd(argv).out;
    }

private:
    static constexpr const char* kSocket = "/run/systemd/journal/socket";
    pid_t pid_ = -1;
    bool up_ = false;
};

}  // namespace

// A refusal is a structured entry in the systemd journal: journalctl
// finds it by its door and by its target's pid, with its MESSAGE_ID, its
// session and a message a person reads.
TEST_F(Service, ARefusalIsAStructuredEntryInTheSystemJournal) {
    Journald journald;
    ASSERT_TRUE(journald.up()) << "systemd-journald did not open its socket";
    Target gw;
    std::optional<Session> s;
    ASSERT_NO_FATAL_FAILURE(load_and_refuse_a_kill(gw, s));
    std::string target = "LIVEGUARD_TARGET_PID=" + std::to_string(gw.pid());
    std::string found;
    ASSERT_TRUE(wait_until([&] {
        found = journald.query({"LIVEGUARD_HOOK=task_kill", target});
        return found.find("MESSAGE_ID=") != std::string::npos;
    }, 30000)) << journald.query({"SYSLOG_IDENTIFIER=liveguard-bpf"});
    EXPECT_NE(found.find("\nMESSAGE_ID=6c1f0d7a3e5b4b0f9a8e2d41c7b3f590\n"), std::string::npos) << found;
    EXPECT_NE(found.find("\nLIVEGUARD_KIND=refusal\n"), std::string::npos) << found;
    EXPECT_NE(found.find("\nLIVEGUARD_SESSION_ID=" + std::to_string(s->id()) + "\n"), std::string::npos) << found;
    EXPECT_NE(found.find("\nLIVEGUARD_SIGNAL=SIGTERM\n"), std::string::npos) << found;
    EXPECT_NE(found.find("\nMESSAGE="), std::string::npos) << found;
    EXPECT_NE(found.find("SIGTERM"), std::string::npos) << found;
    // Only that one: a filter on another door finds nothing of it.
    EXPECT_EQ(journald.query({"LIVEGUARD_HOOK=ptrace_access_check", target}).find("MESSAGE_ID="), std::string::npos);
    EXPECT_TRUE(gw.untouched());
}

// The event journal survives a reboot: a refusal journalled before it,
// the guard unloaded and /run emptied as a reboot leaves it, and the
// guard loaded again, `events --since` still shows it.
TEST_F(Service, TheEventJournalOutlivesAReboot) {
    const std::string journal = "/var/log/liveguard/events.jsonl";
    Target gw;
    std::optional<Session> s;
    ASSERT_NO_FATAL_FAILURE(load_and_refuse_a_kill(gw, s));
    const std::regex refusal("\"target_pid\": *" + std::to_string(gw.pid()) + "[,}]");
    ASSERT_TRUE(wait_until([&] { return std::regex_search(read_file(journal).value_or(""), refusal); }, 30000))
        << "the watcher journalled no refusal of " << gw.pid() << " in " << journal;

    ASSERT_EQ(lg({"unload"}).status, 0);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/run/liveguard", ec)) fs::remove_all(entry.path(), ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_TRUE(fs::is_empty("/run/liveguard"));
    ASSERT_EQ(lg({"load"}).status, 0);

    auto since = lg({"events", "--no-follow", "--json", "--since", "1h"});
    ASSERT_EQ(since.status, 0) << since.err;
    EXPECT_TRUE(std::regex_search(since.out, refusal)) << since.out;
    auto last = lg({"events", "--no-follow", "--json", "-n", "50"});
    EXPECT_TRUE(std::regex_search(last.out, refusal)) << last.out;
    EXPECT_TRUE(gw.untouched());
}
