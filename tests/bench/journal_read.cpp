// How fast `events --since` reads the event journal back: the journal's
// lines through the code `liveguard-bpf events --since` runs (JournalReader
// from the start, across the rotated files oldest first, and
// print_new_journal_lines), to /dev/null, as JSON lines and as text.
//
// The journal is written first, in a directory of its own: refusals with
// their details (a culprit's command line, its parents, the test), one
// session end in every 200 lines, in as many files as the watcher keeps
// (the live one and seven rotated), larger than it lets them grow so that
// they hold --mb in all. --older P of every hundred lines are older than
// --since (default 50: the filter both drops and prints; 0: every line is
// printed; 90: the last day of a journal that holds ten). Reading needs no
// guard: it runs natively.
//
// usage: bench_journal_read [--mb N] [--older P] [--rounds N] [--dir DIR] [--json]
// Each rate is the median of the rounds (3); --dir keeps the journal there
// (written when it is not), for reading the same one with two builds.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/journal_files.h"
#include "events/journal_record.h"

using namespace liveguard;

namespace {

std::string iso(unsigned second) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-12-01T%02u:%02u:%02u.%03uZ", second / 3600 % 24, second / 60 % 60,
                  second % 60, second * 7 % 1000);
    return buf;
}

std::string event_line(unsigned i) {
    JournalEvent e;
    e.time = iso(i / 16);
    e.verdict = "denied";
    e.hook = i % 3 ? "task_kill" : "exec";
    e.pid = 40000 + i % 977;
    e.tid = e.pid;
    e.comm = "python3";
    e.target_pid = 412;
    e.target_tid = 412;
    e.target_comm = "hermes-gateway";
    e.signal = "SIGTERM";
    e.signal_number = 15;
    e.act = "sent SIGTERM to hermes-gateway[412]";
    e.session_cgroup_id = 9000 + i % 13;
    EventDetails d;
    d.argv = {"/usr/bin/python3", "-m", "pytest", "tests/gateway/test_restart.py", "-x", "-q"};
    d.exe = "/usr/bin/python3.11";
    d.parents = {{e.pid - 1, "bash"}, {e.pid - 2, "pytest"}, {e.pid - 3, "make"}};
    d.session_path = "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope/liveguard-" + std::to_string(i % 13);
    d.session_name = "pytest[" + std::to_string(e.session_cgroup_id) + "]";
    d.protected_by = "pidfile \"/home/dev/.hermes/gateway.pid\"";
    d.test = "tests/gateway/test_restart.py::test_restart_sends_sigterm[case-" + std::to_string(i % 50) + "]";
    e.details = d;
    return write_journal_record(JournalRecord{e});
}

std::string session_end_line(unsigned i) {
    JournalSessionEnd s;
    s.time = iso(i / 16);
    s.session_cgroup_id = 9000 + i % 13;
    s.name = "pytest[" + std::to_string(s.session_cgroup_id) + "]";
    s.root_pid = 39000 + i % 500;
    s.command = "/usr/bin/python3 -m pytest tests/";
    s.refusals = 200;
    s.per_hook = {{"task_kill", 133}, {"exec", 67}};
    s.culprits = {"python3[40001]", "kill[40002]"};
    s.reaped = {{41000, "sleep 1000"}, {41001, "hermes gateway run --detach"}};
    return write_journal_record(JournalRecord{s});
}

// The files oldest first: events.jsonl.N ... events.jsonl.1, events.jsonl.
void write_journal(const std::string& dir, std::size_t bytes) {
    std::filesystem::create_directories(dir);
    const std::size_t file_bytes = bytes / (JournalLimits{}.kept + 1) + 1;
    std::vector<std::string> files;
    std::string chunk;
    std::size_t total = 0;
    for (unsigned i = 0; total < bytes; ++i) {
        std::string line = (i % 200 == 199 ? session_end_line(i) : event_line(i)) + "\n";
        chunk += line;
        total += line.size();
        if (chunk.size() >= file_bytes || total >= bytes) {
            files.push_back(std::move(chunk));
            chunk.clear();
        }
    }
    for (std::size_t k = 0; k < files.size(); ++k) {
        std::size_t age = files.size() - 1 - k;  // 0 for the live file
        std::string path = dir + "/events.jsonl" + (age ? "." + std::to_string(age) : "");
        std::ofstream(path, std::ios::binary) << files[k];
    }
}

// Seconds to read the whole journal, and the lines printed.
std::pair<double, std::size_t> read_once(const std::string& dir, const std::string& since, bool json) {
    std::FILE* out = std::fopen("/dev/null", "w");
    buffer_by_batch(out);
    JournalFilter filter{since, std::nullopt, {}};
    auto t0 = std::chrono::steady_clock::now();
    JournalReader reader(true, dir + "/events.jsonl");
    std::size_t printed = print_new_journal_lines(reader, filter, json, false, out);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fclose(out);
    return {s, printed};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t mb = 200;
    unsigned older = 50;
    int rounds = 3;
    bool json_out = false;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc) mb = std::strtoul(argv[++i], nullptr, 10);
        else if (a == "--older" && i + 1 < argc) older = std::min(100ul, std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
        else if (a == "--json") json_out = true;
        else {
            std::fprintf(stderr, "usage: bench_journal_read [--mb N] [--older P] [--rounds N] [--dir DIR] [--json]\n");
            return 2;
        }
    }
    bool keep = !dir.empty();
    if (!keep) {
        char tmpl[] = "/tmp/liveguard-journal-bench.XXXXXX";
        if (!::mkdtemp(tmpl)) {
            std::perror("mkdtemp");
            return 1;
        }
        dir = tmpl;
    }
    if (!std::filesystem::exists(dir + "/events.jsonl")) write_journal(dir, mb << 20);
    std::uintmax_t bytes = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir)) bytes += f.file_size();
    // The lines are 16 a second from midnight: `older` in a hundred are
    // before this.
    std::size_t lines = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
        std::ifstream in(f.path());
        lines += std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
    }
    std::string since = iso(static_cast<unsigned>(lines * older / 100 / 16));
    std::vector<double> as_json, as_text;
    std::size_t printed_json = 0, printed_text = 0;
    for (int r = 0; r < rounds; ++r) {
        auto [sj, pj] = read_once(dir, since, true);
        auto [st, pt] = read_once(dir, since, false);
        as_json.push_back(sj);
        as_text.push_back(st);
        printed_json = pj;
        printed_text = pt;
    }
    if (!keep) std::filesystem::remove_all(dir);
    double mib = bytes / double(1 << 20);
    double j = median(as_json), t = median(as_text);
    if (json_out) {
        std::printf("{\"journal_mib\":%.1f,\"lines\":%zu,\"older_percent\":%u,\"printed\":%zu,\"json_s\":%.3f,\"text_s\":%.3f,"
                    "\"json_mib_per_s\":%.1f,\"text_mib_per_s\":%.1f}\n",
                    mib, lines, older, printed_json, j, t, mib / j, mib / t);
    } else {
        std::printf("events --since over a %.0f MiB journal (%zu lines, %u%% older than --since, %zu printed; "
                    "median of %d):\n",
                    mib, lines, older, printed_json, rounds);
        std::printf("  --json  %7.2f s  %6.1f MiB/s\n", j, mib / j);
        std::printf("  text    %7.2f s  %6.1f MiB/s  (%zu printed)\n", t, mib / t, printed_text);
    }
    return 0;
}
