#include "protected_cgroups.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <ctime>

#include "error.h"

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
    std::uint64_t key = 0, next = 0;
    const void* prev = nullptr;
    for (int i = 0; i < 2 * LG_MAX_PROTECTED_CGROUPS; ++i) {
        if (bpf_map_get_next_key(fd_, prev, &next) != 0) break;
        ProtectedCgroup c;
        c.id = next;
        if (bpf_map_lookup_elem(fd_, &next, &c.info) == 0) out.push_back(c);
        key = next;
        prev = &key;
    }
    return out;
}

void ProtectedCgroups::sync_count() {
    lg_settings s{};
    std::uint32_t key = LG_SETTING_PROTECTED_CGROUPS;
    s.count = static_cast<std::uint32_t>(list().size());
    if (bpf_map_update_elem(settings_fd_, &key, &s, BPF_ANY) != 0)
        throw_errno("cannot update liveguard's settings map", errno);
}

}  // namespace liveguard
