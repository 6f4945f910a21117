#pragma once
// Building blocks of the VM suite: the CLI as a subprocess, target
// processes the test owns, session cgroups, and code run as a member.
// Every process signalled here was started by the test itself.
#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lgtest {

struct CmdResult {
    int status = -1;  // shell convention
    std::string out;
    std::string err;
};

// The binary under test: $LIVEGUARD_BIN when set (an installed one),
// else build/liveguard-bpf, next to the test binary.
std::string lg_binary();
// Runs lg_binary() with `args`.
CmdResult lg(const std::vector<std::string>& args);
// Runs any command.
CmdResult run_cmd(const std::vector<std::string>& argv);

std::string cgroup_root();  // the cgroup v2 mount

// The control run of the file tests: takes every program that refuses
// changes to protected files off its hook, and waits until they are off.
void take_path_hooks_off();
// The same for the named programs (bpf program names, e.g. "lg_capable").
void take_links_off(const std::vector<std::string>& programs);

// Where the file tests make their trees: $LIVEGUARD_TEST_ROOT, else /tmp
// (the btrfs lane points it at a btrfs subvolume).
std::string test_root();

// Whether the suite runs against a guard whose links were removed after
// load (the control run that shows each enforcement test can fail).
bool sabotaged();
// Loads the guard if needed and, in the control run, detaches it again.
void ensure_guard();

struct TargetOptions {
    int threads = 1;                // extra threads besides the main one
    std::optional<uid_t> uid;       // drop to this uid
    bool own_process_group = false;
    std::optional<pid_t> join_pgid;
    std::string name = "lg-gateway";
};

// A disposable stand-in for a live service: a child that sleeps until a
// signal ends it. Killed and reaped on destruction.
class Target {
public:
    explicit Target(TargetOptions opts = {});
    ~Target();
    Target(const Target&) = delete;
    Target& operator=(const Target&) = delete;

    pid_t pid() const { return pid_; }
    const std::vector<pid_t>& thread_ids() const { return tids_; }

    // No signal got through: not exited, not stopped, nothing pending.
    bool untouched();
    // Waits up to 5 s for it to die; true when it was ended by a signal.
    bool wait_killed();

private:
    pid_t pid_ = -1;
    std::vector<pid_t> tids_;
    bool reaped_ = false;
};

// A cgroup under the cgroup v2 mount, tagged with `liveguard-bpf tag`
// unless `tag` is false. Members are killed and the cgroup removed after.
class Session {
public:
    explicit Session(bool tag = true);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const std::string& dir() const { return dir_; }
    std::uint64_t id() const;
    std::string make_child(const std::string& name);  // a sub-cgroup

    // Forks a child that joins `cgroup` (default: the session itself),
    // optionally drops to `uid`, runs `fn` and exits with its result.
    // Returns that result: 0 on success or an errno.
    int as_member(const std::function<int()>& fn, const std::string& cgroup = "",
                  std::optional<uid_t> uid = std::nullopt);

private:
    std::string dir_;
    bool tagged_;
    std::uint64_t id_ = 0;
};

// Protects through the CLI; fails the test on error.
void protect(pid_t pid);

// errno-returning wrappers for every signal-sending path.
int sys_kill(pid_t pid, int sig);
int sys_tkill(pid_t tid, int sig);
int sys_tgkill(pid_t tgid, pid_t tid, int sig);
int sys_rt_sigqueueinfo(pid_t pid, int sig);
int sys_rt_tgsigqueueinfo(pid_t tgid, pid_t tid, int sig);
int sys_pidfd_send_signal(pid_t pid, int sig);

// Events currently buffered, as JSON lines (drains the ring buffer).
std::vector<std::string> drain_events();

// The number of BPF links whose program has this name.
int attached_links_of(const std::string& prog_name);

std::optional<std::string> read_file(const std::string& path);

}  // namespace lgtest

namespace lgtest {

// The suite of tests that each assert a refusal, shared by the files that
// hold them; the control run requires each to fail without the guard.
class Guard : public ::testing::Test {
protected:
    void SetUp() override { ensure_guard(); }
};

// Removes the LSM link in the control run (after a `load` the test did).
void sabotage_if_control();

// Polls `pred` every 2 ms for up to `ms`; true once it holds.
bool wait_until(const std::function<bool()>& pred, int ms = 10000);

// Writes a file the way the Hermes gateway writes its PID file:
// O_CREAT|O_EXCL, then the content (not an atomic rename).
void write_hermes_pid_file(const std::string& path, pid_t pid, bool bare = false,
                           std::optional<std::uint64_t> start_time = std::nullopt);

std::uint64_t start_ticks(pid_t pid);

// Whether the kernel currently marks `pid` protected / protects a cgroup.
bool listed_protected(pid_t pid);
bool cgroup_protected(const std::string& dir);

void write_text(const std::string& path, const std::string& text);

}  // namespace lgtest
