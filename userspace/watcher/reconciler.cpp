// One reconciliation pass of the policy against the kernel's maps, and the
// inotify watches that say when another pass is due.
#include "watcher/reconciler.h"

#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/cgroup.h"
#include "base/error.h"
#include "base/proc.h"
#include "kernel/allowed_doors.h"
#include "kernel/engine_refs.h"
#include "kernel/session_limits.h"
#include "kernel/protected_ports.h"
#include "kernel/exec_words.h"
#include "kernel/guarded_inodes.h"
#include "kernel/map_walk.h"
#include "kernel/path_excepts.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"
#include "policy/containers.h"
#include "policy/resolver.h"
#include "watcher/log.h"
#include "watcher/open_files.h"
#include "watcher/watcher_state.h"

namespace liveguard {
namespace {

constexpr std::uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                                     IN_CLOSE_WRITE | IN_MODIFY | IN_DELETE_SELF | IN_ATTRIB;
constexpr std::uint32_t kCgroupWatchMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                                           IN_DELETE_SELF;

// Owners of the guarded files no target names.
const std::string kControlBinaries = "service-control binaries";
const std::string kServiceManagerSockets = "service manager sockets";
const std::string kHandoffPaths = "hand-off paths";
const std::string kEngineSockets = "container engine sockets";
// Files held open by protected processes that are guarded for locks, at
// most; and the processes of one protected cgroup whose files are read.
constexpr std::size_t kMaxHeldOpen = 1024;
constexpr std::size_t kMaxCgroupHolders = 256;
// How long a file no holder has open any more stays guarded for locks: a
// service's restart (s6 waits a second) opens its lock file again.
constexpr int kHeldOpenGraceS = 60;

std::string held_open_cap_warning() {
    return "protected processes hold more than " + std::to_string(kMaxHeldOpen) +
           " files open; members' locks on the others are not refused";
}

}  // namespace

Reconciler::Reconciler(Policy policy, PinnedMaps maps)
    : policy_(std::move(policy)),
      maps_(std::move(maps)),
      cgroups_(maps_),
      mount_(cgroup2_mount()) {
    inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!inotify_) throw_errno("cannot create an inotify instance", errno);
    struct stat st {};
    if (::stat("/proc/1/ns/net", &st) == 0) host_net_ns_ = static_cast<std::uint32_t>(st.st_ino);
}

bool Reconciler::apply() {
    Pass pass;
    WatcherState state;
    for (const auto& t : policy_.targets) apply_target(t, pass, state);
    // A package upgrade replaces a binary with a new inode.
    pass.owners.insert(kControlBinaries);
    for (const auto& b : find_control_binaries()) want_inode(pass, b.path, b.kind, 0, kControlBinaries);
    want_service_manager_sockets(pass);
    want_engine_sockets(pass);
    guard_containers_at_engines(pass, state);
    want_handoff_paths(pass);
    try {
        set_allowed_doors(maps_.allowed_doors.get(), policy_.allowed_doors);
    } catch (const std::exception& e) {
        pass.warnings.insert(std::string("allow: ") + e.what());
    }
    try {
        set_session_limits(maps_.session_limits.get(), policy_.max_tasks);
        sweep_session_tasks(maps_.session_tasks.get(), maps_.sessions.get());
    } catch (const std::exception& e) {
        pass.warnings.insert(std::string("max_tasks: ") + e.what());
    }
    try {
        PathExcepts(maps_.path_excepts.get()).set(policy_.targets);
    } catch (const std::exception& e) {
        pass.warnings.insert(std::string("except: ") + e.what());
    }
    if (!adopted_) adopt_named_files(pass);
    want_held_open(pass);
    try {
        apply_side_doors(pass);
    } catch (const std::exception& e) {
        pass.warnings.insert(std::string("side doors: ") + e.what());
    }
    try {
        count_protected_paths();
    } catch (const std::exception& e) {
        pass.warnings.insert(std::string("protected paths: ") + e.what());
    }
    forget_vanished_cgroups(pass.cgroups);
    update_watches(pass.dirs);
    // A file created in a directory between its resolution and its new
    // watch sends no event: look once more.
    pass.retry |= added_watch_;
    for (const auto& w : pass.warnings)
        if (!last_warnings_.count(w)) watcher_log("warning: " + w);
    last_warnings_ = pass.warnings;
    state.pid = ::getpid();
    state.config = policy_.path;
    state.warnings.assign(pass.warnings.begin(), pass.warnings.end());
    state.watched_dirs = dir_wd_.size();
    state.passes = ++passes_;
    write_watcher_state(state);
    return pass.retry;
}

void Reconciler::apply_target(const ProtectTarget& t, Pass& pass, WatcherState& state) {
    Resolution r = resolve(t, mount_);
    if (t.kind == TargetKind::Pid) pin_identity(t, r);
    pass.retry |= r.retry;
    for (const auto& [dir, names] : r.watch_dirs) pass.dirs[dir].insert(names.begin(), names.end());
    WatcherTarget& shown = state.targets.emplace_back();
    shown.source = t.source;
    shown.kind = kind_key(t.kind);
    shown.pattern = t.pattern;
    shown.description = t.describe();
    shown.line = t.line;
    shown.instances = r.instances;
    std::set<std::string> members_files;  // PID files that name a member
    for (const auto& p : r.processes) {
        // A test reading a service's output is no keeper of it: protected,
        // it would be out of its own session's reach.
        // Nor is a process a test started and named in a PID file: the
        // test that started it must be able to stop it.
        if ((p.pipe_reader || !p.named_by_file.empty()) &&
            SessionRegistry(maps_.sessions.get(), maps_.settings.get()).has_member(mount_, maps_.members.get(), p.pid)) {
            pass.warnings.insert(t.describe() + ": pid " + std::to_string(p.pid) + " is a " + p.why +
                                 ", but a session member; not protected");
            if (!p.named_by_file.empty()) {
                members_files.insert(p.named_by_file);
                pass.member_files.insert(p.named_by_file);
            }
            continue;
        }
        try {
            procs_add(p, t.source);
            shown.pids.push_back(p.pid);
            shown.ns_pids.push_back(p.ns_pid);
        } catch (const std::exception& e) {
            pass.warnings.insert(t.describe() + ": " + e.what());
        }
    }
    for (const auto& [id, path] : r.cgroups) {
        pass.cgroups.insert(id);
        try {
            if (cgroups_.add(id, t.source)) watcher_log("protecting cgroup " + path + " (" + t.describe() + ")");
        } catch (const std::exception& e) {
            pass.warnings.insert(t.describe() + ": " + e.what());
        }
        shown.cgroups.push_back(path);
    }
    want_ports(t, shown.pids, pass);
    for (pid_t pid : shown.pids)
        if (auto st = read_proc_stat(pid)) pass.holders.push_back({pid, st->start_ticks, {}, t.source, t.describe()});
    for (const auto& [id, path] : r.cgroups) pass.holders.push_back({0, 0, path, t.source, t.describe()});
    pass.owners.insert(t.describe());
    for (const auto& [path, kind] : r.guarded_files)
        if (!(kind == LG_INODE_PROTECTED_FILE && members_files.count(path)))
            want_inode(pass, path, kind, t.source, t.describe());
    for (const auto& link : r.guarded_links)
        want_inode(pass, link, LG_INODE_PROTECTED_FILE, t.source, t.describe(), false);
    for (const auto& [word, flag] : r.exec_words) pass.words[word] |= flag;
    pass.warnings.insert(r.warnings.begin(), r.warnings.end());
}

void Reconciler::want_ports(const ProtectTarget& t, const std::vector<pid_t>& pids, Pass& pass) {
    // The policy's ports first: they are the ones asked for by name.
    std::vector<lg_port_key> keys;
    if (host_net_ns_)
        for (auto port : t.ports)
            for (const auto& k : policy_port_keys(port, host_net_ns_)) keys.push_back(k);
    else if (!t.ports.empty())
        pass.warnings.insert(t.describe() + ": ports: the machine's network namespace is unknown (/proc/1/ns/net)");
    for (pid_t pid : pids)
        for (const auto& k : listening_ports(pid)) keys.push_back(k);
    if (keys.empty()) return;
    try {
        if (int added = protect_ports(maps_.protected_ports.get(), keys, t.source))
            watcher_log("protecting " + std::to_string(added) + " more port(s) of " + t.describe());
    } catch (const std::exception& e) {
        pass.warnings.insert(t.describe() + ": " + e.what());
    }
}

void Reconciler::want_service_manager_sockets(Pass& pass) {
    pass.owners.insert(kServiceManagerSockets);
    for (const auto& s : service_manager_sockets()) {
        std::uint32_t kind =
            s.bus && !policy_.refuse_service_manager_sockets ? LG_INODE_BUS_SOCKET : LG_INODE_SERVICE_SOCKET;
        for (const auto& [dir, names] : glob_watch_dirs(s.pattern)) pass.dirs[dir].insert(names.begin(), names.end());
        for (const auto& path : expand_glob(s.pattern)) want_inode(pass, path, kind, 0, kServiceManagerSockets);
    }
}

void Reconciler::want_engine_sockets(Pass& pass) {
    pass.owners.insert(kEngineSockets);
    for (const auto& pattern : engine_sockets()) {
        for (const auto& [dir, names] : glob_watch_dirs(pattern)) pass.dirs[dir].insert(names.begin(), names.end());
        for (const auto& path : expand_glob(pattern)) want_inode(pass, path, LG_INODE_ENGINE_SOCKET, 0, kEngineSockets);
    }
}

// A container is guarded at the engines' sockets while it holds a
// protected process or is a protected cgroup: `docker stop` of it would
// end what the policy protects, by a signal the engine sends.
void Reconciler::guard_containers_at_engines(Pass& pass, const WatcherState& state) {
    std::set<std::string> want, shown;
    try {
        std::map<std::string, Container> guarded;  // by cgroup
        auto consider = [&](const std::string& dir) {
            for (const auto& [cg, c] : guarded)
                if (dir == cg || dir.compare(0, cg.size() + 1, cg + "/") == 0) return;
            if (auto c = container_holding(mount_, dir)) guarded.emplace(c->cgroup, std::move(*c));
        };
        for (const auto& t : state.targets) {
            for (pid_t pid : t.pids)
                if (auto dir = cgroup_dir_of(mount_, pid)) consider(*dir);
            for (const auto& dir : t.cgroups) consider(dir);
        }
        std::map<std::string, std::vector<std::string>> names;
        for (auto& [dir, c] : guarded) {
            // A name read once stays the container's while it is guarded:
            // a runtime's record being rewritten must not open its name.
            if (c.names.empty() && engine_names_.count(c.id)) c.names = engine_names_[c.id];
            if (c.names.empty())
                pass.warnings.insert("container " + describe(c) +
                                     ": its name is unknown (no runtime record read); requests to its engine "
                                     "are refused by its id only");
            names[c.id] = c.names;
            auto refs = engine_refs(c.id, c.names);
            want.insert(refs.begin(), refs.end());
            shown.insert(describe(c));
        }
        engine_names_ = std::move(names);
        if (set_engine_refs(maps_.engine_refs.get(), want)) {
            std::string list;
            for (const auto& s : shown) list += (list.empty() ? "" : ", ") + s;
            watcher_log(shown.empty() ? std::string("no container guarded at the engines' API sockets")
                                      : "guarding at the engines' API sockets: " + list);
        }
    } catch (const std::exception& e) {
        pass.warnings.insert(std::string("engine sockets: ") + e.what());
    }
}

// A spool or job directory is guarded as a protected tree, a file as a
// protected file, a socket as a service socket (no connect), a FIFO as a
// control FIFO (no writer): whatever a runner outside the session picks
// up from there, no member may leave.
void Reconciler::want_handoff_paths(Pass& pass) {
    pass.owners.insert(kHandoffPaths);
    for (const auto& pattern : policy_.handoff) {
        for (const auto& [dir, names] : glob_watch_dirs(pattern)) pass.dirs[dir].insert(names.begin(), names.end());
        for (const auto& path : expand_glob(pattern)) {
            struct stat st {};
            if (::stat(path.c_str(), &st) != 0) continue;  // gone since the glob
            std::uint32_t kind = S_ISDIR(st.st_mode)    ? LG_INODE_PROTECTED_TREE
                                 : S_ISREG(st.st_mode)  ? LG_INODE_PROTECTED_FILE
                                 : S_ISSOCK(st.st_mode) ? LG_INODE_SERVICE_SOCKET
                                 : S_ISFIFO(st.st_mode) ? LG_INODE_SUPERVISE_CONTROL
                                                        : 0;
            if (!kind) {
                pass.warnings.insert("handoff: " + path + " is no directory, file, socket or FIFO; not guarded");
                continue;
            }
            // Hand-off paths come last in a pass: one a target protects
            // or liveguard guards otherwise (a service socket, a control
            // binary) keeps that kind.
            auto key = inode_key(path);
            if (key && pass.inodes.count(InodeId{key->dev, key->ino})) continue;
            want_inode(pass, path, kind, 0, kHandoffPaths);
        }
    }
}

std::map<InodeId, Reconciler::HeldOpen> Reconciler::held_open_now(const std::vector<Holder>& holders,
                                                                  bool& capped) const {
    std::map<InodeId, HeldOpen> now;
    capped = false;
    for (const auto& h : holders) {
        std::vector<pid_t> pids;
        if (!h.cgroup.empty()) {
            pids = cgroup_processes(h.cgroup, kMaxCgroupHolders);
        } else if (auto st = read_proc_stat(h.pid); st && st->start_ticks == h.start_ticks) {
            pids.push_back(h.pid);
        }
        for (pid_t pid : pids) {
            for (auto& path : held_open_files(pid, kMaxHeldOpen)) {
                auto key = inode_key(path);
                if (!key) continue;  // closed meanwhile
                InodeId id{key->dev, key->ino};
                if (now.count(id)) continue;
                if (now.size() >= kMaxHeldOpen) {
                    capped = true;
                    return now;
                }
                now[id] = HeldOpen{std::move(path), &h};
            }
        }
    }
    return now;
}

// Guards, as held open, what is not guarded yet; notes the moment for
// what is. `pass`: an apply()'s, where a file wanted otherwise keeps
// that kind; or none (refresh_held_open()), which guards at once.
std::size_t Reconciler::guard_held_open(const std::map<InodeId, HeldOpen>& now, Pass* pass, bool& capped) {
    auto when = std::chrono::steady_clock::now();
    std::size_t n = 0;
    for (const auto& [id, w] : inodes_added_) n += w.kind == LG_INODE_HELD_OPEN;
    for (const auto& [id, h] : now) {
        if (auto it = inodes_added_.find(id); it != inodes_added_.end()) {
            // Kept from an earlier pass as another kind (a PID file
            // renamed aside, say): it stays that.
            if (it->second.kind == LG_INODE_HELD_OPEN) it->second.seen = when;
            continue;
        }
        if (pass && pass->inodes.count(id)) continue;
        if (n >= kMaxHeldOpen) {
            capped = true;
            break;
        }
        auto held = hold_inode(h.path);
        if (!held || held->key.dev != id.first || held->key.ino != id.second) continue;  // replaced meanwhile
        InodeWant want{LG_INODE_HELD_OPEN, h.holder->source, h.holder->owner, std::move(*held), when};
        if (pass) {
            pass->inodes[id] = std::move(want);
        } else {
            GuardedInodes(maps_.guarded_inodes.get()).add(want.held.key, LG_INODE_HELD_OPEN, want.source);
            inodes_added_.emplace(id, std::move(want));
        }
        ++n;
    }
    return n;
}

void Reconciler::want_held_open(Pass& pass) {
    bool capped = false;
    guard_held_open(held_open_now(pass.holders, capped), &pass, capped);
    if (capped)
        pass.warnings.insert(held_open_cap_warning());
    holders_ = std::move(pass.holders);
}

void Reconciler::refresh_held_open() {
    bool capped = false;
    guard_held_open(held_open_now(holders_, capped), nullptr, capped);
    // Each entry goes before its fd closes (see apply_side_doors).
    GuardedInodes gi(maps_.guarded_inodes.get());
    auto expired = std::chrono::steady_clock::now() - std::chrono::seconds(kHeldOpenGraceS);
    for (auto it = inodes_added_.begin(); it != inodes_added_.end();) {
        if (it->second.kind == LG_INODE_HELD_OPEN && it->second.seen < expired) {
            gi.remove(it->second.held.key);
            it = inodes_added_.erase(it);
        } else {
            ++it;
        }
    }
    if (capped && !held_open_capped_)
        watcher_log("warning: " + held_open_cap_warning());
    held_open_capped_ = capped;
}

void Reconciler::want_inode(Pass& pass, const std::string& path, std::uint32_t kind, std::uint32_t source,
                            const std::string& owner, bool follow) {
    auto held = hold_inode(path, follow);
    if (!held) return;
    InodeId id{held->key.dev, held->key.ino};
    pass.inodes[id] = InodeWant{kind, source, owner, std::move(*held)};
}

void Reconciler::replace_policy(Policy p) {
    policy_ = std::move(p);
    prune_unwanted_ = true;
    pid_identity_.clear();
}

bool Reconciler::drain_events() {
    alignas(struct inotify_event) char buf[16384];
    bool any = false;
    for (;;) {
        ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
        if (n <= 0) break;
        for (char* p = buf; p < buf + n;) {
            auto* ev = reinterpret_cast<struct inotify_event*>(p);
            if (ev->mask & IN_IGNORED) {
                // The directory is gone: every path to it forgets the watch.
                std::erase_if(dir_wd_, [&](const auto& e) { return e.second == ev->wd; });
                wd_dir_.erase(ev->wd);
                wd_names_.erase(ev->wd);
                any = true;
            } else if (auto it = wd_names_.find(ev->wd);
                       ev->len == 0 || it == wd_names_.end() || names_concern(it->second, ev->name)) {
                // A nameless event is about the directory itself; an
                // overflow (wd -1) may have hidden anything.
                any = true;
            }
            p += sizeof(struct inotify_event) + ev->len;
        }
    }
    return any;
}

// Guards what the policy's targets need and releases what only an
// earlier resolution (or policy) needed. New entries go in first. A file
// the targets no longer resolve to stays guarded while it has a name and
// its owner is in force (guard_retention.h). Takes over pass.inodes.
void Reconciler::apply_side_doors(Pass& pass) {
    std::map<InodeId, HeldGuard> held;
    for (const auto& [k, v] : inodes_added_)
        if (v.kind != LG_INODE_HELD_OPEN) held[k] = {v.owner, link_count(v.held)};
    std::set<InodeId> wanted;
    for (const auto& [k, v] : pass.inodes) wanted.insert(k);
    auto release = guards_to_release(held, wanted, pass.owners);
    GuardedInodes gi(maps_.guarded_inodes.get());
    // Tracked as each goes in, so a failure part way loses none.
    for (auto& [k, v] : pass.inodes) {
        gi.add(v.held.key, v.kind, v.source);
        inodes_added_.insert_or_assign(k, std::move(v));
    }
    ExecWords ew(maps_.exec_words.get());
    for (const auto& [w, flags] : pass.words) ew.add(w, flags);
    // Each entry goes before its fd closes: while the map names an inode,
    // the hold keeps that number from naming another file.
    for (const auto& k : release) {
        gi.remove(inodes_added_.at(k).held.key);
        inodes_added_.erase(k);
    }
    // A watcher started over a loaded guard (after a crash, or a new load)
    // holds nothing of what the last one guarded: a protected file or tree
    // the policy no longer names would stay protected, and once its inode
    // is freed its number could name any new file. What the first complete
    // pass neither wants nor adopted (adopt_named_files) goes.
    if (!adopted_ && !pass.retry) {
        for (const auto& [key, g] : gi.list())
            if ((g.kind == LG_INODE_PROTECTED_TREE || g.kind == LG_INODE_PROTECTED_FILE ||
                 g.kind == LG_INODE_HELD_OPEN) &&
                !inodes_added_.count(InodeId{key.dev, key.ino}))
                gi.remove(key);
        adopted_ = true;
    }
    for (const auto& [w, flags] : words_added_) {
        auto it = pass.words.find(w);
        std::uint32_t keep = it == pass.words.end() ? 0 : it->second;
        if (flags & ~keep) ew.remove(w, flags & ~keep);
    }
    words_added_ = pass.words;
}

// A new watcher's first pass: a PID file the last watcher guarded stays
// guarded while a target still names it, whatever it holds just now (torn,
// or naming a process that has exited), as it would have under the
// watcher that guarded it (guard_retention.h); not when it names a member.
void Reconciler::adopt_named_files(Pass& pass) {
    std::set<InodeId> guarded;
    for (const auto& [key, g] : GuardedInodes(maps_.guarded_inodes.get()).list())
        if (g.kind == LG_INODE_PROTECTED_FILE) guarded.insert(InodeId{key.dev, key.ino});
    for (const auto& t : policy_.targets) {
        // (A container's are where its root is: resolved with the target.)
        if (t.kind != TargetKind::PidFile || !t.container.empty()) continue;
        for (const auto& path : expand_glob(t.pattern)) {
            if (pass.member_files.count(path)) continue;
            auto held = hold_inode(path);
            if (!held) continue;
            InodeId id{held->key.dev, held->key.ino};
            if (guarded.count(id) && !pass.inodes.count(id))
                pass.inodes[id] = InodeWant{LG_INODE_PROTECTED_FILE, t.source, t.describe(), std::move(*held)};
        }
    }
}

// The kernel walks up from a member's changed file only while some tree
// or file is protected.
void Reconciler::count_protected_paths() {
    std::size_t n = 0;
    for (const auto& [key, g] : GuardedInodes(maps_.guarded_inodes.get()).list())
        n += g.kind == LG_INODE_PROTECTED_TREE || g.kind == LG_INODE_PROTECTED_FILE;
    write_setting(maps_.settings.get(), LG_SETTING_PROTECTED_PATHS, n);
}

void Reconciler::procs_add(const ProcessToProtect& p, std::uint32_t source) {
    ProtectedSet set(maps_);
    pid_t tgid = p.pid;
    if (set.add(p.pid, source, &tgid, p.inherit ? LG_PROTECT_INHERIT : 0) == AddOutcome::Added)
        watcher_log("protecting pid " + std::to_string(tgid) +
                    (p.ns_pid > 0 ? " (" + std::to_string(p.ns_pid) + " in its namespace)" : std::string()) + " (" +
                    p.why + ")");
}

// `pid = N` names the process that had PID N when the policy was
// applied, never a later process that reuses the number.
void Reconciler::pin_identity(const ProtectTarget& t, Resolution& r) {
    auto st = read_proc_stat(t.pid);
    auto it = pid_identity_.find(t.source);
    if (it == pid_identity_.end()) {
        if (st) pid_identity_[t.source] = st->start_ticks;
        return;
    }
    if (!st || st->start_ticks != it->second) r.processes.clear();
}

void Reconciler::forget_vanished_cgroups(const std::set<std::uint64_t>& wanted) {
    for (const auto& c : cgroups_.list()) {
        if (c.info.source == 0 || wanted.count(c.id)) continue;
        if (prune_unwanted_ || !cgroup_path_of_id(mount_, c.id)) cgroups_.remove(c.id);
    }
    prune_unwanted_ = false;
}

void Reconciler::update_watches(const WatchDirs& dirs) {
    added_watch_ = false;
    for (auto it = dir_wd_.begin(); it != dir_wd_.end();) {
        if (!dirs.count(it->first)) {
            // Two paths to one directory (a symlink, a bind mount) share
            // one watch: it goes with the last of them.
            int wd = it->second;
            it = dir_wd_.erase(it);
            if (std::none_of(dir_wd_.begin(), dir_wd_.end(), [&](const auto& e) { return e.second == wd; })) {
                ::inotify_rm_watch(inotify_.get(), wd);
                wd_dir_.erase(wd);
            }
        } else {
            ++it;
        }
    }
    for (const auto& [d, names] : dirs) {
        if (dir_wd_.count(d)) continue;
        // In cgroupfs only new and removed cgroups matter; content events
        // (cgroup.events on every fork and exit) would wake us for nothing,
        // but where a file is named (a container's cgroup.events: its first
        // process started, its last gone).
        bool in_cgroupfs = d.compare(0, mount_.size(), mount_) == 0;
        std::uint32_t mask = in_cgroupfs ? kCgroupWatchMask : kWatchMask;
        if (in_cgroupfs && !names.count(kAnyName)) mask |= IN_MODIFY;
        int wd = ::inotify_add_watch(inotify_.get(), d.c_str(), mask | IN_ONLYDIR);
        if (wd < 0) {
            if (errno != ENOENT && !last_warnings_.count("watch " + d))
                watcher_log("warning: cannot watch " + d + ": " + std::strerror(errno));
            continue;
        }
        dir_wd_[d] = wd;
        wd_dir_[wd] = d;
        added_watch_ = true;
    }
    // By watch: an event names the watch, and every path that shares it
    // brings its names.
    wd_names_.clear();
    for (const auto& [d, wd] : dir_wd_) {
        auto it = dirs.find(d);
        if (it != dirs.end()) wd_names_[wd].insert(it->second.begin(), it->second.end());
    }
}

}  // namespace liveguard
