#include "sessions/process_sessions.h"

#include <bpf/bpf.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <set>
#include <filesystem>
#include <thread>

#include "base/clock.h"
#include "base/error.h"
#include "base/paths.h"
#include "base/proc.h"
#include "events/event_details.h"
#include "events/journald_sink.h"
#include "events/session_info.h"
#include "kernel/auto_names.h"
#include "kernel/map_walk.h"
#include "kernel/pinned_maps.h"
#include "kernel/session_registry.h"
#include "sessions/oom_rank.h"
#include "liveguard/abi.h"
#include "policy/policy.h"
#include "sessions/session_summary.h"
#include "watcher/log.h"

namespace liveguard {
namespace {

// Rounds of "find the members, kill them" before a reap gives up until
// the next tick: a member forking while it is killed is found next round.
constexpr int kReapRounds = 100;
constexpr auto kReapPause = std::chrono::milliseconds(10);
// Rounds of "find the members, rank those not ranked" when a session is
// found: a member forked by one not yet ranked inherits the old value and
// is found next round. Ranked ones fork ranked children.
constexpr int kRankRounds = 20;
constexpr auto kRankPause = std::chrono::milliseconds(20);

UniqueFd open_pidfd(pid_t pid) {
    return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

// Only ESRCH says a process is gone; any other failure (EMFILE, ENOMEM)
// says nothing, and nothing may be decided on it.
bool gone(int err) { return err == ESRCH; }

// A zombie keeps its marks until it is reaped, but runs nothing more.
bool finished(pid_t pid) {
    auto st = read_proc_stat(pid);
    return !st || st->state == 'Z' || st->state == 'X';
}

std::vector<std::string> command_line_of(pid_t pid) {
    auto raw = read_small_file("/proc/" + std::to_string(pid) + "/cmdline", 64 << 10);
    return raw ? split_args(*raw) : std::vector<std::string>{};
}

std::string join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
    return out;
}

std::string base_name(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct Member {
    SessionProcess process;
    UniqueFd pidfd;
    bool is_protected = false;
};

struct MemberScan {
    std::vector<Member> members;
    // Some process could not be asked (no pidfd for a reason other than
    // its exit): a scan that found no member proves nothing then.
    bool complete = true;
};

MemberScan find_members(int members_fd, int protected_fd, std::uint64_t session) {
    MemberScan out;
    for (pid_t pid : list_pids()) {
        UniqueFd fd = open_pidfd(pid);
        if (!fd) {
            if (!gone(errno)) out.complete = false;
            continue;
        }
        lg_member m{};
        int key = fd.get();
        if (bpf_map_lookup_elem(members_fd, &key, &m) != 0 || m.session_cgroup_id != session) continue;
        if (finished(pid)) continue;
        lg_protected p{};
        bool prot = protected_fd >= 0 && bpf_map_lookup_elem(protected_fd, &key, &p) == 0;
        out.members.push_back({{pid, join(command_line_of(pid))}, std::move(fd), prot});
    }
    return out;
}

}  // namespace

std::vector<SessionProcess> session_members(int sessions_fd, int members_fd, std::uint64_t session) {
    (void)sessions_fd;
    std::vector<SessionProcess> out;
    for (auto& m : find_members(members_fd, -1, session).members) out.push_back(m.process);
    return out;
}

std::string automatic_session_name(const std::vector<std::string>& argv, pid_t pid) {
    std::string runner = argv.empty() ? "session" : base_name(argv[0]);
    bool interpreter = auto_base_name(runner) == "python";
    for (std::size_t i = 1; interpreter && i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a == "-m" && i + 1 < argv.size()) {
            runner = argv[i + 1];
            break;
        }
        if (a.size() > 2 && a.compare(0, 2, "-m") == 0) {
            runner = a.substr(2);
            break;
        }
        if ((a == "-X" || a == "-W") && i + 1 < argv.size()) {
            ++i;  // its value
            continue;
        }
        if (a.empty() || a[0] != '-') {
            runner = base_name(a);  // an entry script run by its interpreter
            break;
        }
    }
    return runner + "[" + std::to_string(pid) + "]";
}

struct ProcessSessions::Tracked {
    std::uint64_t id = 0;
    std::uint32_t flags = 0;
    pid_t root = 0;
    UniqueFd pidfd;  // closed once the root is known to be gone
    std::string name;
    std::string command;
    SessionSummary tally;     // its refusals so far
    bool summarised = false;  // the root exited; its record is journalled
};

ProcessSessions::ProcessSessions(const PinnedMaps& maps) : maps_(maps), journal_(false) {
    sweep_test_logs();
}

// The plugin's per-pid logs of processes that are gone: a later process
// with the same number starts its own, and /run must not fill up.
void ProcessSessions::sweep_test_logs() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(paths::kTestLogByPidDir, ec)) {
        auto pid = parse_pid(e.path().filename().string());
        if (!pid || (::kill(*pid, 0) != 0 && errno == ESRCH)) ::unlink(e.path().c_str());
    }
}

void ProcessSessions::count(std::uint64_t id, const std::string& line) {
    auto it = tracked_.find(id);
    if (it == tracked_.end()) return;
    SessionSummary one = summarise_session({line}, id);
    SessionSummary& t = it->second->tally;
    t.total += one.total;
    t.oom_killed += one.oom_killed;
    t.audited |= one.audited;
    for (const auto& [hook, n] : one.per_hook) t.per_hook[hook] += n;
    for (auto& c : one.culprits)
        if (t.culprits.size() < 5) t.culprits.push_back(std::move(c));
}

void ProcessSessions::read_journal() {
    for (const auto& line : journal_.read_new()) {
        auto record = parse_journal_record(line);
        if (const auto* e = record ? std::get_if<JournalEvent>(&record->body) : nullptr)
            count(e->session_cgroup_id, line);
        else if (const auto* r = record ? std::get_if<JournalRepeats>(&record->body) : nullptr)
            count(r->of.session_cgroup_id, line);
    }
}

ProcessSessions::~ProcessSessions() = default;

void ProcessSessions::apply_policy(const Policy& policy) {
    SessionRegistry registry(maps_.sessions.get(), maps_.settings.get(), maps_.members.get());
    // The overflow session first: an exec the names match must always
    // have a session to join.
    if (!policy.auto_sessions.empty()) {
        registry.ensure_overflow_session();
        try {
            write_session_info(LG_SESSION_OVERFLOW, SessionInfo{"overflow", "", 0});
        } catch (const std::exception& e) {
            watcher_log(std::string("warning: ") + e.what());
        }
    }
    AutoNames(maps_.auto_names.get(), maps_.settings.get()).set(policy.auto_sessions);
    auto_on_ = !policy.auto_sessions.empty();
    reap_ = policy.reap;
}

void ProcessSessions::adopt(std::uint64_t id, pid_t root, const std::string& name) {
    if (tracked_.count(id)) return;
    auto t = std::make_unique<Tracked>();
    t->id = id;
    t->flags = LG_SESSION_RUN;
    t->root = root;
    t->pidfd = open_pidfd(root);
    t->name = name;
    t->command = join(command_line_of(root));
    // The root waits for the broker's answer: nothing of it runs unranked.
    rank_members(*t);
    tracked_[id] = std::move(t);
}

void ProcessSessions::rank_members(const Tracked& t) {
    // A child is listed in /proc, with its parent's old score, a moment
    // before the kernel marks it a member: a round that ranks nothing is
    // trusted only after a pause and one more.
    bool clean_once = false;
    for (int round = 0; round < kRankRounds; ++round) {
        std::size_t ranked = 0;
        for (const auto& m : find_members(maps_.members.get(), maps_.protected_tasks.get(), t.id).members) {
            if (m.is_protected) continue;
            try {
                if (rank_first_for_oom(m.process.pid, m.pidfd.get()) == OomRank::Ranked) ++ranked;
            } catch (const std::exception& e) {
                watcher_log("warning: session " + t.name + ": cannot rank process " +
                            std::to_string(m.process.pid) + " first for the OOM killer: " + e.what());
            }
        }
        if (ranked == 0 && clean_once) return;
        clean_once = ranked == 0;
        if (clean_once) std::this_thread::sleep_for(kRankPause);
    }
    watcher_log("warning: session " + t.name + ": members still forked unranked ones after " +
                std::to_string(kRankRounds) + " rounds of ranking them first for the OOM killer");
}

void ProcessSessions::discover() {
    std::set<std::uint64_t> present;
    for (const auto& [id, info] : list_u64_map<lg_session>(maps_.sessions.get(), LG_MAX_SESSIONS)) {
        if (!is_process_session_id(id) || id == LG_SESSION_OVERFLOW) continue;
        present.insert(id);
        if (tracked_.count(id)) continue;
        auto t = std::make_unique<Tracked>();
        t->id = id;
        t->flags = info.flags;
        t->root = static_cast<pid_t>(info.root_pid);
        t->pidfd = open_pidfd(t->root);
        if (!t->pidfd && !gone(errno)) {
            watcher_log(errno_message("warning: cannot watch session root " + std::to_string(t->root) +
                                          "; will try again",
                                      errno));
            continue;
        }
        // The pid names the root only while it still carries this
        // session's mark: otherwise the root is gone and the number reused.
        if (t->pidfd) {
            lg_member m{};
            int key = t->pidfd.get();
            if (bpf_map_lookup_elem(maps_.members.get(), &key, &m) != 0 || m.session_cgroup_id != id)
                t->pidfd.reset();
        }
        auto argv = t->pidfd ? command_line_of(t->root) : std::vector<std::string>{};
        t->command = join(argv);
        auto info_file = read_session_info(id);
        if (info_file) {
            t->name = info_file->name;
        } else {
            t->name = automatic_session_name(argv, t->root);
            try {
                write_session_info(id, SessionInfo{t->name, "", t->root});
            } catch (const std::exception& e) {
                watcher_log(std::string("warning: ") + e.what());
            }
        }
        watcher_log("session " + t->name + " started" + (t->command.empty() ? "" : ": " + t->command));
        rank_members(*t);
        tracked_[id] = std::move(t);
    }
    // Sessions something else ended (unload, a root `untag`); a walk of
    // a changing map can miss a key, so each is asked for once more.
    for (auto it = tracked_.begin(); it != tracked_.end();) {
        lg_session info{};
        std::uint64_t key = it->first;
        if (!present.count(key) && bpf_map_lookup_elem(maps_.sessions.get(), &key, &info) != 0)
            it = tracked_.erase(it);
        else
            ++it;
    }
}

std::vector<int> ProcessSessions::fds() const {
    std::vector<int> out;
    for (const auto& [id, t] : tracked_)
        if (t->pidfd && !t->summarised) out.push_back(t->pidfd.get());
    return out;
}

void ProcessSessions::tick() {
    try {
        discover();
        read_journal();
        std::vector<std::uint64_t> over;
        for (auto& [id, t] : tracked_) {
            if (t->summarised) continue;
            bool exited = !t->pidfd;
            if (!exited) {
                struct pollfd p = {t->pidfd.get(), POLLIN, 0};
                exited = ::poll(&p, 1, 0) == 1;
            }
            if (exited) over.push_back(id);
        }
        for (auto id : over) end(*tracked_.at(id));
        if (!over.empty()) sweep_test_logs();
        finish_lingering();
    } catch (const std::exception& e) {
        watcher_log(std::string("error: tracking sessions: ") + e.what());
    }
}

void ProcessSessions::end(Tracked& t) {
    int sessions_fd = maps_.sessions.get(), members_fd = maps_.members.get();
    int protected_fd = maps_.protected_tasks.get();
    JournalSessionEnd rec;
    // What the session refused up to now; the daemon collected the ring
    // buffer just before this tick.
    if (before_end_) before_end_();
    read_journal();
    // The root's pidfd is done with whatever follows fails: a readable
    // pidfd left in the poll set would spin the loop.
    t.pidfd.reset();
    bool empty = false;
    std::set<pid_t> seen;
    for (int round = 0; round < (reap_ ? kReapRounds : 1); ++round) {
        MemberScan scan = find_members(members_fd, protected_fd, t.id);
        std::size_t killable = 0;
        for (auto& m : scan.members) {
            // A protected process a test started (the real service, say) is
            // never killed by the reaper: it stays a member until it exits.
            bool kill = reap_ && !m.is_protected;
            if (kill) {
                ++killable;
                ::syscall(SYS_pidfd_send_signal, m.pidfd.get(), SIGKILL, nullptr, 0);
            }
            if (!seen.insert(m.process.pid).second) continue;
            auto& list = kill ? rec.reaped : rec.left_running;
            list.push_back({static_cast<std::uint32_t>(m.process.pid), m.process.command});
            watcher_log("session " + t.name + (kill ? ": reaped " : ": left running: ") +
                        std::to_string(m.process.pid) + " " + m.process.command);
        }
        if (scan.members.empty() && scan.complete) {
            empty = true;
            break;
        }
        if (!killable) break;
        std::this_thread::sleep_for(kReapPause);
    }
    const SessionSummary& s = t.tally;
    JournalSessionEnd filled =
        session_end_record(s, t.id, t.name, static_cast<std::uint32_t>(t.root), t.command);
    filled.reaped = std::move(rec.reaped);
    filled.left_running = std::move(rec.left_running);
    rec = std::move(filled);
    journal_append(write_journal_record({rec}));
    send_to_journald(JournalRecord{rec});
    watcher_log("session " + t.name + " ended: " + std::to_string(s.total) + " refused, " +
                std::to_string(rec.reaped.size()) + " reaped");
    t.summarised = true;
    // Members left running stay members: the session ends with its last.
    if (empty) {
        SessionRegistry(sessions_fd, maps_.settings.get(), members_fd).untag_id(t.id);
        remove_session_info(t.id);
        tracked_.erase(t.id);
    }
}

void ProcessSessions::finish_lingering() {
    for (auto it = tracked_.begin(); it != tracked_.end();) {
        Tracked& t = *it->second;
        if (!t.summarised) {
            ++it;
            continue;
        }
        MemberScan scan = find_members(maps_.members.get(), maps_.protected_tasks.get(), t.id);
        if (reap_)
            for (auto& m : scan.members)
                if (!m.is_protected) ::syscall(SYS_pidfd_send_signal, m.pidfd.get(), SIGKILL, nullptr, 0);
        if (!scan.members.empty() || !scan.complete) {
            ++it;
            continue;
        }
        SessionRegistry(maps_.sessions.get(), maps_.settings.get(), maps_.members.get()).untag_id(t.id);
        remove_session_info(t.id);
        watcher_log("session " + t.name + ": its last member is gone");
        it = tracked_.erase(it);
    }
}

}  // namespace liveguard
