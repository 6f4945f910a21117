// How long a restarted service is unprotected, per protection source:
// a PID file (the watcher must see the write: a real, measurable gap), an
// inheriting supervisor and a protected cgroup (the kernel decides at fork
// or at signal time: no gap). Runs as root on a kernel with the BPF LSM,
// with the guard loaded and a watcher watching the PID file given.
#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "liveguard/abi.h"
#include "kernel/pinned_maps.h"
#include "base/proc.h"
#include "base/cgroup.h"
#include "kernel/protected_cgroups.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"

using Clock = std::chrono::steady_clock;

namespace {

bool marked(int map_fd, pid_t pid) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) return false;
    lg_protected v{};
    bool ok = bpf_map_lookup_elem(map_fd, &fd, &v) == 0;
    ::close(fd);
    return ok;
}

pid_t spawn_sleeper() {
    pid_t p = ::fork();
    if (p == 0) {
        for (;;) ::pause();
    }
    return p;
}

void reap(pid_t p) {
    ::kill(p, SIGKILL);
    ::waitpid(p, nullptr, 0);
}

std::uint64_t start_ticks(pid_t pid) {
    auto st = liveguard::read_proc_stat(pid);
    return st ? st->start_ticks : 0;
}

struct Stats {
    double p50_us, p99_us, max_us;
    int n, missed;
};

Stats summarize(std::vector<double> v, int missed) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return {0, 0, 0, 0, missed};
    auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * v.size()))]; };
    return {at(0.50), at(0.99), v.back(), static_cast<int>(v.size()), missed};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PIDFILE ROUNDS [--json]\n", argv[0]);
        return 2;
    }
    std::string pidfile = argv[1];
    int rounds = std::atoi(argv[2]);
    bool json = argc > 3 && std::string(argv[3]) == "--json";
    auto maps = liveguard::PinnedMaps::open();
    int map = maps.protected_tasks.get();

    // 1. PID file: from the end of the write to the mark being visible.
    std::vector<double> gaps;
    int missed = 0;
    for (int i = 0; i < rounds; ++i) {
        pid_t p = spawn_sleeper();
        std::string text = "{\"pid\": " + std::to_string(p) +
                           ", \"kind\": \"hermes-gateway\", \"start_time\": " +
                           std::to_string(start_ticks(p)) + "}";
        ::unlink(pidfile.c_str());
        int fd = ::open(pidfile.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        (void)!::write(fd, text.data(), text.size());
        ::close(fd);
        auto t0 = Clock::now();
        bool ok = false;
        while (Clock::now() - t0 < std::chrono::seconds(2))
            if ((ok = marked(map, p))) break;
        auto dt = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        if (ok) gaps.push_back(dt);
        else ++missed;
        reap(p);
    }
    Stats pf = summarize(gaps, missed);

    // 2. Supervisor: this process inherits; each child is checked right
    // after fork returns.
    liveguard::ProtectedSet set(map);
    set.add(::getpid(), 0, nullptr, LG_PROTECT_INHERIT);
    int sup_marked = 0;
    for (int i = 0; i < rounds; ++i) {
        pid_t p = spawn_sleeper();
        if (marked(map, p)) ++sup_marked;
        reap(p);
    }
    set.remove(::getpid());

    // 3. Protected cgroup: a process that has just joined the cgroup is
    // signalled at once by a session member; the kernel decides at signal
    // time, so every first attempt must be refused.
    std::string mount = liveguard::cgroup2_mount();
    std::string unit = mount + "/bench-unit.service", session = mount + "/bench-session";
    ::mkdir(unit.c_str(), 0755);
    ::mkdir(session.c_str(), 0755);
    liveguard::ProtectedCgroups cgroups(maps);
    liveguard::SessionRegistry sessions(maps.sessions.get(), maps.settings.get(), maps.members.get());
    cgroups.add(liveguard::cgroup_id_of(unit), 0);
    sessions.tag(mount, session);
    int cg_refused = 0;
    for (int i = 0; i < rounds; ++i) {
        int ready[2];
        if (::pipe(ready) != 0) return 1;
        pid_t p = ::fork();
        if (p == 0) {
            std::ofstream(unit + "/cgroup.procs") << "0";
            char c = 1;
            (void)!::write(ready[1], &c, 1);
            for (;;) ::pause();
        }
        char c;
        (void)!::read(ready[0], &c, 1);
        ::close(ready[0]);
        ::close(ready[1]);
        pid_t m = ::fork();
        if (m == 0) {
            std::ofstream(session + "/cgroup.procs") << "0";
            ::_exit(::kill(p, SIGKILL) == 0 ? 0 : errno);
        }
        int st = 0;
        ::waitpid(m, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == EPERM) ++cg_refused;
        reap(p);
    }
    sessions.untag(session);
    cgroups.remove(liveguard::cgroup_id_of(unit));
    ::rmdir(unit.c_str());
    ::rmdir(session.c_str());

    if (json) {
        std::printf("{\"pidfile\":{\"rounds\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
                    "\"missed\":%d},\"supervisor\":{\"rounds\":%d,\"marked_at_fork\":%d},"
                    "\"cgroup\":{\"rounds\":%d,\"refused_at_first_attempt\":%d}}\n",
                    rounds, pf.p50_us, pf.p99_us, pf.max_us, pf.missed, rounds, sup_marked, rounds,
                    cg_refused);
    } else {
        std::printf("%-34s %8s %10s %10s %10s %8s\n", "restart -> protected", "rounds", "p50",
                    "p99", "max", "missed");
        std::printf("%-34s %8d %8.0fus %8.0fus %8.0fus %8d\n", "PID file (watcher, inotify)", rounds,
                    pf.p50_us, pf.p99_us, pf.max_us, pf.missed);
        std::printf("%-34s %8d %10s %10s %10s %8d\n", "s6-supervise child (kernel, fork)", rounds,
                    "0", "0", "0", rounds - sup_marked);
        std::printf("%-34s %8d %10s %10s %10s %8d\n", "unit cgroup member (kernel, kill)", rounds,
                    "0", "0", "0", rounds - cg_refused);
        std::printf("(supervisor: %d of %d children were protected when fork() returned;\n"
                    " cgroup: %d of %d first kill attempts right after joining were refused)\n",
                    sup_marked, rounds, cg_refused, rounds);
    }
    return pf.missed == 0 && sup_marked == rounds && cg_refused == rounds ? 0 : 1;
}
