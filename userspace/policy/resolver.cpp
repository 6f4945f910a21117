#include "policy/resolver.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>

#include "base/cgroup.h"
#include "base/fd.h"
#include "base/pid_namespaces.h"
#include "base/proc.h"
#include "kernel/exec_words.h"
#include "liveguard/abi.h"
#include "policy/containers.h"
#include "policy/pidfile.h"
#include "policy/pipe_readers.h"
#include "policy/s6_status.h"

namespace liveguard {
namespace {

constexpr std::size_t kMaxPidFileBytes = 64 * 1024;
// A protected tree's files with hard links are guarded one by one (up to
// this many), found in a walk of at most kMaxTreeEntries entries.
constexpr std::size_t kMaxHardLinked = 512;
constexpr std::size_t kMaxTreeEntries = 200000;

bool has_wildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

std::vector<std::string> split_path(const std::string& p) {
    std::vector<std::string> parts;
    std::size_t pos = 1;
    while (pos <= p.size()) {
        auto end = p.find('/', pos);
        if (end == std::string::npos) end = p.size();
        if (end > pos) parts.push_back(p.substr(pos, end - pos));
        pos = end + 1;
    }
    return parts;
}

// Reads a small file without following a final symlink and without
// blocking on a FIFO; explains what is wrong otherwise.
std::optional<std::string> read_plain_file(const std::string& path, std::size_t max,
                                           std::string& warning, bool& missing) {
    missing = false;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
    if (!fd) {
        if (errno == ENOENT) missing = true;
        else if (errno == ELOOP) warning = path + ": is a symlink; not followed";
        else warning = path + ": cannot be read: " + std::strerror(errno);
        return std::nullopt;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        warning = path + ": not a regular file; ignored";
        return std::nullopt;
    }
    if (static_cast<std::size_t>(st.st_size) > max) {
        warning = path + ": " + std::to_string(st.st_size) + " bytes, too large; ignored";
        return std::nullopt;
    }
    std::string out(max + 1, '\0');
    std::size_t got = 0;
    for (;;) {
        ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            warning = path + ": read failed: " + std::strerror(errno);
            return std::nullopt;
        }
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
        if (got > max) {
            warning = path + ": grew too large while read; ignored";
            return std::nullopt;
        }
    }
    out.resize(got);
    return out;
}

// The s6-supervise process running in `service_dir`: s6-supervise changes
// into its service directory, so its cwd is that directory. Compared as
// files, not names: in a container the name it has there is not the one
// the host reaches it by (/proc/<pid>/root/...).
std::optional<pid_t> find_s6_supervise(const std::string& service_dir) {
    struct stat want {};
    if (::stat(service_dir.c_str(), &want) != 0) return std::nullopt;
    std::optional<pid_t> orphan;
    for (pid_t pid : list_pids()) {
        auto comm = read_small_file("/proc/" + std::to_string(pid) + "/comm", 64);
        if (!comm || comm->rfind("s6-supervise", 0) != 0) continue;
        struct stat cwd {};
        if (::stat(("/proc/" + std::to_string(pid) + "/cwd").c_str(), &cwd) != 0 || cwd.st_dev != want.st_dev ||
            cwd.st_ino != want.st_ino)
            continue;
        // One started by s6-svscan first: a process merely named
        // s6-supervise in the directory is the last choice (an s6-supervise
        // whose s6-svscan died is one too).
        auto st = read_proc_stat(pid);
        auto parent = st && st->ppid > 0 ? read_proc_stat(st->ppid) : std::nullopt;
        if (parent && parent->comm.rfind("s6-svscan", 0) == 0) return pid;
        if (!orphan) orphan = pid;
    }
    return orphan;
}

// One s6-supervised directory (a service, or its log service): its
// s6-supervise, whose children inherit protection so a restart is covered,
// the process it runs now, and the control FIFO both answer to. Returns the
// s6-supervise's pid when it runs.
// Its pids are numbered in s6-supervise's PID namespace, or, when no
// s6-supervise runs, in `ns_member`'s (0: the host's).
std::optional<pid_t> resolve_s6_supervised(const std::string& dir, const std::string& what, Resolution& r,
                                           pid_t ns_member) {
    watch(r.watch_dirs, dir, kAnyName);
    std::string sup = dir + "/supervise";
    // s6-svc and a plain write both go through this FIFO.
    r.guarded_files.emplace_back(sup + "/control", LG_INODE_SUPERVISE_CONTROL);
    if (::access(sup.c_str(), F_OK) == 0) watch(r.watch_dirs, sup, kAnyName);
    auto supervise = find_s6_supervise(dir);
    if (supervise) {
        r.processes.push_back({*supervise, true, "s6-supervise of " + dir});
        r.processes.back().ns_pid = inner_pid(*supervise).value_or(0);
    }
    else
        r.retry = true;  // s6-svscan has not started it yet
    std::string warning;
    bool missing = false;
    auto bytes = read_plain_file(sup + "/status", 64, warning, missing);
    if (!bytes) {
        if (!warning.empty()) r.warnings.push_back(warning);
        return supervise;
    }
    auto status = parse_s6_status(*bytes);
    if (!status)
        r.warnings.push_back(sup + "/status: not an s6 status file (" + std::to_string(bytes->size()) +
                             " bytes)");
    else if (status->pid) {
        // s6-supervise writes its child's pid as its own namespace numbers it.
        pid_t numbering = supervise ? *supervise : ns_member;
        if (numbering == 0 || !inner_pid(numbering))
            r.processes.push_back({*status->pid, false, what + " " + dir});
        else if (auto child = find_in_pid_ns(numbering, *status->pid)) {
            r.processes.push_back({child->host_pid, false, what + " " + dir});
            r.processes.back().ns_pid = child->ns_pid;
        }
    }
    return supervise;
}

// The s6-svscan that started `supervise`: it restarts an s6-supervise
// that dies, and without it nothing would. Not inherited: its other
// children are services the policy may not name.
void resolve_s6_svscan(pid_t supervise, const std::string& scandir, Resolution& r) {
    auto st = read_proc_stat(supervise);
    if (!st) {
        r.retry = true;  // exited as we looked: the next pass finds its successor
        return;
    }
    std::string who = "s6-supervise " + std::to_string(supervise) + " of a service in " + scandir;
    if (st->ppid <= 0) {
        r.warnings.push_back(who + ": its parent is outside this PID namespace; s6-svscan not protected");
        return;
    }
    auto parent = read_proc_stat(st->ppid);
    if (!parent) {
        r.retry = true;  // the parent exited: it is being reparented
        return;
    }
    if (parent->comm.rfind("s6-svscan", 0) != 0) {
        r.warnings.push_back(who + ": its parent, pid " + std::to_string(parent->pid) + " (" + parent->comm +
                             "), is not s6-svscan; not protected");
        return;
    }
    std::string why = "s6-svscan of " + scandir;
    // Every service of a glob in one scan directory leads here.
    for (const auto& p : r.processes)
        if (p.pid == parent->pid && p.why == why) return;
    r.processes.push_back({parent->pid, false, why});
    r.processes.back().ns_pid = inner_pid(parent->pid).value_or(0);
}

void walk_cgroups(const std::string& dir, int depth, const std::string& unit_glob, Resolution& r) {
    if (depth > 12) return;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    watch(r.watch_dirs, dir, kAnyName);
    std::vector<std::string> subdirs;
    while (auto* e = ::readdir(d)) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        subdirs.emplace_back(e->d_name);
    }
    ::closedir(d);
    for (const auto& name : subdirs) {
        std::string path = dir + "/" + name;
        if (::fnmatch(unit_glob.c_str(), name.c_str(), 0) == 0) {
            try {
                r.cgroups.emplace_back(cgroup_id_of(path), path);
            } catch (const std::exception&) {
                // removed while we looked: the next event rescans
            }
            continue;  // a unit's own sub-cgroups are inside its protection
        }
        walk_cgroups(path, depth + 1, unit_glob, r);
    }
}

// Whether `path`, below a container's root (/proc/<pid>/root), goes
// through no symbolic link there: the host would follow an absolute one
// to its own files, not the container's.
bool inside_root(const std::string& root, const std::string& path, Resolution& r) {
    if (root.empty()) return true;
    std::string at = root;
    for (const auto& part : split_path(path.substr(root.size()))) {
        at += "/" + part;
        struct stat st {};
        if (::lstat(at.c_str(), &st) != 0) return false;  // gone since the glob
        if (S_ISLNK(st.st_mode)) {
            r.warnings.push_back(path + ": " + at.substr(root.size()) +
                                 " is a symbolic link in the container; not followed (name the path it leads to)");
            return false;
        }
    }
    return true;
}

// The paths `pattern` matches now, each an instance of the target (and,
// with `watch_name`, watched by its own name), less those that leave the
// container's root.
std::vector<std::string> matched_paths(const std::string& pattern, const std::string& root, bool watch_name,
                                       Resolution& r) {
    for (auto& [d, names] : glob_watch_dirs(pattern)) r.watch_dirs[d].insert(names.begin(), names.end());
    std::vector<std::string> out;
    for (const auto& path : expand_glob(pattern)) {
        r.instances.push_back(path);
        if (watch_name)
            watch(r.watch_dirs, std::filesystem::path(path).parent_path().string(),
                  std::filesystem::path(path).filename().string());
        if (inside_root(root, path, r)) out.push_back(path);
    }
    return out;
}

// A pidfile, s6 or path target's pattern, as the host reaches it
// (`pattern`), its numbers those of `ns_member`'s PID namespace when given,
// below `root` when it is a container's.
void resolve_files(const ProtectTarget& t, const std::string& pattern, pid_t ns_member, Resolution& r,
                   const std::string& root) {
    switch (t.kind) {
        case TargetKind::PidFile:
            for (const auto& path : matched_paths(pattern, root, true, r)) {
                auto o = read_pid_file(path, ns_member);
                if (o.pid) {
                    r.processes.push_back({*o.pid, false, "pid file " + path});
                    r.processes.back().named_by_file = path;
                    r.processes.back().ns_pid = o.ns_pid;
                    // A PID file rewritten by a test points the service's
                    // own tooling (stop, --replace) at the wrong process.
                    // Guarded once it names one: an empty file being
                    // written is not the live service's yet.
                    r.guarded_files.emplace_back(path, LG_INODE_PROTECTED_FILE);
                }
                if (!o.warning.empty()) r.warnings.push_back(o.warning);
                r.retry |= o.retry;
            }
            break;
        case TargetKind::S6:
            for (const auto& dir : matched_paths(pattern, root, false, r)) {
                // The scan directory's own FIFO can stop every service in it.
                std::string scandir = std::filesystem::path(dir).parent_path().string();
                // s6-svscan started after the watcher makes it here.
                watch(r.watch_dirs, scandir, ".s6-svscan");
                if (::access((scandir + "/.s6-svscan").c_str(), F_OK) == 0) {
                    watch(r.watch_dirs, scandir + "/.s6-svscan", kAnyName);
                    r.guarded_files.emplace_back(scandir + "/.s6-svscan/control", LG_INODE_SVSCAN_CONTROL);
                    for (auto& w : path_words(scandir, false)) r.exec_words.emplace_back(w, LG_WORD_S6_SCANDIR);
                }
                for (auto& w : path_words(dir, true)) r.exec_words.emplace_back(w, LG_WORD_S6_SERVICE);
                // Its run script, its down file, its env: what the next
                // start runs. (Its event/ directory stays open to members:
                // s6-svwait waits there without changing anything.)
                r.guarded_files.emplace_back(dir, LG_INODE_PROTECTED_TREE);
                if (struct stat entry {}; ::lstat(dir.c_str(), &entry) == 0 && S_ISLNK(entry.st_mode))
                    r.guarded_links.push_back(dir);
                if (auto supervise = resolve_s6_supervised(dir, "s6 service", r, ns_member))
                    resolve_s6_svscan(*supervise, scandir, r);
                // s6-svscan runs a service's log/ beside it, piped to it: a
                // service whose logger dies blocks on a full pipe.
                struct stat log_st {};
                std::string log_dir = dir + "/log";
                if (::stat(log_dir.c_str(), &log_st) == 0 && S_ISDIR(log_st.st_mode))
                    resolve_s6_supervised(log_dir, "s6 log service", r, ns_member);
            }
            break;
        case TargetKind::Path:
            // (Watched by name: a new directory at the same path is a new inode.)
            for (const auto& path : matched_paths(pattern, root, true, r)) {
                struct stat st {};
                if (::stat(path.c_str(), &st) != 0) continue;  // gone since the glob
                if (S_ISREG(st.st_mode)) {
                    r.guarded_files.emplace_back(path, LG_INODE_PROTECTED_FILE);
                    continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                    r.warnings.push_back(t.describe() + ": " + path + " is neither a directory nor a regular file; not protected");
                    continue;
                }
                r.guarded_files.emplace_back(path, LG_INODE_PROTECTED_TREE);
                bool truncated = false;
                for (auto& f : hard_linked_files(path, kMaxHardLinked, truncated))
                    r.guarded_files.emplace_back(std::move(f), LG_INODE_PROTECTED_FILE);
                if (truncated)
                    r.warnings.push_back(t.describe() + ": more than " + std::to_string(kMaxHardLinked) +
                                         " files with hard links below " + path +
                                         "; the others are protected under their names in it only");
            }
            break;
        default: break;
    }
}

// The process whose root a /proc/<pid>/root/... path goes through: its
// files hold the numbers of its PID namespace.
pid_t proc_root_owner(const std::string& pattern) {
    constexpr std::string_view kProc = "/proc/";
    if (pattern.rfind(kProc, 0) != 0) return 0;
    auto slash = pattern.find('/', kProc.size());
    if (slash == std::string::npos || pattern.compare(slash, 6, "/root/") != 0) return 0;
    return parse_pid(std::string_view(pattern).substr(kProc.size(), slash - kProc.size())).value_or(0);
}

void resolve_container(const ProtectTarget& t, const std::string& cgroup_mount, Resolution& r) {
    for (const auto& c : find_containers(cgroup_mount, r.watch_dirs)) {
        if (!container_matches(c, t.pattern)) continue;
        r.instances.push_back(describe(c) + ", cgroup " + c.cgroup);
        r.cgroups.emplace_back(c.cgroup_id, c.cgroup);
    }
}

// A pattern written as the matching containers see it, resolved through
// each one's root and in its PID namespace.
void resolve_in_containers(const ProtectTarget& t, const std::string& cgroup_mount, Resolution& r) {
    bool any = false;
    for (const auto& c : find_containers(cgroup_mount, r.watch_dirs)) {
        if (!container_matches(c, t.container)) continue;
        any = true;
        if (c.init <= 0) continue;  // not started: its cgroup.events wakes the watcher
        std::size_t before = r.processes.size();
        std::string root = "/proc/" + std::to_string(c.init) + "/root";
        resolve_files(t, root + t.pattern, c.init, r, root);
        for (std::size_t i = before; i < r.processes.size(); ++i) r.processes[i].why += " in " + describe(c);
    }
    if (!any) r.warnings.push_back(t.describe() + ": no running container matches \"" + t.container + "\" yet");
}

}  // namespace

std::vector<std::string> expand_glob(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g{};
    if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    std::sort(out.begin(), out.end());
    return out;
}

void watch(WatchDirs& dirs, const std::string& dir, const std::string& name) { dirs[dir].insert(name); }

bool names_concern(const std::set<std::string>& patterns, const std::string& name) {
    for (const auto& pattern : patterns)
        if (::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
    return false;
}

bool watch_concerns(const WatchDirs& dirs, const std::string& dir, const std::string& name) {
    auto it = dirs.find(dir);
    return it == dirs.end() || names_concern(it->second, name);
}

WatchDirs glob_watch_dirs(const std::string& pattern) {
    WatchDirs dirs;
    auto parts = split_path(pattern);
    if (parts.empty()) return dirs;
    // The last wildcard-free ancestor of the file, and every directory
    // matched below it on the way down.
    std::size_t first_wild = parts.size() - 1;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
        if (has_wildcard(parts[i])) {
            first_wild = i;
            break;
        }
    std::string prefix;
    for (std::size_t i = 0; i < first_wild; ++i) prefix += "/" + parts[i];
    if (prefix.empty()) prefix = "/";
    // When that ancestor does not exist yet, watch the nearest one that does.
    std::string existing = prefix;
    // (Any name there: it is the one on the way down that matters, and a
    // missing ancestor is no busy directory.)
    while (existing != "/" && ::access(existing.c_str(), F_OK) != 0)
        existing = std::filesystem::path(existing).parent_path().string();
    watch(dirs, existing, existing == prefix ? parts[first_wild] : kAnyName);
    std::string level = prefix == "/" ? "" : prefix;
    for (std::size_t i = first_wild; i + 1 < parts.size(); ++i) {
        level += "/" + parts[i];
        for (const auto& d : expand_glob(level)) {
            struct stat st {};
            if (::stat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) watch(dirs, d, parts[i + 1]);
        }
    }
    return dirs;
}

PidFileOutcome read_pid_file(const std::string& path, pid_t ns_member) {
    PidFileOutcome o;
    bool missing = false;
    auto text = read_plain_file(path, kMaxPidFileBytes, o.warning, missing);
    if (!text) return o;  // missing: nothing to do; else the warning says why
    auto parsed = parse_pid_file(*text);
    if (auto* problem = std::get_if<PidFileProblem>(&parsed)) {
        if (*problem == PidFileProblem::Malformed)
            o.warning = path + ": " + describe(*problem);
        else
            o.retry = true;  // being written: look again shortly
        return o;
    }
    const auto& rec = std::get<PidFileRecord>(parsed);
    auto stale = [&](std::uint64_t started) {
        o.warning = path + ": names pid " + std::to_string(rec.pid) + " with start_time " +
                    std::to_string(*rec.start_time) + ", but that process started at " + std::to_string(started) +
                    " (stale file or reused PID); not protected";
    };
    if (ns_member > 0 && inner_pid(ns_member)) {
        auto found = find_in_pid_ns(ns_member, rec.pid);
        if (!found) return o;  // gone: a stale file
        auto st = read_proc_stat(found->host_pid);
        if (!st) return o;
        if (rec.start_time && *rec.start_time != st->start_ticks) {
            stale(st->start_ticks);
            return o;
        }
        o.pid = found->host_pid;
        o.ns_pid = rec.pid;
        return o;
    }
    auto st = read_proc_stat(rec.pid);
    if (st && (!rec.start_time || *rec.start_time == st->start_ticks)) {
        o.pid = rec.pid;
        return o;
    }
    if (!rec.start_time) return o;  // the process is gone: a stale file
    // Written inside a container: its number is the container's, and the
    // record's start time tells its process from the host's with that number.
    auto inside = find_by_ns_pid_and_start(rec.pid, *rec.start_time);
    if (inside.size() == 1) {
        o.pid = inside[0].host_pid;
        o.ns_pid = rec.pid;
        return o;
    }
    if (inside.size() > 1)
        o.warning = path + ": pid " + std::to_string(rec.pid) + " with start_time " +
                    std::to_string(*rec.start_time) + " is " + std::to_string(inside.size()) +
                    " processes in different PID namespaces; not protected (name the container: "
                    "`container = ...` in its [[protect]] table)";
    else if (st)
        stale(st->start_ticks);
    return o;
}

std::vector<std::string> hard_linked_files(const std::string& dir, std::size_t max, bool& truncated) {
    std::vector<std::string> out;
    std::error_code ec;
    // Bounded: a huge tree costs the watcher a walk per pass, not more.
    std::size_t visited = 0;
    auto it = std::filesystem::recursive_directory_iterator(
        dir, std::filesystem::directory_options::skip_permission_denied, ec);
    for (; !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (++visited > kMaxTreeEntries) {
            truncated = true;
            break;
        }
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink < 2) continue;
        if (out.size() >= max) {
            truncated = true;
            break;
        }
        out.push_back(it->path().string());
    }
    return out;
}

Resolution resolve(const ProtectTarget& t, const std::string& cgroup_mount) {
    Resolution r;
    switch (t.kind) {
        case TargetKind::Pid:
            if (read_proc_stat(t.pid)) r.processes.push_back({t.pid, false, "pid from the policy"});
            else r.warnings.push_back("pid " + std::to_string(t.pid) + ": no such process");
            break;
        case TargetKind::PidFile:
        case TargetKind::S6:
        case TargetKind::Path:
            if (!t.container.empty()) resolve_in_containers(t, cgroup_mount, r);
            else if (pid_t owner = proc_root_owner(t.pattern))
                resolve_files(t, t.pattern, owner, r, "/proc/" + std::to_string(owner) + "/root");
            else
                resolve_files(t, t.pattern, 0, r, "");
            break;
        case TargetKind::Container:
            resolve_container(t, cgroup_mount, r);
            break;
        case TargetKind::SystemdUnit:
            walk_cgroups(cgroup_mount, 0, t.pattern, r);
            for (const auto& c : r.cgroups) r.instances.push_back(c.second);
            // systemctl names units whether or not they run right now.
            if (!has_wildcard(t.pattern))
                for (auto& w : unit_words(t.pattern)) r.exec_words.emplace_back(w, LG_WORD_PROTECTED_UNIT);
            for (const auto& c : r.cgroups)
                for (auto& w : unit_words(std::filesystem::path(c.second).filename().string()))
                    r.exec_words.emplace_back(w, LG_WORD_PROTECTED_UNIT);
            break;
        case TargetKind::Cgroup:
            r.watch_dirs = glob_watch_dirs(t.pattern);
            for (const auto& dir : expand_glob(t.pattern)) {
                r.instances.push_back(dir);
                try {
                    require_cgroup2_dir(dir);
                    r.cgroups.emplace_back(cgroup_id_of(dir), dir);
                } catch (const std::exception& e) {
                    r.warnings.push_back(e.what());
                }
            }
            break;
    }
    // A service writing into a pipe dies of SIGPIPE once its last reader
    // is gone: whoever reads its output is protected with it (an s6
    // service's log service is found above, by name).
    std::vector<pid_t> services;
    std::map<pid_t, std::string> why;
    for (const auto& p : r.processes)
        if (!p.inherit) {  // a supervisor's output is its own, not the service's
            services.push_back(p.pid);
            why.emplace(p.pid, p.why);
        }
    for (const auto& reader : output_pipe_readers(services)) {
        bool known = false;
        for (const auto& q : r.processes) known |= q.pid == reader.pid;
        if (known) continue;
        r.processes.push_back({reader.pid, false,
                               std::string("reader of the ") + (reader.service_fd == 1 ? "stdout" : "stderr") +
                                   " of pid " + std::to_string(reader.service) + " (" + why[reader.service] + ")",
                               true});
    }
    return r;
}

}  // namespace liveguard
