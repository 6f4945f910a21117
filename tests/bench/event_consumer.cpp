// How many refusal events per second the consumer turns into output, when
// the events all differ (nothing to coalesce): from the ring buffer to the
// journal with the culprit's details, and from the journal to `events`'
// output, through the code `liveguard-bpf events` runs. Once with --json
// to a pipe, once as text to a terminal (a pty whose other side is read
// as fast as it comes).
//
// The producer is emitter.bpf.c, run through BPF_PROG_TEST_RUN in chunks
// the ring buffer holds, so nothing is lost and nothing needs a
// trampoline: this runs natively on the build machine's kernel, where the
// consumer's speed is the machine's and not the emulator's. The culprit
// the events name is this process, in a session with a name and a pytest
// test log: one test stuck refusing, as in a flood.
//
// A consumer behind a flood reads a culprit's details once for the events
// that reading describes (events/event_details.h): those over a
// millisecond older than it. So each chunk waits 2 ms before it is
// consumed, as a backlog would, and the rate is over the consumer's time
// without the waits and the producing. Events of many culprits each pay
// their culprit's reading (/proc and its test logs) once per chunk.
//
// Everything runs in a private mount namespace with its own /run, so the
// journal written is not the machine's.
//
// usage: bench_event_consumer [--events N] [--rounds N] [--json]
// Each rate is the median of the rounds (3).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <pty.h>
#include <signal.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <optional>
#include <vector>
#include <stdexcept>
#include <string>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/paths.h"
#include "base/proc.h"
#include "events/event_collector.h"
#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/session_info.h"
#include "kernel/counters.h"
#include "liveguard/abi.h"
// After abi.h: the emitter's globals are of its types.
#include "emitter.skel.h"

namespace {

double now_s() {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

// A /run of our own: the journal, session info and test logs the bench
// writes never reach the machine's.
void private_run() {
    if (::unshare(CLONE_NEWNS) != 0) fail(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        fail(std::string("making mounts private: ") + std::strerror(errno));
    if (::mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") != 0)
        fail(std::string("mounting a tmpfs on /run: ") + std::strerror(errno));
}

class Emitter {
public:
    Emitter() : skel_(emitter_bpf__open()) {
        if (!skel_) fail(std::string("cannot open the emitter: ") + std::strerror(errno));
    }
    ~Emitter() { emitter_bpf__destroy(skel_); }
    Emitter(const Emitter&) = delete;
    Emitter& operator=(const Emitter&) = delete;

    lg_event& event() { return skel_->bss->template_event; }
    void set_culprits(const std::vector<pid_t>& pids) {
        std::size_t n = std::min<std::size_t>(pids.size(), sizeof skel_->bss->culprits / sizeof(std::uint32_t));
        for (std::size_t i = 0; i < n; ++i) skel_->bss->culprits[i] = static_cast<std::uint32_t>(pids[i]);
        skel_->bss->culprit_count = static_cast<std::uint32_t>(n);
    }
    void load() {
        if (int err = emitter_bpf__load(skel_); err != 0)
            fail(std::string("cannot load the emitter: ") + std::strerror(-err));
    }
    // `n` events, each to the next target.
    void emit(int n) {
        char packet[64] = {};
        LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet, .data_size_in = sizeof packet,
                    .repeat = n);
        if (int err = bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.emit), &opts); err != 0)
            fail(std::string("BPF_PROG_TEST_RUN: ") + std::strerror(errno));
    }
    int events_fd() const { return bpf_map__fd(skel_->maps.lg_events); }
    int counters_fd() const { return bpf_map__fd(skel_->maps.lg_counters); }

private:
    emitter_bpf* skel_;
};

void write_test_log(std::uint64_t session, pid_t pid);

// A refusal by this process, inside a named session whose pytest log says
// which test runs: what a consumer sees from a test stuck in a loop of
// kills, except that every target differs.
void describe_culprit(lg_event& e) {
    std::string mount = liveguard::cgroup2_mount();
    auto cgroup = liveguard::cgroup_dir_of(mount, ::getpid());
    if (!cgroup) fail("cannot find this process's cgroup");
    std::uint64_t session = liveguard::cgroup_id_of(*cgroup);
    e.session_cgroup_id = session;
    e.verdict = LG_VERDICT_DENIED;
    e.hook = LG_HOOK_TASK_KILL;
    e.pid = e.tid = static_cast<std::uint32_t>(::getpid());
    e.signal = 15;
    std::strncpy(e.comm, "bench_event_con", LG_COMM_LEN);
    std::strncpy(e.target_comm, "hermes-gateway", LG_COMM_LEN);
    e.target_source = 1;
    pid_t p = ::getppid();
    for (e.chain_len = 0; e.chain_len < 2 && p > 1; ++e.chain_len) {
        auto st = liveguard::read_proc_stat(p);
        if (!st) break;
        e.chain[e.chain_len].pid = static_cast<std::uint32_t>(p);
        std::strncpy(e.chain[e.chain_len].comm, st->comm.c_str(), LG_COMM_LEN - 1);
        p = st->ppid;
    }
    const char args[] = "python3\0-m\0pytest\0tests/test_gateway.py";
    std::memcpy(e.args, args, sizeof args);
    e.args_len = sizeof args;

    liveguard::write_session_info(session, {"bench", "/bench.scope", 0});
    std::string dir = std::string(liveguard::paths::kTestLogDir) + "/" + std::to_string(session);
    ::mkdir(liveguard::paths::kTestLogDir, 0755);
    ::mkdir(dir.c_str(), 0755);
    write_test_log(session, ::getpid());
}

// The pytest plugin's log of one process: 200 tests in the last second.
void write_test_log(std::uint64_t session, pid_t pid) {
    std::string dir = std::string(liveguard::paths::kTestLogDir) + "/" + std::to_string(session);
    std::ofstream log(dir + "/" + std::to_string(pid));
    std::uint64_t t = liveguard::boottime_now_ns();
    for (int i = 0; i < 200; ++i)
        log << (t - 1000000000ull + static_cast<std::uint64_t>(i)) << "\ttests/test_gateway.py::test_"
            << i << " (call)\n";
}

// Processes to be the culprits of the events in turn, each with its own
// test log (pytest's workers): children that wait to be killed.
class Culprits {
public:
    Culprits(int n, std::uint64_t session) {
        for (int i = 0; i < n; ++i) {
            pid_t pid = ::fork();
            if (pid < 0) fail(std::string("fork: ") + std::strerror(errno));
            if (pid == 0) {
                // Holding no end of the output: the reader must see its end.
                ::close_range(3, ~0u, 0);
                for (;;) ::pause();
            }
            pids_.push_back(pid);
            write_test_log(session, pid);
        }
    }
    ~Culprits() {
        for (pid_t pid : pids_) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    Culprits(const Culprits&) = delete;
    Culprits& operator=(const Culprits&) = delete;
    const std::vector<pid_t>& pids() const { return pids_; }

private:
    std::vector<pid_t> pids_;
};

// Reads `fd` to its end and reports how many bytes came, through `report`.
// `writer` is the other end, which the reader must not hold open.
pid_t drain(int fd, int writer, int report) {
    pid_t pid = ::fork();
    if (pid != 0) return pid;
    ::close(writer);
    char buf[1 << 16];
    unsigned long long total = 0;
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) total += static_cast<unsigned long long>(n);
        else if (n < 0 && errno == EINTR) continue;
        else break;  // EOF, or EIO once a pty's other side is closed
    }
    (void)!::write(report, &total, sizeof total);
    ::_exit(0);
}

struct Result {
    const char* name;
    int events = 0;
    std::size_t lines = 0;
    unsigned long long bytes = 0;
    double seconds = 0, producing = 0, waiting = 0;
    std::uint64_t lost = 0;
    double rate() const { return events / (seconds - producing - waiting); }
};

// One run of `events` (text or --json) to `out`, which `reader_end` drains.
Result consume(const char* name, int events, bool json, int out_fd, int reader_end, int culprits = 0) {
    int report[2];
    if (::pipe(report) != 0) fail("pipe");
    pid_t child = drain(reader_end, out_fd, report[1]);
    ::close(report[1]);
    ::close(reader_end);

    Emitter emitter;
    describe_culprit(emitter.event());
    std::optional<Culprits> others;
    if (culprits > 0) {
        others.emplace(culprits, emitter.event().session_cgroup_id);
        emitter.set_culprits(others->pids());
    }
    emitter.load();
    // Buffered as `events` buffers its output.
    std::FILE* out = ::fdopen(out_fd, "w");
    bool tty = ::isatty(out_fd);
    liveguard::buffer_by_batch(out);

    liveguard::EventCollector collector(emitter.events_fd(), emitter.counters_fd());
    liveguard::JournalReader reader(false);
    liveguard::JournalFilter filter;
    Result r{name, events};
    // What the ring buffer holds with room to spare, so nothing is lost.
    const int chunk = LG_RINGBUF_BYTES / (sizeof(lg_event) + 8) / 2;
    double t0 = now_s();
    for (int made = 0; made < events;) {
        int n = std::min(chunk, events - made);
        double p0 = now_s();
        emitter.emit(n);
        r.producing += now_s() - p0;
        made += n;
        double w0 = now_s();
        struct timespec two_ms = {0, 2000000};
        ::nanosleep(&two_ms, nullptr);
        r.waiting += now_s() - w0;
        collector.poll(0);
        r.lines += liveguard::print_new_journal_lines(reader, filter, json, !json && tty, out);
    }
    collector.poll(0);
    r.lines += liveguard::print_new_journal_lines(reader, filter, json, !json && tty, out);
    if (std::ferror(out) || std::fclose(out) != 0) fail(std::string(name) + ": the output could not be written whole");
    if (::read(report[0], &r.bytes, sizeof r.bytes) != sizeof r.bytes) fail("the reader reported nothing");
    r.seconds = now_s() - t0;
    ::close(report[0]);
    ::waitpid(child, nullptr, 0);
    r.lost = liveguard::read_counters(emitter.counters_fd())[LG_COUNTER_EVENTS_LOST];
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    int events = 100000, rounds = 3;
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json") json = true;
        else if (a == "--events" && i + 1 < argc) events = std::atoi(argv[++i]);
        else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--events N] [--rounds N] [--json]\n", argv[0]);
            return 2;
        }
    }
    if (events <= 0 || rounds <= 0) {
        std::fprintf(stderr, "bench_event_consumer: --events and --rounds must be positive\n");
        return 2;
    }
    if (::geteuid() != 0) {
        std::fprintf(stderr, "bench_event_consumer: needs root (BPF maps, a private mount namespace)\n");
        return 1;
    }
    try {
        private_run();
        // The median of the rounds: the rate of a shared machine scatters.
        auto median = [](std::vector<Result> runs) {
            std::sort(runs.begin(), runs.end(), [](const Result& a, const Result& b) { return a.rate() < b.rate(); });
            return runs[runs.size() / 2];
        };
        std::vector<Result> pipes, ttys;
        for (int round = 0; round < rounds; ++round) {
            int p[2];
            if (::pipe(p) != 0) fail("pipe");
            pipes.push_back(consume("events --json to a pipe", events, true, p[1], p[0]));
            int master = -1, slave = -1;
            if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0)
                fail(std::string("openpty: ") + std::strerror(errno));
            ttys.push_back(consume("events to a terminal (pty)", events, false, slave, master));
        }
        Result piped = median(pipes), tty = median(ttys);
        // Not one test stuck but 64 processes refused in turn: each
        // culprit's reading is made once per chunk, not once in all.
        std::vector<Result> many;
        for (int round = 0; round < rounds; ++round) {
            int p[2];
            if (::pipe(p) != 0) fail("pipe");
            many.push_back(consume("--json to a pipe, 64 culprits", events, true, p[1], p[0], 64));
        }
        Result spread = median(many);

        bool ok = true;
        for (const auto* runs : {&pipes, &ttys, &many})
            for (const Result& r : *runs)
                if (r.lost != 0 || r.lines != static_cast<std::size_t>(events)) {
                    std::fprintf(stderr, "bench_event_consumer: %s: %zu lines printed and %llu lost for %d events\n",
                                 r.name, r.lines, static_cast<unsigned long long>(r.lost), events);
                    ok = false;
                }
        if (json) {
            std::printf("{\"events\":%d,\"rounds\":%d,\"sinks\":[", events, rounds);
            const char* sep = "";
            for (const Result* r : {&piped, &tty, &spread}) {
                std::printf("%s{\"sink\":\"%s\",\"lines\":%zu,\"bytes\":%llu,\"seconds\":%.3f,"
                            "\"producing_seconds\":%.3f,\"waiting_seconds\":%.3f,\"events_per_second\":%.0f,"
                            "\"lost\":%llu}",
                            sep, r->name, r->lines, r->bytes, r->seconds, r->producing, r->waiting, r->rate(),
                            static_cast<unsigned long long>(r->lost));
                sep = ",";
            }
            std::printf("],\"targets\":{\"pipe\":100000,\"terminal\":20000}}\n");
        } else {
            std::printf("Consumer rate (median of %d rounds), %d refusal events that all differ (natively, this machine's kernel;"
                        " each chunk consumed 2 ms after it was made):\n",
                        rounds, events);
            const int targets[] = {100000, 20000, 0};
            int i = 0;
            for (const Result* r : {&piped, &tty, &spread}) {
                std::printf("  %-30s %8.0f events/s  (%zu lines, %.1f MiB in %.2f s, %.2f s of it producing,"
                            " %.2f s waiting)",
                            r->name, r->rate(), r->lines, static_cast<double>(r->bytes) / (1 << 20), r->seconds,
                            r->producing, r->waiting);
                if (int target = targets[i++])
                    std::printf("  target >= %d/s%s", target, r->rate() >= target ? "" : "  UNDER TARGET");
                std::printf("\n");
            }
        }
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_event_consumer: %s\n", e.what());
        return 1;
    }
}
