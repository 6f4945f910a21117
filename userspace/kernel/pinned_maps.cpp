#include "kernel/pinned_maps.h"

#include <bpf/bpf.h>
#include <unistd.h>

#include <cerrno>

#include "base/error.h"
#include "kernel/pins.h"

namespace liveguard {
namespace {

UniqueFd open_map(const char* name, bool read_only) {
    std::string path = pins::map(name);
    LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = read_only ? static_cast<__u32>(BPF_F_RDONLY) : 0u);
    int fd = bpf_obj_get_opts(path.c_str(), &opts);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT && ::access(pins::map(pins::kProtected).c_str(), F_OK) == 0)
            throw Error("liveguard was loaded by another version of liveguard-bpf (" + path +
                            " is missing)",
                        "reload it: sudo liveguard-bpf unload, then sudo liveguard-bpf load");
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

void PinnedMaps::require_write_access() {
    pins::require_bpffs();
    (void)open_map(pins::kProtected, false);
}

PinnedMaps PinnedMaps::open(bool read_only) {
    pins::require_bpffs();
    PinnedMaps m;
    m.protected_tasks = open_map(pins::kProtected, read_only);
    m.sessions = open_map(pins::kSessions, read_only);
    m.events = open_map(pins::kEvents, read_only);
    m.counters = open_map(pins::kCounters, read_only);
    m.protected_cgroups = open_map(pins::kProtectedCgroups, read_only);
    m.cgroup_filter = open_map(pins::kCgroupFilter, read_only);
    m.settings = open_map(pins::kSettings, read_only);
    m.protected_pids = open_map(pins::kProtectedPids, read_only);
    m.guarded_cgroups = open_map(pins::kGuardedCgroups, read_only);
    m.guarded_inodes = open_map(pins::kGuardedInodes, read_only);
    m.exec_words = open_map(pins::kExecWords, read_only);
    m.members = open_map(pins::kMembers, read_only);
    m.auto_names = open_map(pins::kAutoNames, read_only);
    m.path_excepts = open_map(pins::kPathExcepts, read_only);
    m.environ_at = open_map(pins::kEnvironAt, read_only);
    m.allowed_doors = open_map(pins::kAllowedDoors, read_only);
    m.protected_ports = open_map(pins::kProtectedPorts, read_only);
    m.session_tasks = open_map(pins::kSessionTasks, read_only);
    m.session_limits = open_map(pins::kSessionLimits, read_only);
    m.fs_space = open_map(pins::kFsSpace, read_only);
    m.engine_refs = open_map(pins::kEngineRefs, read_only);
    return m;
}

}  // namespace liveguard
