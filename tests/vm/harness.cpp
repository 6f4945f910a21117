#include "harness.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/cgroup.h"
#include "base/clock.h"
#include "kernel/pinned_maps.h"
#include "base/proc.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"

namespace lgtest {
namespace {

std::string self_dir() {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return ".";
    buf[n] = '\0';
    return std::filesystem::path(buf).parent_path().string();
}

std::string read_fd(int fd) {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
}

int counter = 0;

}  // namespace

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

CmdResult run_cmd(const std::vector<std::string>& argv) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        std::vector<char*> a;
        for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
        a.push_back(nullptr);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    CmdResult r;
    // Read both pipes without deadlocking on a full one.
    std::thread t([&] { r.err = read_fd(err[0]); });
    r.out = read_fd(out[0]);
    t.join();
    ::close(out[0]);
    ::close(err[0]);
    int st = 0;
    ::waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return r;
}

std::string lg_binary() {
    // The package's test runs the suite against the installed binary.
    const char* bin = ::getenv("LIVEGUARD_BIN");
    return bin && *bin ? std::string(bin) : self_dir() + "/liveguard-bpf";
}

CmdResult lg(const std::vector<std::string>& args) {
    std::vector<std::string> argv{lg_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_cmd(argv);
}

std::string cgroup_root() { return liveguard::cgroup2_mount(); }

namespace {

// The programs that refuse changes to protected files.
const char* const kPathPrograms[] = {
    "lg_file_open",      "lg_file_permission", "lg_file_receive",   "lg_inode_create",
    "lg_inode_unlink",   "lg_inode_rmdir",     "lg_inode_link",     "lg_inode_symlink",
    "lg_inode_mkdir",    "lg_inode_mknod",     "lg_inode_rename",   "lg_inode_setattr",
    "lg_inode_setxattr", "lg_inode_removexattr", "lg_file_ioctl",     "lg_file_lock",
    "lg_mmap_file",      "lg_file_mprotect",
    // 6.2 and later only (ACLs reach inode_setxattr before that):
    "lg_inode_set_acl",  "lg_inode_remove_acl",
    // Where the kernel has it (6.8; 6.1 and 6.6 since 2024): a 32-bit ioctl.
    "lg_file_ioctl_compat",
};

}  // namespace

// Removes the link pins of `programs`, each with its twin's where the form
// attaches twins (fmod_ret: bpf/lib/twins.h), and waits until the
// programs are off their hooks: newer kernels take a program off a while
// after its pin goes.
void take_links_off(const std::vector<std::string>& programs) {
    std::vector<__u32> ids;
    for (const auto& p : programs) {
        for (const std::string& name : {p, p + "_twin"}) {
            std::string pin = "/sys/fs/bpf/liveguard/link_" + name;
            int fd = bpf_obj_get(pin.c_str());
            if (fd >= 0) {
                struct bpf_link_info info {};
                __u32 len = sizeof info;
                if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) ids.push_back(info.prog_id);
                ::close(fd);
            }
            ::unlink(pin.c_str());
        }
    }
    wait_until([&] {
        for (auto id : ids) {
            int p = bpf_prog_get_fd_by_id(id);
            if (p >= 0) {
                ::close(p);
                return false;
            }
        }
        return true;
    });
}

void take_path_hooks_off() { take_links_off(std::vector<std::string>(std::begin(kPathPrograms), std::end(kPathPrograms))); }

std::string test_root() {
    const char* v = ::getenv("LIVEGUARD_TEST_ROOT");
    return v && *v ? v : "/tmp";
}

bool sabotaged() {
    const char* v = ::getenv("LIVEGUARD_TEST_WITHOUT_GUARD");
    return v && *v && std::string(v) != "0";
}

void ensure_guard() {
    // The control run keeps the guard loaded without its kill link from one
    // test to the next. `load` would take that for an interrupted load and
    // attach every program again: on 6.12, most of half a minute per test.
    if (sabotaged() && ::access("/sys/fs/bpf/liveguard/link_lg_task_kill", F_OK) != 0 &&
        ::access("/sys/fs/bpf/liveguard/link_lg_bprm_check", F_OK) == 0)
        return;
    auto r = lg({"load"});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    if (sabotaged()) {
        // Dropping the link's only reference detaches the LSM program while
        // every map and CLI command keeps working.
        ASSERT_EQ(::access("/sys/fs/bpf/liveguard/link_lg_task_kill", F_OK), 0) << "load pinned no kill link";
        sabotage_if_control();
    }
}

Target::Target(TargetOptions opts) {
    int ready[2];
    if (::pipe(ready) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
        ::close(ready[0]);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (opts.own_process_group) ::setpgid(0, 0);
        if (opts.join_pgid) ::setpgid(0, *opts.join_pgid);
        if (opts.uid && ::setresuid(*opts.uid, *opts.uid, *opts.uid) != 0) ::_exit(99);
        ::prctl(PR_SET_NAME, opts.name.c_str());
        std::vector<pid_t> tids{static_cast<pid_t>(::gettid())};
        std::atomic<int> started{0};
        for (int i = 0; i < opts.threads; ++i) {
            std::thread([&] {
                pid_t tid = static_cast<pid_t>(::gettid());
                (void)!::write(ready[1], &tid, sizeof tid);
                started++;
                for (;;) ::pause();
            }).detach();
        }
        while (started.load() < opts.threads) std::this_thread::yield();
        pid_t self = static_cast<pid_t>(::gettid());
        (void)!::write(ready[1], &self, sizeof self);
        ::close(ready[1]);
        for (;;) ::pause();
    }
    ::close(ready[1]);
    if (opts.own_process_group) ::setpgid(pid_, pid_);
    // Thread ids come first, then the main thread's: all written = ready.
    for (int i = 0; i <= opts.threads; ++i) {
        pid_t tid = 0;
        if (::read(ready[0], &tid, sizeof tid) != sizeof tid) break;
        tids_.push_back(tid);
    }
    ::close(ready[0]);
}

Target::~Target() {
    if (!reaped_ && pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
}

bool Target::untouched() {
    if (reaped_) return false;
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG | WUNTRACED);
    if (r == pid_) {
        if (!WIFSTOPPED(st)) reaped_ = true;
        return false;
    }
    // A signal that got through is either still pending or already acted.
    std::error_code ec;
    for (const auto& t : std::filesystem::directory_iterator(
             "/proc/" + std::to_string(pid_) + "/task", ec)) {
        auto status = read_file(t.path().string() + "/status");
        if (!status) return false;
        std::istringstream in(*status);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("State:", 0) == 0) {
                char s = line.size() > 7 ? line[7] : '?';
                if (s == 'T' || s == 't' || s == 'Z' || s == 'X') return false;
            }
            if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
                if (line.find_first_not_of("0\t ", 7) != std::string::npos) return false;
            }
        }
    }
    return !ec;
}

bool Target::wait_killed() {
    if (reaped_) return true;
    for (int i = 0; i < 500; ++i) {
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) == pid_) {
            reaped_ = true;
            return WIFSIGNALED(st);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

Session::Session(bool tag) : tagged_(tag) {
    dir_ = cgroup_root() + "/lgtest-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    if (::mkdir(dir_.c_str(), 0755) != 0) throw std::runtime_error("mkdir " + dir_);
    id_ = liveguard::cgroup_id_of(dir_);
    if (tag) {
        auto r = lg({"tag", dir_});
        if (r.status != 0) throw std::runtime_error("tag failed: " + r.out + r.err);
    }
}

Session::~Session() {
    namespace fs = std::filesystem;
    // Deepest first: a cgroup can only go once its children have.
    std::vector<std::string> dirs;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_directory()) dirs.push_back(it->path().string());
    dirs.insert(dirs.begin(), dir_);
    if (auto f = std::ofstream(dir_ + "/cgroup.kill")) f << "1";
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
        for (int i = 0; i < 300 && ::rmdir(it->c_str()) != 0 && errno == EBUSY; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    // By id: the directory is gone, and a stale tag would pile up.
    try {
        auto maps = liveguard::PinnedMaps::open();
        liveguard::SessionRegistry(maps.sessions.get(), maps.settings.get()).untag_id(id_);
    } catch (const std::exception&) {
        // not loaded (any more): nothing is tagged
    }
}

std::uint64_t Session::id() const { return liveguard::cgroup_id_of(dir_); }

std::string Session::make_child(const std::string& name) {
    std::string d = dir_ + "/" + name;
    if (::mkdir(d.c_str(), 0755) != 0) throw std::runtime_error("mkdir " + d);
    return d;
}

int Session::as_member(const std::function<int()>& fn, const std::string& cgroup,
                       std::optional<uid_t> uid) {
    std::string procs = (cgroup.empty() ? dir_ : cgroup) + "/cgroup.procs";
    pid_t pid = ::fork();
    if (pid == 0) {
        int fd = ::open(procs.c_str(), O_WRONLY);
        if (fd < 0 || ::write(fd, "0", 1) != 1) ::_exit(250);
        ::close(fd);
        if (uid && ::setresuid(*uid, *uid, *uid) != 0) ::_exit(251);
        ::_exit(fn() & 0xff);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!WIFEXITED(st)) return 252;
    return WEXITSTATUS(st);
}

void protect(pid_t pid) {
    auto r = lg({"protect", "--pid", std::to_string(pid)});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
}

static int ret(long rc) { return rc == 0 ? 0 : errno; }

int sys_kill(pid_t pid, int sig) { return ret(::kill(pid, sig)); }
int sys_tkill(pid_t tid, int sig) { return ret(::syscall(SYS_tkill, tid, sig)); }
int sys_tgkill(pid_t tgid, pid_t tid, int sig) { return ret(::syscall(SYS_tgkill, tgid, tid, sig)); }

static siginfo_t queue_info(int sig) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    info.si_signo = sig;
    info.si_code = SI_QUEUE;  // what sigqueue(3) sends; allowed to other processes
    info.si_pid = ::getpid();
    info.si_uid = ::getuid();
    return info;
}

int sys_rt_sigqueueinfo(pid_t pid, int sig) {
    siginfo_t info = queue_info(sig);
    return ret(::syscall(SYS_rt_sigqueueinfo, pid, sig, &info));
}

int sys_rt_tgsigqueueinfo(pid_t tgid, pid_t tid, int sig) {
    siginfo_t info = queue_info(sig);
    return ret(::syscall(SYS_rt_tgsigqueueinfo, tgid, tid, sig, &info));
}

int sys_pidfd_send_signal(pid_t pid, int sig) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) return errno;
    int r = ret(::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0));
    ::close(fd);
    return r;
}

namespace {

std::vector<std::string> event_lines(const std::vector<std::string>& args) {
    auto r = lg(args);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) lines.push_back(line);
    return lines;
}

}  // namespace

std::vector<std::string> drain_events() {
    // When a policy watcher runs (an installed policy starts one), it takes
    // the events off the ring buffer and journals them a poll later: what
    // is new is what the journal gained since the previous drain, once it
    // stops growing.
    static std::string since;
    std::string now = liveguard::format_utc(liveguard::realtime_now_ns());
    if (lg({"status"}).out.find("policy watcher: running") == std::string::npos || since.empty()) {
        since = now;
        return event_lines({"events", "--json", "--no-follow", "-n", "0"});
    }
    std::vector<std::string> lines = event_lines({"events", "--json", "--no-follow", "--since", since});
    for (int i = 0; i < 20; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        auto again = event_lines({"events", "--json", "--no-follow", "--since", since});
        bool settled = again.size() == lines.size();
        lines = std::move(again);
        if (settled) break;
    }
    since = now;
    return lines;
}

int attached_links_of(const std::string& prog_name) {
    int count = 0;
    __u32 id = 0;
    while (bpf_link_get_next_id(id, &id) == 0) {
        int fd = bpf_link_get_fd_by_id(id);
        if (fd < 0) continue;
        struct bpf_link_info link {};
        __u32 len = sizeof link;
        if (bpf_obj_get_info_by_fd(fd, &link, &len) == 0) {
            int pfd = bpf_prog_get_fd_by_id(link.prog_id);
            struct bpf_prog_info prog {};
            __u32 plen = sizeof prog;
            if (pfd >= 0 && bpf_obj_get_info_by_fd(pfd, &prog, &plen) == 0 &&
                prog_name.compare(0, sizeof prog.name - 1, prog.name) == 0)
                ++count;
            if (pfd >= 0) ::close(pfd);
        }
        ::close(fd);
    }
    return count;
}

}  // namespace lgtest

namespace lgtest {

void sabotage_if_control() {
    if (!sabotaged()) return;
    take_links_off({"lg_task_kill"});
}

bool wait_until(const std::function<bool()>& pred, int ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return pred();
}

std::uint64_t start_ticks(pid_t pid) {
    auto st = liveguard::read_proc_stat(pid);
    return st ? st->start_ticks : 0;
}

void write_hermes_pid_file(const std::string& path, pid_t pid, bool bare,
                           std::optional<std::uint64_t> start_time) {
    std::string text =
        bare ? std::to_string(pid) + "\n"
             : "{\"pid\": " + std::to_string(pid) +
                   ", \"kind\": \"hermes-gateway\", \"argv\": [\"hermes\", \"gateway\", \"run\"], "
                   "\"start_time\": " +
                   std::to_string(start_time.value_or(start_ticks(pid))) + "}";
    ::unlink(path.c_str());
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) throw std::runtime_error("create " + path);
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
}

bool listed_protected(pid_t pid) {
    // Straight from the pinned map: the control run removes the link, and
    // status then (rightly) reports the guard as not loaded.
    auto maps = liveguard::PinnedMaps::open();
    return liveguard::ProtectedSet(maps.protected_tasks.get()).lookup(pid).has_value();
}

bool cgroup_protected(const std::string& dir) {
    auto maps = liveguard::PinnedMaps::open();
    std::uint64_t id = liveguard::cgroup_id_of(dir);
    for (const auto& c :
         liveguard::ProtectedCgroups(maps).list())
        if (c.id == id) return true;
    return false;
}

void write_text(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::trunc);
    f << text;
}

}  // namespace lgtest
