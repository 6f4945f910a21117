// What the guard costs on the hot paths every process on the machine takes
// (kill, execve, fork, writes, opens, the directory-entry operations, unix
// connects, setpriority), each by a process that is no session member and
// by one that is, acting on nothing protected; measured as ratios in one
// run: the guard is loaded
// and unloaded between phases, and each cost is the median over rounds of
// (with guard / without guard), so drift of a shared, noisy machine cancels
// instead of landing on one side.
//
// A third phase runs with an empty program on every hook the guard uses
// (floor.bpf.c): the price of the BPF LSM machinery itself. The guard's
// ratio over that floor is what liveguard's own checks add; the floor's
// ratio over no programs is what any BPF LSM on these hooks costs. The
// targets are on the guard's ratio over the floor: 1.02x for a non-member,
// 1.10x for a member. The
// three phases take each of their six orders in turn, so none is
// systematically first.
//
// While the guard is loaded it holds what a workstation running the
// gateway next to a test suite has: a tagged session, a process protected by
// its PID file, an s6-supervise-style parent whose children inherit
// protection, and a protected unit cgroup. With less, the hooks would
// return at earlier checks and flatter the numbers. The unprotected target
// lives five cgroups deep, where a desktop session's processes do, so the
// kill rows pay the protected-cgroup walk a real target pays.
//
// Then the ring buffer: a session member floods a protected process with
// refused signals while `liveguard-bpf events` consumes; delivered events
// plus the kernel's lost count must equal the attempts.
//
// With --instructions the guest runs under QEMU -icount shift=0, where its
// clock advances one nanosecond per instruction executed: the costs are
// then instruction counts, which the host's load cannot reach and which
// exclude the emulator's own work (translating the code an exec maps, say).
//
// With --profile, one more pass after the rounds measures each row under
// the floor and under the guard with the kernel's BPF run-time statistics
// on, and prints, per program that ran, its calls per operation and the
// time of one call: under -icount, the instructions one call of that
// program executes (its helpers included, the trampoline not). Statistics
// cost instructions of their own, the same for a floor program and a
// guard program, so only the rounds' table is the cost; the profile says
// where the guard's part of it goes.
//
// usage: bench_syscall_cost LIVEGUARD_BPF EXEC_CHAIN [--rounds N] [--scale F]
//                           [--flood N] [--no-flood] [--rows KEY,...]
//                           [--instructions] [--profile] [--json]
// Runs as root on a kernel that runs BPF LSM programs (in the VM).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "floor.skel.h"

#include "base/cgroup.h"
#include "kernel/counters.h"
#include "base/error.h"
#include "kernel/guarded_inodes.h"
#include "kernel/loader.h"
#include "kernel/map_walk.h"
#include "kernel/pinned_maps.h"
#include "base/proc.h"
#include "kernel/fmod_ret.h"
#include "kernel/hook_args.h"
#include "kernel/kernel_btf.h"
#include "kernel/programs.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"
#include "events/journal_record.h"

namespace {

using liveguard::Guard;
using liveguard::PinnedMaps;

double now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

pid_t spawn_sleeper() {
    pid_t p = ::fork();
    if (p < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (p == 0) {
        // Survives the flood's signals whether or not they are refused.
        ::signal(SIGWINCH, SIG_IGN);
        for (;;) ::pause();
    }
    return p;
}

void reap(pid_t p) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
}

void move_to(const std::string& cgroup, pid_t pid) {
    std::ofstream procs(cgroup + "/cgroup.procs");
    procs << pid;
    procs.flush();
    if (!procs) throw std::runtime_error("cannot move " + std::to_string(pid) + " into " + cgroup);
}

struct Setup {
    std::string lg;          // the liveguard-bpf binary (the events consumer)
    std::string exec_chain;  // the static binary the exec rows run
    std::string exec_dir;    // the tmpfs directory it was copied to
    std::string mount;       // cgroup2
    std::string root;        // the benchmark's cgroups, below the mount
    std::string session;     // the tagged session cgroup
    std::string unit;        // the protected unit cgroup
    std::vector<std::string> cgroups;  // created, parents first
    pid_t target = 0;        // unprotected: the kill rows' target
    pid_t gateway = 0;       // protected by its mark, in the unit cgroup
    pid_t supervisor = 0;    // its children inherit protection
    int listener = -1;       // the unix connect rows' listening socket
    std::string socket_path;
};

void make_cgroups(Setup& s) {
    s.root = s.mount + "/bench-cost";
    s.session = s.root + "/session";
    s.unit = s.root + "/system.slice/gateway.service";
    std::string scope = s.root + "/user.slice/user-1000.slice/app.slice/target.scope";
    for (const std::string& d : {s.root, s.session, s.root + "/system.slice", s.unit, s.root + "/user.slice",
                                 s.root + "/user.slice/user-1000.slice",
                                 s.root + "/user.slice/user-1000.slice/app.slice", scope}) {
        if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
            throw std::runtime_error("mkdir " + d + ": " + std::strerror(errno));
        s.cgroups.push_back(d);
    }
    s.target = spawn_sleeper();
    move_to(scope, s.target);
    s.gateway = spawn_sleeper();
    move_to(s.unit, s.gateway);
    s.supervisor = spawn_sleeper();
}

// The exec rows run a copy in tmpfs: the original may sit on a network or
// 9p filesystem, whose lookups would wait on I/O and time the host.
std::string copy_to_tmpfs(const std::string& path, std::string& dir_out) {
    char dir[] = "/tmp/bench-exec.XXXXXX";
    if (!::mkdtemp(dir)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir_out = dir;
    std::string copy = dir_out + "/exec_chain";
    {
        std::ifstream in(path, std::ios::binary);
        std::ofstream out(copy, std::ios::binary);
        out << in.rdbuf();
        if (!in || !out) throw std::runtime_error("cannot copy " + path + " to " + copy);
    }
    if (::chmod(copy.c_str(), 0755) != 0) throw std::runtime_error("chmod " + copy + ": " + std::strerror(errno));
    return copy;
}

// What the file and socket rows act on, beside the exec copy in tmpfs.
void make_files(Setup& s) {
    for (const char* f : {"/opened", "/from"}) {
        int fd = ::open((s.exec_dir + f).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) throw std::runtime_error("cannot create " + s.exec_dir + f + ": " + std::strerror(errno));
        ::close(fd);
    }
    s.socket_path = s.exec_dir + "/sock";
    s.listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", s.socket_path.c_str());
    if (s.listener < 0 || ::bind(s.listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(s.listener, 64) != 0)
        throw std::runtime_error("cannot listen on " + s.socket_path + ": " + std::strerror(errno));
}

// Undoes make_cgroups and the tmpfs copy; safe to call twice.
void tear_down(Setup& s) {
    for (pid_t p : {s.target, s.gateway, s.supervisor})
        if (p > 0) reap(p);
    for (auto it = s.cgroups.rbegin(); it != s.cgroups.rend(); ++it) ::rmdir(it->c_str());
    s.cgroups.clear();
    s.target = s.gateway = s.supervisor = 0;
    if (s.listener >= 0) ::close(s.listener);
    s.listener = -1;
    if (!s.exec_dir.empty()) {
        for (const char* f : {"/exec_chain", "/written", "/created", "/opened", "/from", "/to", "/sock"})
            ::unlink((s.exec_dir + f).c_str());
        ::rmdir((s.exec_dir + "/made").c_str());
        ::rmdir((s.exec_dir + "/protected").c_str());
        ::rmdir(s.exec_dir.c_str());
        s.exec_dir.clear();
    }
}

// One batch in a fresh child: it joins the session first if asked, then
// runs `ops` operations and reports nanoseconds per operation. A fresh child
// per batch keeps every batch's starting state the same.
double batch(const Setup& s, bool member, int ops, const std::function<bool(int)>& op) {
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_t w = ::fork();
    if (w == 0) {
        ::close(out[0]);
        double per = -1;
        if (member) {
            std::ofstream procs(s.session + "/cgroup.procs");
            procs << "0";
            procs.flush();
            if (!procs) ::_exit(3);
        }
        if (op(1)) {  // warm: page tables, caches, the first exec's lookups
            double t0 = now_ns();
            bool ok = op(ops);
            double t1 = now_ns();
            if (ok) per = (t1 - t0) / ops;
        }
        (void)!::write(out[1], &per, sizeof per);
        ::_exit(0);
    }
    ::close(out[1]);
    double per = -1;
    ssize_t n = ::read(out[0], &per, sizeof per);
    ::close(out[0]);
    int st = 0;
    ::waitpid(w, &st, 0);
    if (n != sizeof per || per < 0)
        throw std::runtime_error("a measurement failed (worker exit " +
                                 std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ")");
    return per;
}

// The three phases of a round.
enum Phase { kWithout = 0, kFloor = 1, kWith = 2 };
constexpr int kPhases = 3;
constexpr Phase kOrders[6][kPhases] = {{kWithout, kFloor, kWith}, {kWith, kFloor, kWithout},
                                       {kFloor, kWith, kWithout}, {kWithout, kWith, kFloor},
                                       {kWith, kWithout, kFloor}, {kFloor, kWithout, kWith}};

struct Row {
    std::string key;
    std::string label;
    double target;
    bool member;
    int ops;
    std::function<bool(int)> op;
    std::vector<double> samples[kPhases];
    std::vector<double> ratios;        // with / without, per round
    std::vector<double> floor_ratios;  // floor / without, per round
    std::vector<double> over_floor;    // with / floor, per round
};

std::vector<Row> make_rows(const Setup& s, double scale) {
    auto n = [&](int base) { return std::max(1, static_cast<int>(base * scale)); };
    pid_t target = s.target;
    // A signal the target ignores: the whole permission path runs, the
    // task_kill hook included, and the kernel then drops the signal before
    // queueing it. The cheapest real kill, so the hook's share is the
    // largest. (Signal 0 would not do: the hook returns at once for it.)
    auto kills = [target](int k) {
        for (int i = 0; i < k; ++i)
            if (::kill(target, SIGWINCH) != 0) return false;
        return true;
    };
    std::string chain = s.exec_chain;
    auto execs = [chain](int k) {
        pid_t c = ::fork();
        if (c == 0) {
            std::string count = std::to_string(k - 1);
            char* argv[] = {const_cast<char*>(chain.c_str()), count.data(), nullptr};
            ::execv(chain.c_str(), argv);
            ::_exit(127);
        }
        int st = 0;
        ::waitpid(c, &st, 0);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
    };
    auto forks = [](int k) {
        for (int i = 0; i < k; ++i) {
            pid_t c = ::fork();
            if (c < 0) return false;
            if (c == 0) ::_exit(0);
            ::waitpid(c, nullptr, 0);
        }
        return true;
    };
    // One byte to /dev/null: the write path's permission hook runs for
    // every write on the machine, and this is about the cheapest write.
    auto writes = [](int k) {
        int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (fd < 0) return false;
        char c = 0;
        bool ok = true;
        for (int i = 0; i < k && ok; ++i) ok = ::write(fd, &c, 1) == 1;
        ::close(fd);
        return ok;
    };
    // Files outside the protected tree guard_on sets up: every member's
    // change walks up to the filesystem's root and finds nothing; a
    // non-member's must not walk at all.
    std::string file = s.exec_dir + "/written", created = s.exec_dir + "/created";
    auto open_writes = [file](int k) {
        for (int i = 0; i < k; ++i) {
            int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0) return false;
            char c = 0;
            bool ok = ::pwrite(fd, &c, 1, 0) == 1;
            ::close(fd);
            if (!ok) return false;
        }
        return true;
    };
    auto creates = [created](int k) {
        for (int i = 0; i < k; ++i) {
            int fd = ::open(created.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0) return false;
            ::close(fd);
            if (::unlink(created.c_str()) != 0) return false;
        }
        return true;
    };
    std::string opened = s.exec_dir + "/opened", dir = s.exec_dir + "/made", from = s.exec_dir + "/from",
                to = s.exec_dir + "/to";
    auto open_reads = [opened](int k) {
        for (int i = 0; i < k; ++i) {
            int fd = ::open(opened.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) return false;
            ::close(fd);
        }
        return true;
    };
    auto open_for_write = [opened](int k) {
        for (int i = 0; i < k; ++i) {
            int fd = ::open(opened.c_str(), O_WRONLY | O_CLOEXEC);
            if (fd < 0) return false;
            ::close(fd);
        }
        return true;
    };
    auto mkdirs = [dir](int k) {
        for (int i = 0; i < k; ++i)
            if (::mkdir(dir.c_str(), 0755) != 0 || ::rmdir(dir.c_str()) != 0) return false;
        return true;
    };
    auto renames = [from, to](int k) {
        for (int i = 0; i < k; ++i)
            if (::rename(from.c_str(), to.c_str()) != 0 || ::rename(to.c_str(), from.c_str()) != 0) return false;
        return true;
    };
    // A listening socket made once; each op connects, is accepted, and
    // closes both ends. The listener is inherited by each batch's child.
    int listener = s.listener;
    std::string sock = s.socket_path;
    auto connects = [listener, sock](int k) {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", sock.c_str());
        for (int i = 0; i < k; ++i) {
            int c = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (c < 0) return false;
            bool ok = ::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
            int d = ok ? ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC) : -1;
            ::close(c);
            if (d < 0) return false;
            ::close(d);
        }
        return true;
    };
    // The caller's own priority, set to what it is: task_setnice runs, and
    // nothing changes.
    auto priorities = [](int k) {
        for (int i = 0; i < k; ++i)
            if (::setpriority(PRIO_PROCESS, 0, 0) != 0) return false;
        return true;
    };
    std::vector<Row> rows;
    // Non-members pay the trampoline (the floor) and a few instructions:
    // <= 1.02x over the floor. A member acting on something unprotected
    // pays its checks too: <= 1.10x.
    auto both = [&rows](const std::string& key, const std::string& what, int ops,
                        const std::function<bool(int)>& op) {
        rows.push_back({key + "_nonmember", what + ", non-member", 1.02, false, ops, op});
        rows.push_back({key + "_member", what + ", member", 1.10, true, ops, op});
    };
    both("kill", "kill() -> unprotected", n(20000), kills);
    both("exec", "execve static binary", n(100), execs);
    both("fork", "fork+exit", n(200), forks);
    both("write", "write() 1 byte to /dev/null", n(20000), writes);
    both("openr", "open+close read-only", n(5000), open_reads);
    both("openwo", "open+close for writing", n(5000), open_for_write);
    both("openw", "open+write+close", n(5000), open_writes);
    both("create", "creat+unlink", n(3000), creates);
    both("mkdir", "mkdir+rmdir", n(3000), mkdirs);
    both("rename", "rename x2", n(3000), renames);
    both("unix", "unix connect+accept", n(3000), connects);
    both("setprio", "setpriority", n(20000), priorities);
    return rows;
}

// The rows named in a comma-separated list, in table order; all for "".
std::vector<Row> select_rows(std::vector<Row> rows, const std::string& keys) {
    if (keys.empty()) return rows;
    std::vector<std::string> want;
    for (std::size_t at = 0; at <= keys.size();) {
        std::size_t comma = keys.find(',', at);
        if (comma == std::string::npos) comma = keys.size();
        want.push_back(keys.substr(at, comma - at));
        at = comma + 1;
    }
    std::string known;
    for (const Row& r : rows) known += std::string(known.empty() ? "" : ", ") + r.key;
    for (const std::string& k : want)
        if (std::none_of(rows.begin(), rows.end(), [&](const Row& r) { return k == r.key; }))
            throw std::runtime_error("--rows: no row named '" + k + "' (rows: " + known + ")");
    std::erase_if(rows, [&](const Row& r) { return std::find(want.begin(), want.end(), r.key) == want.end(); });
    return rows;
}

// The floor is only a floor while it hooks exactly where the guard does.
void require_floor_matches_guard(const floor_bpf* floor) {
    std::set<std::string> guard, floors;
    for (const auto& s : liveguard::attach_points_of(liveguard::Mode::Enforce)) guard.insert(s);
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, floor->obj) floors.insert(bpf_program__section_name(prog));
    std::string diff;
    for (const auto& s : guard)
        if (!floors.count(s)) diff += " guard only: " + s + ";";
    for (const auto& s : floors)
        if (!guard.count(s)) diff += " floor only: " + s + ";";
    if (!diff.empty())
        throw std::runtime_error("tests/bench/floor.bpf.c and the guard's enforcing programs hook "
                                 "different places:" + diff + " add or remove floor programs to match");
}

// The floor phase's programs, attached for as long as this lives.
class FloorPrograms {
public:
    FloorPrograms() : skel_(floor_bpf__open()) {
        if (!skel_) throw std::runtime_error(std::string("cannot open the floor programs: ") + std::strerror(errno));
        require_floor_matches_guard(skel_);
        // Attached as the guard is: as fmod_ret programs on the security_*
        // functions where the kernel does not run the BPF LSM.
        if (liveguard::choose_attach().attach == liveguard::Attach::FmodRet)
            liveguard::apply_fmod_ret(skel_->obj, liveguard::plan_fmod_ret(skel_->obj));
        // Where the guard leaves a program out, so does the floor.
        auto present = liveguard::kernel_functions_among(liveguard::newer_hook_functions(skel_->obj, liveguard::choose_attach().attach));
        struct bpf_program* prog;
        bpf_object__for_each_program(prog, skel_->obj) {
            std::string_view hook = liveguard::lsm_hook_of(prog);
            if (liveguard::hook_newer_than_its_cover(hook) &&
                !present.count(liveguard::hook_function(hook, liveguard::choose_attach().attach)))
                bpf_program__set_autoload(prog, false);
        }
        if (int err = floor_bpf__load(skel_); err != 0) {
            floor_bpf__destroy(skel_);
            throw std::runtime_error(std::string("cannot load the floor programs: ") + std::strerror(-err));
        }
        if (int err = floor_bpf__attach(skel_); err != 0) {
            floor_bpf__destroy(skel_);
            throw std::runtime_error(std::string("cannot attach the floor programs: ") + std::strerror(-err));
        }
    }
    ~FloorPrograms() { floor_bpf__destroy(skel_); }
    FloorPrograms(const FloorPrograms&) = delete;
    FloorPrograms& operator=(const FloorPrograms&) = delete;

private:
    floor_bpf* skel_;
};

void guard_on(const Setup& s) {
    Guard::load();
    PinnedMaps maps = PinnedMaps::open();
    liveguard::SessionRegistry(maps.sessions.get(), maps.settings.get(), maps.members.get()).tag(s.mount, s.session);
    liveguard::ProtectedSet protect(maps);
    protect.add(s.gateway, 0);
    protect.add(s.supervisor, 0, nullptr, LG_PROTECT_INHERIT);
    liveguard::ProtectedCgroups(maps)
        .add(liveguard::cgroup_id_of(s.unit), 0);
    // One protected tree, as a policy's [[protect]] path gives it.
    auto tree = liveguard::inode_key(s.exec_dir + "/protected");
    if (!tree) throw std::runtime_error("cannot stat " + s.exec_dir + "/protected");
    liveguard::GuardedInodes(maps.guarded_inodes.get()).add(*tree, LG_INODE_PROTECTED_TREE, 1);
    liveguard::write_setting(maps.settings.get(), LG_SETTING_PROTECTED_PATHS, 1);
}

void guard_off() {
    Guard::unload();
    if (Guard::is_loaded()) throw std::runtime_error("the guard is still loaded after unload");
}

// Run counts and run time of every BPF program on the machine, by id.
struct ProgramStats {
    std::string name;
    unsigned long long calls = 0, ns = 0;
};

std::map<unsigned, ProgramStats> program_stats() {
    std::map<unsigned, ProgramStats> out;
    unsigned id = 0;
    while (::bpf_prog_get_next_id(id, &id) == 0) {
        int fd = ::bpf_prog_get_fd_by_id(id);
        if (fd < 0) continue;  // unloaded meanwhile
        bpf_prog_info info{};
        unsigned len = sizeof info;
        if (::bpf_obj_get_info_by_fd(fd, &info, &len) == 0) out[id] = {info.name, info.run_cnt, info.run_time_ns};
        ::close(fd);
    }
    return out;
}

// The programs one batch of `row` ran, each with its calls per operation
// and the time (instructions, under -icount) of one call.
struct ProfileLine {
    std::string name;
    double calls_per_op = 0, per_call = 0;
};

std::vector<ProfileLine> profile_batch(const Setup& s, const Row& row) {
    auto before = program_stats();
    batch(s, row.member, row.ops, row.op);
    auto after = program_stats();
    std::vector<ProfileLine> lines;
    for (const auto& [id, a] : after) {
        auto b = before.find(id);
        if (b == before.end() || a.calls <= b->second.calls) continue;
        double calls = static_cast<double>(a.calls - b->second.calls);
        // Programs that ran less than once in ten operations: others' work
        // meanwhile (the statistics reads themselves pass the bpf() hook).
        if (calls < 0.1 * row.ops) continue;
        // The warming operation of the batch ran too.
        lines.push_back({a.name, calls / (row.ops + 1), static_cast<double>(a.ns - b->second.ns) / calls});
    }
    std::sort(lines.begin(), lines.end(),
              [](const ProfileLine& x, const ProfileLine& y) { return x.calls_per_op * x.per_call > y.calls_per_op * y.per_call; });
    return lines;
}

struct Flood {
    // delivered: event lines; coalesced: refusals counted in the repeats
    // of one (an identical refusal within its second).
    long attempts = 0, refused = 0, delivered = 0, coalesced = 0, lost = 0;
    double seconds = 0;           // the attempts alone
    double consumer_seconds = 0;  // from the first attempt to the last line consumed
};

// The session's event lines and the refusals their repeats count.
std::pair<long, long> count_session_lines(const std::string& path, std::uint64_t session_id) {
    std::ifstream in(path);
    std::string line;
    long events = 0, repeats = 0;
    while (std::getline(in, line)) {
        auto r = liveguard::parse_journal_record(line);
        if (!r) continue;
        if (const auto* e = std::get_if<liveguard::JournalEvent>(&r->body))
            events += e->session_cgroup_id == session_id;
        else if (const auto* x = std::get_if<liveguard::JournalRepeats>(&r->body))
            repeats += x->of.session_cgroup_id == session_id ? static_cast<long>(x->count) : 0;
    }
    return {events, repeats};
}

// With the guard loaded and the session tagged.
Flood flood(const Setup& s, long attempts) {
    pid_t victim = spawn_sleeper();
    PinnedMaps maps = PinnedMaps::open();
    liveguard::ProtectedSet(maps).add(victim, 0);
    // A fresh session cgroup, so that the journal lines it gets are this
    // flood's alone.
    std::string cg = s.mount + "/bench-flood-" + std::to_string(::getpid());
    ::mkdir(cg.c_str(), 0755);
    std::uint64_t sid = 0;
    liveguard::SessionRegistry(maps.sessions.get(), maps.settings.get(), maps.members.get()).tag(s.mount, cg, &sid);

    // What the consumer printed is what it delivered.
    char out_path[] = "/tmp/bench-flood-events.XXXXXX";
    int out_fd = ::mkstemp(out_path);
    if (out_fd < 0) throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
    pid_t consumer = ::fork();
    if (consumer == 0) {
        ::dup2(out_fd, 1);
        ::execl(s.lg.c_str(), s.lg.c_str(), "events", "--json", nullptr);
        ::_exit(127);
    }
    // Ready once it holds the ring buffer's epoll fd.
    for (int i = 0; i < 300; ++i) {
        bool ready = false;
        std::string dir = "/proc/" + std::to_string(consumer) + "/fd/";
        for (int fd = 0; fd < 64 && !ready; ++fd) {
            char buf[64];
            ssize_t k = ::readlink((dir + std::to_string(fd)).c_str(), buf, sizeof buf - 1);
            if (k > 0) ready = std::string(buf, static_cast<std::size_t>(k)).find("eventpoll") != std::string::npos;
        }
        if (ready) break;
        ::usleep(100000);
    }

    auto before = liveguard::read_counters(maps.counters.get());
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_t w = ::fork();
    if (w == 0) {
        std::ofstream(cg + "/cgroup.procs") << "0";
        long refused = 0;
        double t0 = now_ns();
        for (long i = 0; i < attempts; ++i)
            if (::kill(victim, SIGWINCH) != 0 && errno == EPERM) ++refused;
        double t = (now_ns() - t0) / 1e9;
        (void)!::write(out[1], &refused, sizeof refused);
        (void)!::write(out[1], &t, sizeof t);
        (void)!::write(out[1], &t0, sizeof t0);
        ::_exit(0);
    }
    ::close(out[1]);
    Flood f;
    f.attempts = attempts;
    double t0 = 0;
    (void)!::read(out[0], &f.refused, sizeof f.refused);
    (void)!::read(out[0], &f.seconds, sizeof f.seconds);
    (void)!::read(out[0], &t0, sizeof t0);
    ::close(out[0]);
    ::waitpid(w, nullptr, 0);
    auto after = liveguard::read_counters(maps.counters.get());
    f.lost = static_cast<long>(after[LG_COUNTER_EVENTS_LOST] - before[LG_COUNTER_EVENTS_LOST]);

    // Until the consumer has printed everything delivered, or has printed
    // nothing new for 5 s.
    double last_change = now_ns();
    while (now_ns() - last_change < 5e9) {
        auto [events, repeats] = count_session_lines(out_path, sid);
        if (events != f.delivered || repeats != f.coalesced) {
            f.delivered = events;
            f.coalesced = repeats;
            last_change = now_ns();
            f.consumer_seconds = (last_change - t0) / 1e9;
        }
        if (f.delivered + f.coalesced + f.lost >= attempts) break;
        ::usleep(20000);
    }
    ::kill(consumer, SIGINT);
    ::waitpid(consumer, nullptr, 0);
    ::close(out_fd);
    ::unlink(out_path);
    liveguard::SessionRegistry(maps.sessions.get(), maps.settings.get()).untag(cg);
    ::rmdir(cg.c_str());
    reap(victim);
    return f;
}

std::string kernel_release() {
    utsname u{};
    ::uname(&u);
    return u.release;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: %s LIVEGUARD_BPF EXEC_CHAIN [--rounds N] [--scale F] [--flood N] "
                     "[--no-flood] [--rows KEY,...] [--instructions] [--profile] [--json]\n",
                     argv[0]);
        return 2;
    }
    Setup s;
    s.lg = argv[1];
    s.exec_chain = argv[2];
    int rounds = 15;
    double scale = 1.0;
    long flood_attempts = 100000;
    bool json = false;
    bool instructions = false;
    bool flood_on = true;
    bool profile = false;
    std::string only;
    for (int i = 3; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json") json = true;
        else if (a == "--instructions") instructions = true;
        else if (a == "--no-flood") flood_on = false;
        else if (a == "--profile") profile = true;
        else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (a == "--scale" && i + 1 < argc) scale = std::atof(argv[++i]);
        else if (a == "--flood" && i + 1 < argc) flood_attempts = std::atol(argv[++i]);
        else if (a == "--rows" && i + 1 < argc) only = argv[++i];
        else {
            std::fprintf(stderr, "bench_syscall_cost: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    if (rounds < 1 || scale <= 0 || flood_attempts < 1) {
        std::fprintf(stderr, "bench_syscall_cost: --rounds, --scale and --flood must be positive\n");
        return 2;
    }
    try {
        if (Guard::is_loaded())
            throw std::runtime_error("the guard is loaded: the benchmark loads and unloads it "
                                     "itself (liveguard-bpf unload first)");
        s.mount = liveguard::cgroup2_mount();
        s.exec_chain = copy_to_tmpfs(s.exec_chain, s.exec_dir);
        if (::mkdir((s.exec_dir + "/protected").c_str(), 0755) != 0)
            throw std::runtime_error("mkdir " + s.exec_dir + "/protected: " + std::strerror(errno));
        make_cgroups(s);
        make_files(s);
        std::vector<Row> rows = select_rows(make_rows(s, scale), only);

        for (int r = 0; r < rounds; ++r) {
            for (Phase phase : kOrders[r % 6]) {
                std::optional<FloorPrograms> floor;
                if (phase == kWith) guard_on(s);
                if (phase == kFloor) floor.emplace();
                for (auto& row : rows) row.samples[phase].push_back(batch(s, row.member, row.ops, row.op));
                if (phase == kWith) guard_off();
            }
            for (auto& row : rows) {
                double without = row.samples[kWithout].back(), floor = row.samples[kFloor].back(),
                       with = row.samples[kWith].back();
                row.ratios.push_back(with / without);
                row.floor_ratios.push_back(floor / without);
                row.over_floor.push_back(with / floor);
            }
            if (!json) std::fprintf(stderr, "\rround %d of %d", r + 1, rounds);
        }
        if (!json) std::fprintf(stderr, "\n");

        // Per row, the floor's programs and the guard's, statistics on.
        std::vector<std::vector<ProfileLine>> profiles[2];
        if (profile) {
            int stats = ::bpf_enable_stats(BPF_STATS_RUN_TIME);
            if (stats < 0) throw std::runtime_error(std::string("cannot enable BPF run-time statistics: ") + std::strerror(errno));
            for (Phase phase : {kFloor, kWith}) {
                std::optional<FloorPrograms> floor;
                if (phase == kWith) guard_on(s);
                if (phase == kFloor) floor.emplace();
                for (auto& row : rows) profiles[phase == kWith].push_back(profile_batch(s, row));
                if (phase == kWith) guard_off();
            }
            ::close(stats);
        }

        Flood f;
        if (flood_on) {
            guard_on(s);
            f = flood(s, flood_attempts);
            guard_off();
        }
        tear_down(s);

        // Refusals the consumer accounted for (an event line each, or a
        // repeat counted in one), per second.
        double rate = f.consumer_seconds > 0 ? (f.delivered + f.coalesced) / f.consumer_seconds : 0;
        if (json) {
            std::printf("{\"kernel\":\"%s\",\"rounds\":%d,\"unit\":\"%s\",\"costs\":[",
                        kernel_release().c_str(), rounds, instructions ? "instructions" : "ns");
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const Row& r = rows[i];
                double over = median(r.over_floor);
                std::printf("%s{\"key\":\"%s\",\"what\":\"%s\",\"member\":%s,\"ops_per_batch\":%d,"
                            "\"without\":%.1f,\"floor\":%.1f,\"with\":%.1f,\"guard_over_floor\":%.4f,"
                            "\"target_over_floor\":%.2f,\"met\":%s,\"guard_over_without\":%.4f,"
                            "\"floor_over_without\":%.4f}",
                            i ? "," : "", r.key.c_str(), r.label.c_str(), r.member ? "true" : "false", r.ops,
                            median(r.samples[kWithout]), median(r.samples[kFloor]), median(r.samples[kWith]),
                            over, r.target, over <= r.target ? "true" : "false", median(r.ratios),
                            median(r.floor_ratios));
            }
            std::printf("]");
            if (profile) {
                std::printf(",\"profile\":[");
                for (std::size_t i = 0; i < rows.size(); ++i) {
                    std::printf("%s{\"key\":\"%s\"", i ? "," : "", rows[i].key.c_str());
                    for (int g = 0; g < 2; ++g) {
                        std::printf(",\"%s\":[", g ? "guard" : "floor");
                        const auto& lines = profiles[g][i];
                        for (std::size_t j = 0; j < lines.size(); ++j)
                            std::printf("%s{\"program\":\"%s\",\"calls_per_op\":%.3f,\"per_call\":%.1f}",
                                        j ? "," : "", lines[j].name.c_str(), lines[j].calls_per_op,
                                        lines[j].per_call);
                        std::printf("]");
                    }
                    std::printf("}");
                }
                std::printf("]");
            }
            if (flood_on)
                std::printf(",\"events\":{\"attempts\":%ld,\"refused\":%ld,\"delivered\":%ld,"
                            "\"coalesced\":%ld,\"lost\":%ld,\"attempt_seconds\":%.3f,"
                            "\"consumer_seconds\":%.3f,\"accounted_per_second\":%.0f}",
                            f.attempts, f.refused, f.delivered, f.coalesced, f.lost, f.seconds,
                            f.consumer_seconds, rate);
            std::printf("}\n");
        } else {
            // Instruction counts print as counts; times in microseconds.
            auto cost = [&](double v) {
                char buf[32];
                if (instructions) std::snprintf(buf, sizeof buf, "%.0f insns", v);
                else std::snprintf(buf, sizeof buf, "%.2f us", v / 1000);
                return std::string(buf);
            };
            // The target is on guard/floor: what liveguard's own checks add to
            // the trampoline every BPF program on these hooks pays.
            std::printf("%-44s %14s %14s %14s %9s %8s %9s %9s\n",
                        instructions ? "instructions per call (median)" : "time per call (median)",
                        "without", "floor", "guard", "guard", "target", "guard", "floor");
            std::printf("%-44s %14s %14s %14s %9s %8s %9s %9s\n", "", "", "", "", "/floor", "", "/without",
                        "/without");
            for (const Row& r : rows) {
                double over = median(r.over_floor);
                char target[16];
                std::snprintf(target, sizeof target, "<=%.2fx", r.target);
                std::printf("%-44s %14s %14s %14s %8.3fx %8s %8.3fx %8.3fx%s\n", r.label.c_str(),
                            cost(median(r.samples[kWithout])).c_str(), cost(median(r.samples[kFloor])).c_str(),
                            cost(median(r.samples[kWith])).c_str(), over, target, median(r.ratios),
                            median(r.floor_ratios), over <= r.target ? "" : "  OVER TARGET");
            }
            std::printf("(%d rounds; each round measures without programs, with an empty program on "
                        "every hook the guard uses (floor), and with the guard, in one of the six "
                        "orders in turn)\n",
                        rounds);
            if (profile) {
                std::printf("\nthe programs each operation ran (BPF run-time statistics on; %s per call "
                            "of the program, its helpers included, the trampoline not):\n",
                            instructions ? "instructions" : "ns");
                for (std::size_t i = 0; i < rows.size(); ++i) {
                    std::printf("%s\n", rows[i].label.c_str());
                    for (int g = 0; g < 2; ++g)
                        for (const auto& l : profiles[g][i])
                            std::printf("  %-6s %-22s %8.2f calls/op %10.0f per call %10.0f per op\n",
                                        g ? "guard" : "floor", l.name.c_str(), l.calls_per_op, l.per_call,
                                        l.calls_per_op * l.per_call);
                }
            }
            if (flood_on) {
                std::printf("\nring buffer, `liveguard-bpf events` consuming:\n");
                std::printf("%ld refused attempts in %.2fs (%.0f/s); the consumer printed %ld events "
                            "and counted %ld identical repeats in them in %.2fs (%.0f refusals/s); "
                            "%ld counted lost; delivered + coalesced + lost = %ld\n",
                            f.attempts, f.seconds, f.seconds > 0 ? f.attempts / f.seconds : 0, f.delivered,
                            f.coalesced, f.consumer_seconds, rate, f.lost, f.delivered + f.coalesced + f.lost);
            }
        }
        bool flood_ok =
            !flood_on || (f.refused == f.attempts && f.delivered + f.coalesced + f.lost == f.attempts);
        if (!flood_ok)
            std::fprintf(stderr, "bench_syscall_cost: flood accounting is off: %ld refused, %ld "
                                 "delivered + %ld coalesced + %ld lost of %ld attempts\n",
                         f.refused, f.delivered, f.coalesced, f.lost, f.attempts);
        // Rows over their target are reported, not failed: the numbers are the result.
        return flood_ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_syscall_cost: %s\n", e.what());
        if (Guard::is_loaded()) Guard::unload();
        tear_down(s);
        return 1;
    }
}
