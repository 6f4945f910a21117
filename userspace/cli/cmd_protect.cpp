// Changing the kernel's sets by hand: protect/unprotect a process,
// tag/untag a cgroup as a session.
#include <cstdio>

#include "base/cgroup.h"
#include "base/privileges.h"
#include "cli/commands.h"
#include "kernel/pinned_maps.h"
#include "kernel/protected_set.h"
#include "kernel/session_registry.h"

namespace liveguard {

int run_command(const ProtectOptions& o) {
    require_root(o.add ? "protect" : "unprotect");
    PinnedMaps maps = PinnedMaps::open();
    ProtectedSet set(maps);
    if (o.add) {
        pid_t tgid = o.pid;
        AddOutcome outcome = set.add(o.pid, 0, &tgid);
        std::string who = std::to_string(tgid);
        if (tgid != o.pid) who += " (the process of thread " + std::to_string(o.pid) + ")";
        std::printf(outcome == AddOutcome::Added ? "protected %s\n" : "%s was already protected\n",
                    who.c_str());
        return 0;
    }
    if (set.remove(o.pid)) {
        std::printf("unprotected %d\n", o.pid);
        return 0;
    }
    std::printf("%d was not protected; nothing changed\n", o.pid);
    return 0;
}

int run_command(const TagOptions& o) {
    require_root(o.add ? "tag" : "untag");
    PinnedMaps maps = PinnedMaps::open();
    SessionRegistry reg(maps.sessions.get(), maps.settings.get(), maps.members.get());
    std::string dir = normalize_path(o.cgroup_dir);
    if (o.add) {
        std::uint64_t id = 0;
        TagOutcome outcome = reg.tag(cgroup2_mount(), dir, &id);
        std::printf(outcome == TagOutcome::Tagged ? "tagged %s (cgroup id %llu)\n"
                                                  : "%s (cgroup id %llu) was already tagged\n",
                    dir.c_str(), static_cast<unsigned long long>(id));
        return 0;
    }
    if (reg.untag(dir)) {
        std::printf("untagged %s\n", dir.c_str());
        return 0;
    }
    std::printf("%s was not tagged; nothing changed\n", dir.c_str());
    return 0;
}

}  // namespace liveguard
