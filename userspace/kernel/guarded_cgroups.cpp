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
    auto text = read_small_file("/proc/" + std::to_string(pid) + "/cgroup", 4096);
    if (!text) return false;
    // cgroup v2's line is "0::/path".
    std::size_t at = text->find("0::");
    if (at == std::string::npos) return false;
    std::size_t end = text->find('\n', at);
    std::string rel = text->substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
    if (rel.empty() || rel[0] != '/') return false;
    try {
        add_chain(rel == "/" ? mount_ : mount_ + rel);
    } catch (const std::exception&) {
        return false;  // the process moved or its cgroup went away meanwhile
    }
    return true;
}

}  // namespace liveguard
