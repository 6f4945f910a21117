#pragma once
// Keeping the kernel's maps equal to what the policy names: each pass
// resolves every target afresh, adds what is newly wanted, releases what
// no longer is, and watches (inotify) the directories whose changes can
// change the answer.
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "kernel/guarded_inodes.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_cgroups.h"
#include "policy/policy.h"
#include "policy/resolver.h"
#include "watcher/guard_retention.h"

namespace liveguard {

struct ProcessToProtect;
struct WatcherState;

class Reconciler {
public:
    Reconciler(Policy policy, PinnedMaps maps);

    int inotify_fd() const { return inotify_.get(); }

    // Resolves every target and applies the answer. Returns whether a
    // retry is wanted (torn PID file, supervisor not up yet).
    bool apply();

    // Swaps in a new policy. Cgroups only the old one protected are
    // released by the next apply(), after the new policy's are in place, so
    // nothing both policies protect is ever unprotected in between.
    // Processes keep their marks until they exit.
    void replace_policy(Policy p);

    const Policy& policy() const { return policy_; }

    // Guards, for locks, the files protected processes opened since the
    // last pass (a service opens its lock file after it starts, and no
    // event says so); what they hold stays guarded as apply() keeps it.
    void refresh_held_open();

    // Drains pending inotify events; true when any concerns a name the
    // targets resolve through (watch_concerns), or a directory itself.
    bool drain_events();

private:
    // A guarded file, held open while the kernel map names it.
    struct InodeWant {
        std::uint32_t kind = 0;  // enum lg_inode_kind
        std::uint32_t source = 0;
        std::string owner;  // a target's describe(), or a built-in set's name
        HeldInode held;
        // LG_INODE_HELD_OPEN: when a holder last had it open. Such a
        // guard goes kHeldOpenGraceS after that, not by guard_retention:
        // a service restarting opens the same lock file again, but a file
        // it once read must not stay unlockable for good.
        std::chrono::steady_clock::time_point seen{};
    };
    using InodeWants = std::map<InodeId, InodeWant>;
    using WordWants = std::map<std::string, std::uint32_t>;  // word -> enum lg_word_flags
    // A protected process whose open files are guarded, with its target.
    // Either one process (its start time checked at each look, so a
    // reused number reads nothing) or a protected cgroup, whose processes
    // are read afresh at each look.
    struct Holder {
        pid_t pid = 0;
        std::uint64_t start_ticks = 0;
        std::string cgroup;
        std::uint32_t source = 0;
        std::string owner;
    };

    // What one apply() wants, gathered over the targets before the side
    // doors, stale cgroups and watches are brought in line with it.
    struct Pass {
        WatchDirs dirs;
        std::set<std::uint64_t> cgroups;
        std::set<std::string> warnings;
        InodeWants inodes;
        std::set<std::string> owners;  // of inodes: every target and built-in set in force
        WordWants words;
        std::set<std::string> member_files;  // PID files naming a session member
        std::vector<Holder> holders;
        bool retry = false;
    };

    void apply_target(const ProtectTarget& t, Pass& pass, WatcherState& state);
    void want_service_manager_sockets(Pass& pass);
    void want_handoff_paths(Pass& pass);
    void want_engine_sockets(Pass& pass);
    void guard_containers_at_engines(Pass& pass, const WatcherState& state);
    // Last in a pass: a file guarded otherwise keeps that kind.
    void want_held_open(Pass& pass);
    // A file a holder has open now: a path to it (/proc/<pid>/fd/<n>).
    struct HeldOpen {
        std::string path;
        const Holder* holder = nullptr;
    };
    // The files the holders have open now, at most kMaxHeldOpen; `capped`
    // when there were more.
    std::map<InodeId, HeldOpen> held_open_now(const std::vector<Holder>& holders, bool& capped) const;
    std::size_t guard_held_open(const std::map<InodeId, HeldOpen>& now, Pass* pass, bool& capped);
    // `follow` false: a symlink is guarded itself, not what it names.
    static void want_inode(Pass& pass, const std::string& path, std::uint32_t kind, std::uint32_t source,
                           const std::string& owner, bool follow = true);
    void adopt_named_files(Pass& pass);
    void apply_side_doors(Pass& pass);
    void count_protected_paths();
    void procs_add(const ProcessToProtect& p, std::uint32_t source);
    // The target's ports: those its processes listen on now, and those
    // the policy names.
    void want_ports(const ProtectTarget& t, const std::vector<pid_t>& pids, Pass& pass);
    void pin_identity(const ProtectTarget& t, Resolution& r);
    void forget_vanished_cgroups(const std::set<std::uint64_t>& wanted);
    void update_watches(const WatchDirs& dirs);

    Policy policy_;
    PinnedMaps maps_;
    ProtectedCgroups cgroups_;
    std::string mount_;
    UniqueFd inotify_;
    std::map<std::string, int> dir_wd_;
    std::map<int, std::string> wd_dir_;
    std::map<int, std::set<std::string>> wd_names_;  // what each watch listens for
    std::uint64_t passes_ = 0;
    bool adopted_ = false;  // the map's protected paths checked against this watcher's
    std::set<std::string> last_warnings_;
    bool prune_unwanted_ = false;
    std::map<std::uint32_t, std::uint64_t> pid_identity_;  // source -> start ticks
    InodeWants inodes_added_;
    std::vector<Holder> holders_;  // the last pass's
    bool held_open_capped_ = false;
    WordWants words_added_;
    bool added_watch_ = false;
    std::uint32_t host_net_ns_ = 0;  // inode of the machine's network namespace (0: unknown)
    // The names of the containers guarded at the engines' sockets, by id.
    std::map<std::string, std::vector<std::string>> engine_names_;
};

}  // namespace liveguard
