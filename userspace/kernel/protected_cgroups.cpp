#include "kernel/protected_cgroups.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <ctime>

#include "base/clock.h"
#include "base/error.h"
#include "kernel/map_walk.h"
#include "kernel/pinned_maps.h"

namespace liveguard {

lg_cgroup_filter cgroup_filter_of(const std::vector<std::uint64_t>& ids) {
    lg_cgroup_filter f{};
    for (std::uint64_t id : ids) f.words[lg_cgroup_filter_word(id)] |= lg_cgroup_filter_bit(id);
    return f;
}

std::size_t rebuild_cgroup_filter(int map_fd, int filter_fd) {
    std::vector<std::uint64_t> ids;
    for (const auto& [id, info] : list_u64_map<lg_cgroup_protection>(map_fd, LG_MAX_PROTECTED_CGROUPS))
        ids.push_back(id);
    // One copy of the whole value: a bit set both before and after is set
    // throughout, so no protected cgroup is missed mid-write.
    lg_cgroup_filter f = cgroup_filter_of(ids);
    std::uint32_t zero = 0;
    if (bpf_map_update_elem(filter_fd, &zero, &f, BPF_ANY) != 0)
        throw_errno("cannot update liveguard's protected-cgroup filter", errno);
    return ids.size();
}

ProtectedCgroups::ProtectedCgroups(const PinnedMaps& maps)
    : fd_(maps.protected_cgroups.get()),
      settings_fd_(maps.settings.get()),
      filter_fd_(maps.cgroup_filter.get()) {}

bool ProtectedCgroups::add(std::uint64_t id, std::uint32_t source) {
    lg_cgroup_protection v{};
    v.since_boot_ns = boottime_now_ns();
    v.source = source;
    set_filter_bit(id);
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
    sync();
    return added;
}

bool ProtectedCgroups::remove(std::uint64_t id) {
    bool removed = bpf_map_delete_elem(fd_, &id) == 0;
    if (!removed && errno != ENOENT) throw_errno("cannot unprotect cgroup " + std::to_string(id), errno);
    sync();
    return removed;
}

std::vector<ProtectedCgroup> ProtectedCgroups::list() const {
    std::vector<ProtectedCgroup> out;
    for (const auto& [id, info] : list_u64_map<lg_cgroup_protection>(fd_, LG_MAX_PROTECTED_CGROUPS))
        out.push_back({id, info});
    return out;
}

void ProtectedCgroups::set_filter_bit(std::uint64_t id) {
    std::uint32_t zero = 0;
    lg_cgroup_filter f{};
    if (bpf_map_lookup_elem(filter_fd_, &zero, &f) != 0)
        throw_errno("cannot read liveguard's protected-cgroup filter", errno);
    f.words[lg_cgroup_filter_word(id)] |= lg_cgroup_filter_bit(id);
    if (bpf_map_update_elem(filter_fd_, &zero, &f, BPF_ANY) != 0)
        throw_errno("cannot update liveguard's protected-cgroup filter", errno);
}

void ProtectedCgroups::sync() {
    // One walk of the map gives both the filter and the count.
    write_setting(settings_fd_, LG_SETTING_PROTECTED_CGROUPS, rebuild_cgroup_filter(fd_, filter_fd_));
}

}  // namespace liveguard
