#include "kernel/session_registry.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fd.h"
#include "base/paths.h"
#include "base/proc.h"
#include "kernel/map_walk.h"
#include "kernel/session_limits.h"

namespace liveguard {

TagOutcome SessionRegistry::tag(const std::string& mount, const std::string& dir,
                                std::uint64_t* id_out) {
    require_cgroup2_dir(dir);
    int level = cgroup_level(mount, dir);
    if (level == 0)
        throw Error("refusing to tag the root cgroup: every process would become a session member",
                    "create a cgroup for the session (mkdir " + mount + "/tests) and tag that");
    if (level >= LG_MAX_CGROUP_LEVEL)
        throw Error(dir + " is nested " + std::to_string(level) + " levels deep; the guard looks " +
                        std::to_string(LG_MAX_CGROUP_LEVEL - 1) + " levels up at most",
                    "tag a cgroup closer to the root");
    std::uint64_t id = cgroup_id_of(dir);
    if (id_out) *id_out = id;
    lg_session s{};
    s.since_ns = realtime_now_ns();
    if (bpf_map_update_elem(fd_, &id, &s, BPF_NOEXIST) != 0) {
        int e = errno;
        // Marked again: a `tag` interrupted before it marked everything
        // is finished by the next.
        if (e == EEXIST) {
            mark_members(mount, dir, id);
            return TagOutcome::AlreadyTagged;
        }
        if (e == E2BIG)
            throw Error("too many tagged cgroups (" + std::to_string(LG_MAX_SESSIONS) + ")",
                        "untag sessions that ended (see `liveguard-bpf status`)");
        throw_errno("cannot tag " + dir, e);
    }
    sync_count();
    try {
        mark_members(mount, dir, id);
    } catch (...) {
        try {
            untag_id(id);
        } catch (const std::exception&) {
            // the marking error is the one to report
        }
        throw;
    }
    return TagOutcome::Tagged;
}

namespace {

std::vector<pid_t> pids_in(const std::string& text) {
    std::vector<pid_t> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto end = text.find('\n', pos);
        if (auto pid = parse_pid(std::string_view(text).substr(pos, end - pos))) out.push_back(*pid);
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return out;
}

// The process thread `tid` belongs to, or nothing once it is gone.
std::optional<pid_t> process_of_thread(pid_t tid) {
    auto status = read_small_file("/proc/" + std::to_string(tid) + "/status", 1 << 16);
    if (!status) return std::nullopt;
    auto at = status->find("\nTgid:");
    if (at == std::string::npos) return std::nullopt;
    auto end = status->find('\n', at + 6);
    std::string_view v = std::string_view(*status).substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    return parse_pid(v);
}

// The processes listed in `dir`'s cgroup.procs and in those of every
// cgroup below it; for a threaded cgroup, which lists no processes, the
// processes of the threads it lists. A cgroup removed meanwhile lists
// nothing.
std::vector<pid_t> processes_below(const std::string& dir) {
    std::vector<pid_t> out;
    auto add = [&out](const std::string& cg) {
        if (auto procs = read_small_file(cg + "/cgroup.procs", 64 << 20)) {
            for (pid_t p : pids_in(*procs)) out.push_back(p);
            return;
        }
        if (auto threads = read_small_file(cg + "/cgroup.threads", 64 << 20))
            for (pid_t t : pids_in(*threads))
                if (auto p = process_of_thread(t)) out.push_back(*p);
    };
    add(dir);
    std::error_code ec;
    namespace fs = std::filesystem;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec))
        if (it->is_directory(ec) && !it->is_symlink(ec)) add(it->path().string());
    return out;
}

}  // namespace

// The kernel marks whoever arrives in a tagged cgroup after the tag (born
// there, or moved in); what was there before is marked here. A process
// born while the tag was made is marked by the kernel or listed here: the
// kernel marks it after it is listed in its cgroup. A second pass finds
// nothing new unless that reasoning is wrong, and then marks what it finds.
void SessionRegistry::mark_members(const std::string& mount, const std::string& dir, std::uint64_t id) {
    if (members_fd_ < 0) throw Error("internal: the registry was opened without the member marks");
    std::set<pid_t> done;
    for (int pass = 0; pass < 8; ++pass) {
        bool found = false;
        for (pid_t pid : processes_below(dir)) {
            if (!done.insert(pid).second) continue;
            found = true;
            UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
            if (!pidfd) {
                // Gone, or the number now names a thread of another process.
                if (errno == ESRCH || errno == EINVAL) continue;
                throw_errno("cannot open process " + std::to_string(pid) + " of " + dir, errno);
            }
            // The number was read before the process was opened: a process
            // that shows another cgroup is a newcomer under a reused number.
            // One whose cgroup cannot be read is taken as listed.
            auto where = cgroup_dir_of(mount, pid);
            if (where && *where != dir && where->rfind(dir + "/", 0) != 0) continue;
            if (marked_session_of(members_fd_, pidfd.get()) != 0) continue;  // a member already
            lg_member m{};
            m.session_cgroup_id = id;
            m.since_boot_ns = boottime_now_ns();
            // ENOENT/ESRCH: it exited after it was opened.
            if (bpf_map_update_elem(members_fd_, &pidfd, &m, BPF_ANY) != 0 && errno != ESRCH && errno != ENOENT)
                throw_errno("cannot make process " + std::to_string(pid) + " of " + dir +
                                " a session member, so the tag would not cover it",
                            errno, "try again; the tag was taken back");
        }
        if (!found) return;
    }
}

bool SessionRegistry::untag(const std::string& dir) {
    require_cgroup2_dir(dir);
    return untag_id(cgroup_id_of(dir));
}

bool SessionRegistry::untag_id(std::uint64_t id) {
    if (bpf_map_delete_elem(fd_, &id) != 0) {
        if (errno == ENOENT) return false;
        throw_errno("cannot untag cgroup " + std::to_string(id), errno);
    }
    forget_session_tasks(id);
    sync_count();
    return true;
}

std::vector<TaggedCgroup> SessionRegistry::list() const {
    std::vector<TaggedCgroup> out;
    for (const auto& [id, info] : list_u64_map<lg_session>(fd_, LG_MAX_SESSIONS)) out.push_back({id, info});
    return out;
}

std::uint64_t SessionRegistry::start_process_session(int pidfd, pid_t pid, std::uint32_t flags) {
    if (members_fd_ < 0) throw Error("internal: the registry was opened without the member marks");
    std::uint64_t id = 0;
    lg_session s{};
    s.since_ns = realtime_now_ns();
    s.flags = flags;
    s.root_pid = static_cast<std::uint32_t>(pid);
    for (int attempt = 0;; ++attempt) {
        id = LG_SESSION_PROCESS_BIT | (boottime_now_ns() + static_cast<std::uint64_t>(attempt));
        if (id == LG_SESSION_OVERFLOW) continue;
        if (bpf_map_update_elem(fd_, &id, &s, BPF_NOEXIST) == 0) break;
        int e = errno;
        if (e == EEXIST && attempt < 16) continue;
        if (e == E2BIG)
            throw Error("too many sessions (" + std::to_string(LG_MAX_SESSIONS) + ")",
                        "end sessions that are over (see `liveguard-bpf status`)");
        throw_errno("cannot record a new session", e);
    }
    lg_member m{};
    m.session_cgroup_id = id;
    m.since_boot_ns = boottime_now_ns();
    if (bpf_map_update_elem(members_fd_, &pidfd, &m, BPF_ANY) != 0) {
        int e = errno;
        bpf_map_delete_elem(fd_, &id);
        throw_errno("cannot make process " + std::to_string(pid) + " a session member", e);
    }
    sync_count();
    return id;
}

std::uint64_t SessionRegistry::marked_session_of(int members_fd, int pidfd) const {
    lg_member m{};
    if (bpf_map_lookup_elem(members_fd, &pidfd, &m) != 0) return 0;
    lg_session s{};
    if (bpf_map_lookup_elem(fd_, &m.session_cgroup_id, &s) != 0) return 0;
    return m.session_cgroup_id;
}

bool SessionRegistry::has_member(const std::string& mount, int members_fd, pid_t pid) const {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd) return false;
    if (marked_session_of(members_fd, pidfd.get()) != 0) return true;
    auto dir = cgroup_dir_of(mount, pid);
    if (!dir) return false;
    for (std::string d = *dir; d.size() > mount.size();) {
        std::uint64_t id = 0;
        try {
            id = cgroup_id_of(d);
        } catch (const std::exception&) {
            return false;  // moved or removed meanwhile
        }
        lg_session s{};
        if (bpf_map_lookup_elem(fd_, &id, &s) == 0) return true;
        d.resize(d.rfind('/'));
    }
    return false;
}

void SessionRegistry::ensure_overflow_session() {
    std::uint64_t id = LG_SESSION_OVERFLOW;
    lg_session s{};
    s.since_ns = realtime_now_ns();
    s.flags = LG_SESSION_OVERFLOW_F;
    if (bpf_map_update_elem(fd_, &id, &s, BPF_NOEXIST) != 0 && errno != EEXIST)
        throw_errno("cannot record the overflow session", errno);
    sync_count();
}

void SessionRegistry::sync_count() {
    // Each writer counts after its own change, and counts and writes under
    // the lock: the last count written is never older than the last change.
    ::mkdir(paths::kStateDir, 0755);
    UniqueFd lock(::open(paths::kSessionsLock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (lock) while (::flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {}
    write_setting(settings_fd_, LG_SETTING_SESSIONS, list().size());
}

}  // namespace liveguard
