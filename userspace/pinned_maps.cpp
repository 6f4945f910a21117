#include "pinned_maps.h"

#include <bpf/bpf.h>

#include <cerrno>

#include "error.h"
#include "loader.h"
#include "pins.h"

namespace liveguard {
namespace {

UniqueFd open_map(const char* name) {
    std::string path = pins::map(name);
    int fd = bpf_obj_get(path.c_str());
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            throw Error("liveguard is not loaded (" + path + " is missing)",
                        "load it first: sudo liveguard-bpf load");
        if (e == EACCES || e == EPERM)
            throw_errno("cannot open " + path, e,
                        "run it as root (sudo), and not from inside a test session: "
                        "members may not change liveguard");
        throw_errno("cannot open " + path, e);
    }
    return UniqueFd(fd);
}

}  // namespace

PinnedMaps PinnedMaps::open() {
    require_bpffs();
    PinnedMaps m;
    m.protected_tasks = open_map(pins::kProtected);
    m.sessions = open_map(pins::kSessions);
    m.events = open_map(pins::kEvents);
    m.counters = open_map(pins::kCounters);
    m.protected_cgroups = open_map(pins::kProtectedCgroups);
    m.settings = open_map(pins::kSettings);
    m.protected_pids = open_map(pins::kProtectedPids);
    m.guarded_cgroups = open_map(pins::kGuardedCgroups);
    m.guarded_inodes = open_map(pins::kGuardedInodes);
    m.exec_words = open_map(pins::kExecWords);
    return m;
}

}  // namespace liveguard
