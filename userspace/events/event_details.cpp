// Reading what an event's record leaves out, from /proc, the cgroup tree,
// the session's info and its test logs.
#include "events/event_details.h"

#include <unistd.h>

#include <charconv>
#include <climits>
#include <cstring>
#include <optional>
#include <sstream>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/live_environ.h"
#include "base/pid_namespaces.h"
#include "base/paths.h"
#include "base/proc.h"
#include "watcher/watcher_state.h"

namespace liveguard {
namespace {

std::string describe_source(std::uint32_t source, DetailsCache& cache) {
    if (source == LG_SOURCE_UNKNOWN) return "";
    if (source == LG_SOURCE_LIVEGUARD) return "liveguard itself (its watcher or a root run)";
    if (source == 0) return "liveguard-bpf protect (command line)";
    if (auto d = cache.target_description(source); d && !d->empty()) return *d;
    return "policy [[protect]] #" + std::to_string(source);
}

// The test running at `boot_ns` according to the log the plugin keeps by
// pid when no `run` named a directory (an automatic session): only what
// the process that has the pid now, started at `start`, wrote.
std::string test_by_pid(std::uint32_t pid, std::uint64_t boot_ns, std::uint64_t start, std::uint64_t* next) {
    auto log = read_untrusted_file(std::string(paths::kTestLogByPidDir) + "/" + std::to_string(pid), 4 << 20);
    return log ? test_at_since(*log, boot_ns, start, next) : "";
}

// Only pytest sets PYTEST_CURRENT_TEST in its own process, and pytest is
// Python: reading another program's memory for it would only slow the
// consumer down when a flood of refusals comes from one culprit.
bool runs_python(std::uint32_t pid) {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    if (n <= 0) return false;
    std::string_view exe(buf, static_cast<std::size_t>(n));
    std::string_view base = exe.substr(exe.rfind('/') + 1);
    return base.starts_with("python") || base.starts_with("pypy");
}

}  // namespace

std::vector<std::string> split_args(std::string_view bytes) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= bytes.size(); ++i) {
        if (i == bytes.size() || bytes[i] == '\0') {
            if (i > start || (i < bytes.size())) out.emplace_back(bytes.substr(start, i - start));
            start = i + 1;
        }
    }
    while (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

std::string pytest_test_from_environ(std::string_view environ) {
    const std::string_view key = "PYTEST_CURRENT_TEST=";
    for (const auto& var : split_args(environ))
        if (var.compare(0, key.size(), key) == 0) return var.substr(key.size());
    return "";
}

std::string test_at_since(std::string_view log, std::uint64_t boot_ns, std::uint64_t not_before,
                          std::uint64_t* next) {
    std::string_view found;
    std::size_t pos = 0;
    while (pos < log.size()) {
        std::size_t nl = log.find('\n', pos);
        if (nl == std::string_view::npos) {
            // A line still being written: what it will say is not known,
            // from the event's time on.
            if (next && boot_ns + 1 < *next) *next = boot_ns + 1;
            break;
        }
        std::string_view line = log.substr(pos, nl - pos);
        pos = nl + 1;
        std::size_t tab = line.find('\t');
        if (tab == std::string_view::npos) continue;
        // A log holds a line per test phase: parsed in place, since a
        // consumer behind a flood reads one per culprit per batch.
        std::uint64_t t = 0;
        if (std::from_chars(line.data(), line.data() + tab, t).ec == std::errc::result_out_of_range) t = UINT64_MAX;
        if (t > boot_ns) {
            if (next && t < *next) *next = t;
            break;
        }
        if (t < not_before) continue;
        found = line.substr(tab + 1);
    }
    return std::string(found);
}

std::uint64_t ticks_to_ns(std::uint64_t ticks, long ticks_per_second) {
    if (ticks_per_second <= 0) return 0;
    auto hz = static_cast<std::uint64_t>(ticks_per_second);
    return ticks / hz * 1000000000ull + ticks % hz * 1000000000ull / hz;
}

const std::string& DetailsCache::cgroup_mount() {
    if (!mount_read_) {
        mount_read_ = true;
        try {
            mount_ = cgroup2_mount();
        } catch (const std::exception&) {
        }
    }
    return mount_;
}

std::string DetailsCache::session_path(std::uint64_t id) {
    if (auto it = paths_.find(id); it != paths_.end()) return it->second;
    if (cgroup_mount().empty()) return "";
    auto p = cgroup_path_of_id(mount_, id);
    if (!p) return "";  // gone, or not yet visible: ask again next time
    if (paths_.size() > 4096) paths_.clear();
    return paths_[id] = *p;
}

std::optional<std::string> DetailsCache::target_description(std::uint32_t source) {
    // The watcher's state is a file of every target's pids: read once a
    // second at most, not once per event.
    std::uint64_t now = boottime_now_ns();
    auto it = targets_.find(source);
    // Again after a second, or after 100 ms for a target not known yet
    // (added since, or a read that failed).
    std::uint64_t age = now - targets_read_ns_;
    if (!targets_read_ || age >= 1000000000ull || (it == targets_.end() && age >= 100000000ull)) {
        targets_read_ = true;
        targets_read_ns_ = now;
        targets_.clear();
        if (auto state = read_watcher_state())
            for (const auto& t : state->targets) targets_[t.source] = t.description;
        it = targets_.find(source);
    }
    if (it != targets_.end()) return it->second;
    return std::nullopt;
}

std::optional<SessionInfo> DetailsCache::session_info(std::uint64_t id) {
    if (auto it = infos_.find(id); it != infos_.end()) return it->second;
    auto info = read_session_info(id);
    if (!info) return std::nullopt;
    if (infos_.size() > 4096) infos_.clear();
    return infos_[id] = *info;
}

EventDetails gather_details(const lg_event& e, DetailsCache* cache) {
    EventDetails d;
    d.argv = split_args(std::string_view(e.args, std::min<std::size_t>(e.args_len, LG_ARGS_LEN)));
    DetailsCache fresh;
    DetailsCache& c = cache ? *cache : fresh;
    auto info = c.session_info(e.session_cgroup_id);
    if (info) {
        d.session_name = info->name;
        d.session_path = info->path;
    } else {
        d.session_path = c.session_path(e.session_cgroup_id);
    }
    // Up to the session's root (the command `run` started); none when the
    // culprit is that root.
    bool is_root = info && info->root_pid && e.pid == static_cast<std::uint32_t>(info->root_pid);
    for (std::uint32_t i = 0; !is_root && i < e.chain_len && i < LG_CHAIN_LEN; ++i) {
        Ancestor a;
        a.pid = e.chain[i].pid;
        a.comm.assign(e.chain[i].comm, strnlen(e.chain[i].comm, LG_COMM_LEN));
        d.parents.push_back(std::move(a));
        if (info && info->root_pid && e.chain[i].pid == static_cast<std::uint32_t>(info->root_pid)) break;
    }
    d.protected_by = describe_source(e.target_source, c);
    // A refused target is alive when the event is read, unless it ended
    // since of something else: its name must still be the record's.
    if (e.target_pid) {
        auto tst = read_proc_stat(static_cast<pid_t>(e.target_pid));
        if (tst && tst->comm == std::string(e.target_comm, strnlen(e.target_comm, LG_COMM_LEN)))
            if (auto inner = inner_pid(static_cast<pid_t>(e.target_pid)))
                d.target_ns_pid = static_cast<std::uint32_t>(*inner);
    }
    // The processes the test is looked up through.
    std::vector<std::uint32_t> pids{e.pid};
    for (const auto& a : d.parents) pids.push_back(a.pid);

    // The test the kernel read from the culprit's memory at the refusal:
    // exact, where the culprit's executable is one it can read.
    const std::string taken(e.test, strnlen(e.test, LG_TEST_LEN));
    if (const DetailsCache::Culprit* known = c.culprit(e, pids)) {
        d.exe = known->exe;
        d.culprit_gone = known->gone;
        d.test = taken.empty() ? known->test : taken;
        return d;
    }
    // Taken before anything is read: what is read describes the events
    // before this time, less a margin for the pytest plugin, which takes a
    // line's time before it writes the line.
    constexpr std::uint64_t kLogWriteMarginNs = 1'000'000;
    std::uint64_t now = boottime_now_ns();
    std::uint64_t until = now > kLogWriteMarginNs ? now - kLogWriteMarginNs : 0;
    char buf[PATH_MAX];
    std::string proc = "/proc/" + std::to_string(e.pid);
    ssize_t n = ::readlink((proc + "/exe").c_str(), buf, sizeof buf - 1);
    // The record's comm must still match: the PID may already be reused.
    auto st = read_proc_stat(static_cast<pid_t>(e.pid));
    bool same = st && st->comm == std::string(e.comm, strnlen(e.comm, LG_COMM_LEN));
    if (n > 0 && same) d.exe.assign(buf, static_cast<std::size_t>(n));
    else d.culprit_gone = true;

    // The test: the pytest plugin's log of the culprit or an ancestor, at
    // the event's time (the session's log, else the log by pid); else
    // PYTEST_CURRENT_TEST as the process's libc holds it now (pytest sets
    // it in its own process at each phase, which its /proc environ never
    // shows); else in the environment it was started with, which a child
    // the test spawned inherited. The live value is the test running when
    // the event is read, not when it happened. Reading another process's
    // memory is ptrace access: only a consumer running as root (every
    // reader of the ring buffer is) does it, so that what an event names
    // never depends on whose processes a user's consumer may read.
    const bool root = ::geteuid() == 0;
    std::string dir = std::string(paths::kTestLogDir) + "/" + std::to_string(e.session_cgroup_id) + "/";
    for (auto pid : pids) {
        if (auto log = read_untrusted_file(dir + std::to_string(pid), 4 << 20)) {
            d.test = test_at_since(*log, e.boot_ns, 0, &until);
            if (!d.test.empty()) break;
        }
        if (pid == e.pid && !taken.empty()) {
            d.test = taken;
            break;
        }
        auto pst = read_proc_stat(static_cast<pid_t>(pid));
        if (!pst) continue;  // gone: nothing of it is left to read
        std::uint64_t start = ticks_to_ns(pst->start_ticks, ::sysconf(_SC_CLK_TCK));
        if (start > e.boot_ns) {
            // The pid is another process's by now; from its start on, its
            // log may answer.
            if (start < until) until = start;
            continue;
        }
        d.test = test_by_pid(pid, e.boot_ns, start, &until);
        if (!d.test.empty()) break;
        if (root && runs_python(pid)) {
            d.test = read_live_environ(static_cast<pid_t>(pid), "PYTEST_CURRENT_TEST").value_or("");
            if (!d.test.empty()) break;
        }
        if (auto env = read_small_file("/proc/" + std::to_string(pid) + "/environ", 1 << 20)) {
            d.test = pytest_test_from_environ(*env);
            if (!d.test.empty()) break;
        }
    }
    if (cache) {
        DetailsCache::Culprit k;
        k.from_ns = e.boot_ns;
        k.until_ns = until;
        k.comm.assign(e.comm, strnlen(e.comm, LG_COMM_LEN));
        k.session = e.session_cgroup_id;
        k.pids = std::move(pids);
        k.exe = d.exe;
        k.gone = d.culprit_gone;
        k.test = d.test;
        cache->remember(std::move(k));
    }
    return d;
}

const DetailsCache::Culprit* DetailsCache::culprit(const lg_event& e, const std::vector<std::uint32_t>& pids) const {
    auto it = culprits_.find(e.pid);
    if (it == culprits_.end()) return nullptr;
    const Culprit& k = it->second;
    if (e.boot_ns < k.from_ns || e.boot_ns >= k.until_ns || k.session != e.session_cgroup_id || k.pids != pids)
        return nullptr;
    if (k.comm != std::string_view(e.comm, strnlen(e.comm, LG_COMM_LEN))) return nullptr;
    return &k;
}

void DetailsCache::remember(Culprit c) {
    if (c.until_ns <= c.from_ns) return;  // describes no event but its own
    // A test id is one line of a log a user writes: bound the bytes too.
    std::size_t bytes = c.exe.size() + c.test.size();
    if (culprits_.size() >= 4096 || culprit_bytes_ + bytes > (16u << 20)) {
        culprits_.clear();
        culprit_bytes_ = 0;
    }
    culprit_bytes_ += bytes;
    std::uint32_t pid = c.pids.front();
    culprits_[pid] = std::move(c);
}

}  // namespace liveguard
