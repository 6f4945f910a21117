// What the guard costs on the hot paths every process on the machine takes
// (kill, execve, fork), measured as ratios in one run: the guard is loaded
// and unloaded between phases, A B B A A B ..., and each cost is the median
// over rounds of (with guard / without guard), so drift of a shared, noisy
// machine cancels instead of landing on one side.
//
// A session stays tagged while the guard is loaded, as it is while a test
// suite runs: with no session at all the hooks return at their first check,
// which would flatter the numbers.
//
// Then the ring buffer: a session member floods a protected process with
// refused signals while `liveguard-bpf events` consumes; delivered events
// plus the kernel's lost count must equal the attempts.
//
// usage: bench_syscall_cost LIVEGUARD_BPF EXEC_CHAIN [--rounds N] [--scale F]
//                           [--flood N] [--json]
// Runs as root on a kernel that runs BPF LSM programs (in the VM).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cgroup.h"
#include "counters.h"
#include "error.h"
#include "loader.h"
#include "pinned_maps.h"
#include "proc.h"
#include "protected_set.h"
#include "session_registry.h"

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

struct Setup {
    std::string lg;          // the liveguard-bpf binary (the events consumer)
    std::string exec_chain;  // the static binary the exec rows run
    std::string mount;       // cgroup2
    std::string session;     // the tagged session cgroup
    pid_t target = 0;        // unprotected: the kill rows' target
};

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

struct Row {
    const char* key;
    const char* label;
    double target;
    bool member;
    int ops;
    std::function<bool(int)> op;
    std::vector<double> with, without, ratios;
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
    std::vector<Row> rows;
    rows.push_back({"kill_nonmember", "kill() non-member -> unprotected", 1.05, false, n(20000), kills, {}, {}, {}});
    rows.push_back({"kill_member", "kill() member -> unprotected", 1.15, true, n(20000), kills, {}, {}, {}});
    rows.push_back({"exec_nonmember", "execve static binary, non-member", 1.02, false, n(100), execs, {}, {}, {}});
    rows.push_back({"exec_member", "execve static binary, member", 1.10, true, n(100), execs, {}, {}, {}});
    rows.push_back({"fork_member", "fork+exit, member", 1.05, true, n(200), forks, {}, {}, {}});
    return rows;
}

void guard_on(const Setup& s) {
    Guard::load(liveguard::Mode::Enforce);
    PinnedMaps maps = PinnedMaps::open();
    liveguard::SessionRegistry(maps.sessions.get(), maps.settings.get()).tag(s.mount, s.session);
}

void guard_off() {
    Guard::unload();
    if (Guard::is_loaded()) throw std::runtime_error("the guard is still loaded after unload");
}

struct Flood {
    long attempts = 0, refused = 0, delivered = 0, lost = 0;
    double seconds = 0;           // the attempts alone
    double consumer_seconds = 0;  // from the first attempt to the last line consumed
};

long count_session_lines(const std::string& path, std::uint64_t session_id) {
    std::ifstream in(path);
    std::string line, needle = "\"session_cgroup_id\":" + std::to_string(session_id) + ",";
    long n = 0;
    while (std::getline(in, line))
        if (line.find(needle) != std::string::npos && line.find("\"verdict\"") != std::string::npos) ++n;
    return n;
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
    liveguard::SessionRegistry(maps.sessions.get(), maps.settings.get()).tag(s.mount, cg, &sid);

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
        long n = count_session_lines(out_path, sid);
        if (n != f.delivered) {
            f.delivered = n;
            last_change = now_ns();
            f.consumer_seconds = (last_change - t0) / 1e9;
        }
        if (f.delivered + f.lost >= attempts) break;
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
                     "usage: %s LIVEGUARD_BPF EXEC_CHAIN [--rounds N] [--scale F] [--flood N] [--json]\n",
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
    for (int i = 3; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json") json = true;
        else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (a == "--scale" && i + 1 < argc) scale = std::atof(argv[++i]);
        else if (a == "--flood" && i + 1 < argc) flood_attempts = std::atol(argv[++i]);
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
        s.session = s.mount + "/bench-cost-session";
        ::mkdir(s.session.c_str(), 0755);
        s.target = spawn_sleeper();
        std::vector<Row> rows = make_rows(s, scale);

        for (int r = 0; r < rounds; ++r) {
            // A B, then B A: each side is first as often as it is second.
            bool on_first = r % 2 == 0;
            for (int phase = 0; phase < 2; ++phase) {
                bool on = (phase == 0) == on_first;
                if (on) guard_on(s);
                for (auto& row : rows)
                    (on ? row.with : row.without).push_back(batch(s, row.member, row.ops, row.op));
                if (on) guard_off();
            }
            for (auto& row : rows) row.ratios.push_back(row.with.back() / row.without.back());
            if (!json) std::fprintf(stderr, "\rround %d of %d", r + 1, rounds);
        }
        if (!json) std::fprintf(stderr, "\n");

        guard_on(s);
        Flood f = flood(s, flood_attempts);
        guard_off();
        reap(s.target);
        ::rmdir(s.session.c_str());

        double rate = f.consumer_seconds > 0 ? f.delivered / f.consumer_seconds : 0;
        if (json) {
            std::printf("{\"kernel\":\"%s\",\"rounds\":%d,\"costs\":[", kernel_release().c_str(), rounds);
            for (std::size_t i = 0; i < rows.size(); ++i) {
                const Row& r = rows[i];
                double ratio = median(r.ratios);
                std::printf("%s{\"key\":\"%s\",\"what\":\"%s\",\"ops_per_batch\":%d,"
                            "\"without_ns\":%.1f,\"with_ns\":%.1f,\"ratio\":%.4f,\"target\":%.2f,"
                            "\"met\":%s}",
                            i ? "," : "", r.key, r.label, r.ops, median(r.without), median(r.with),
                            ratio, r.target, ratio <= r.target ? "true" : "false");
            }
            std::printf("],\"events\":{\"attempts\":%ld,\"refused\":%ld,\"delivered\":%ld,"
                        "\"lost\":%ld,\"attempt_seconds\":%.3f,\"consumer_seconds\":%.3f,"
                        "\"delivered_per_second\":%.0f}}\n",
                        f.attempts, f.refused, f.delivered, f.lost, f.seconds, f.consumer_seconds, rate);
        } else {
            std::printf("%-36s %12s %12s %8s %8s\n", "cost per call (median of rounds)", "without",
                        "with", "ratio", "target");
            for (const Row& r : rows) {
                double ratio = median(r.ratios);
                bool met = ratio <= r.target;
                std::printf("%-36s %10.2fus %10.2fus %7.3fx %6s%.2fx %s\n", r.label,
                            median(r.without) / 1000, median(r.with) / 1000, ratio, "<=", r.target,
                            met ? "" : "OVER TARGET");
            }
            std::printf("(%d rounds, guard loaded and unloaded between phases, alternating which "
                        "goes first; a session is tagged whenever the guard is loaded)\n",
                        rounds);
            std::printf("\nring buffer, `liveguard-bpf events` consuming:\n");
            std::printf("%ld refused attempts in %.2fs (%.0f/s); the consumer printed %ld events "
                        "in %.2fs (%.0f/s); %ld counted lost; delivered + lost = %ld\n",
                        f.attempts, f.seconds, f.seconds > 0 ? f.attempts / f.seconds : 0, f.delivered,
                        f.consumer_seconds, rate, f.lost, f.delivered + f.lost);
        }
        bool flood_ok = f.refused == f.attempts && f.delivered + f.lost == f.attempts;
        if (!flood_ok)
            std::fprintf(stderr, "bench_syscall_cost: flood accounting is off: %ld refused, %ld "
                                 "delivered + %ld lost of %ld attempts\n",
                         f.refused, f.delivered, f.lost, f.attempts);
        // Rows over their target are reported, not failed: the numbers are the result.
        return flood_ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_syscall_cost: %s\n", e.what());
        if (Guard::is_loaded()) Guard::unload();
        return 1;
    }
}
