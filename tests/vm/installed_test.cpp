// The installed package under a real s6 supervision tree: the service
// directory it ships, copied into a scan directory as an s6 user does,
// runs the watcher (`load --foreground` with the installed policy); a
// SIGKILL of the watcher from outside any session is followed by a new
// watcher that s6 started, and a session still cannot kill that one.
// Runs only with LIVEGUARD_BIN set to an installed binary (tests/host/package).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "harness.h"
#include "policy/s6_status.h"

using namespace lgtest;
namespace fs = std::filesystem;

namespace {

// PREFIX/sbin/liveguard-bpf ships PREFIX/share/liveguard-bpf/s6/liveguard-bpf.
fs::path installed_service_dir() {
    return fs::path(lg_binary()).parent_path().parent_path() / "share/liveguard-bpf/s6/liveguard-bpf";
}

// s6-svscan on a scan directory under /run, holding a copy of one service
// directory (s6-supervise writes its supervise/ beside the run script).
class ScanDir {
public:
    ScanDir(const fs::path& root, const fs::path& service) : scan_(root / "service"), slot_(scan_ / service.filename()) {
        fs::remove_all(root);
        fs::create_directories(scan_);
        fs::copy(service, slot_, fs::copy_options::recursive);
        pid_ = ::fork();
        if (pid_ == 0) {
            ::setsid();
            ::execlp("s6-svscan", "s6-svscan", scan_.c_str(), nullptr);
            ::_exit(127);
        }
    }
    ~ScanDir() {
        // s6-svscan -t: each service gets SIGTERM, the watcher exits cleanly
        // and leaves the guard pinned.
        run_cmd({"s6-svscanctl", "-t", scan_.string()});
        for (int i = 0; i < 1000; ++i) {
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    // The supervised PID, from s6's own status file; nothing while down.
    std::optional<pid_t> pid() const {
        auto bytes = read_file((slot_ / "supervise/status").string());
        if (!bytes) return std::nullopt;
        auto st = liveguard::parse_s6_status(*bytes);
        return st ? st->pid : std::nullopt;
    }
    const fs::path& slot() const { return slot_; }

private:
    fs::path scan_, slot_;
    pid_t pid_ = -1;
};

bool status_names_watcher(pid_t pid) {
    return lg({"status"}).out.find("policy watcher: running as pid " + std::to_string(pid) + " ") != std::string::npos;
}

}  // namespace

TEST(Installed, TheS6ServiceDirectoryRestartsTheWatcherAfterSigkill) {
    const fs::path service = installed_service_dir();
    ASSERT_TRUE(fs::exists(service / "run"))
        << service << " is missing: set LIVEGUARD_BIN to an installed liveguard-bpf (tests/host/package does)";
    // The service loads the guard itself, as it does at boot: nothing
    // loaded, no other watcher (an earlier test's `load` may have started one).
    ASSERT_EQ(lg({"unload"}).status, 0);
    ScanDir tree("/run/lg-installed-s6", service);

    std::optional<pid_t> first;
    ASSERT_TRUE(wait_until([&] { return (first = tree.pid()).has_value() && status_names_watcher(*first); }, 60000))
        << "s6 did not bring the watcher up: " << lg({"status"}).out << run_cmd({"s6-svstat", tree.slot().string()}).out
        << read_file("/run/liveguard/watcher.log").value_or("(no watcher log)");
    EXPECT_NE(lg({"status"}).out.find("liveguard: loaded, enforcing"), std::string::npos) << lg({"status"}).out;

    // Outside any session a root kill goes through, as it must for the
    // administrator; s6 starts the watcher again.
    ASSERT_EQ(::kill(*first, SIGKILL), 0);
    std::optional<pid_t> second;
    ASSERT_TRUE(wait_until([&] { return (second = tree.pid()).has_value() && *second != *first && status_names_watcher(*second); },
                           60000))
        << "no new watcher after SIGKILL of " << *first << ": " << lg({"status"}).out
        << run_cmd({"s6-svstat", tree.slot().string()}).out;

    // The new watcher protects itself: a session's SIGKILL is refused and
    // s6 still supervises the same process.
    sabotage_if_control();
    Session s;
    EXPECT_EQ(s.as_member([&] { return sys_kill(*second, SIGKILL); }), EPERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(tree.pid(), second);
}
