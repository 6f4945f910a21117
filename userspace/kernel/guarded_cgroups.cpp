#include "kernel/guarded_cgroups.h"

#include <bpf/bpf.h>

#include <cerrno>

#include "base/cgroup.h"
#include "base/error.h"
#include "base/proc.h"

namespace liveguard {

void GuardedCgroups::add_chain(const std::string& dir) {
    std::string d = dir;
    for (;;) {
        std::uint64_t id = cgroup_id_of(d);
        std::uint32_t one = 1;
        if (bpf_map_update_elem(fd_, &id, &one, BPF_ANY) != 0)
            throw_errno("cannot guard cgroup " + d, errno);
        if (d.size() <= mount_.size()) break;
        auto slash = d.rfind('/');
        if (slash == std::string::npos || slash < mount_.size()) break;
        d = d.substr(0, slash);
    }
}

bool GuardedCgroups::add_chain_of(pid_t pid) {
    auto dir = cgroup_dir_of(mount_, pid);
    if (!dir) return false;
    try {
        add_chain(*dir);
    } catch (const std::exception&) {
        return false;  // the process moved or its cgroup went away meanwhile
    }
    return true;
}

}  // namespace liveguard
