#include "protected_cgroups.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <ctime>

#include "error.h"
#include "map_walk.h"

namespace liveguard {

bool ProtectedCgroups::add(std::uint64_t id, std::uint32_t source) {
    struct timespec ts {};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    lg_cgroup_protection v{};
    v.since_boot_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
                      static_cast<std::uint64_t>(ts.tv_nsec);
    v.source = source;
    bool added = true;
    if (bpf_map_update_elem(fd_, &id, &v, BPF_NOEXIST) != 0) {
        if (errno != EEXIST) {
            if (errno == E2BIG)
                throw Error("too many protected cgroups (" +
                                std::to_string(LG_MAX_PROTECTED_CGROUPS) + ")",
                            "protect a common parent cgroup instead");
            throw_errno("cannot protect cgroup " + std::to_string(id), errno);
        }
        added = false;
    }
    sync_count();
    return added;
}

bool ProtectedCgroups::remove(std::uint64_t id) {
    bool removed = bpf_map_delete_elem(fd_, &id) == 0;
    if (!removed && errno != ENOENT) throw_errno("cannot unprotect cgroup " + std::to_string(id), errno);
    sync_count();
    return removed;
}

std::vector<ProtectedCgroup> ProtectedCgroups::list() const {
    std::vector<ProtectedCgroup> out;
    for (const auto& [id, info] : list_u64_map<lg_cgroup_protection>(fd_, LG_MAX_PROTECTED_CGROUPS))
        out.push_back({id, info});
    return out;
}

void ProtectedCgroups::sync_count() {
    write_setting(settings_fd_, LG_SETTING_PROTECTED_CGROUPS, list().size());
}

}  // namespace liveguard
