#pragma once
// Cgroups whose every process is protected, checked by the kernel at
// signal time: what systemd units and `cgroup =` policy entries map to.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct ProtectedCgroup {
    std::uint64_t id = 0;
    lg_cgroup_protection info{};
};

struct PinnedMaps;

// The filter the kernel tests before asking the map, with a bit set for
// each of `ids`.
lg_cgroup_filter cgroup_filter_of(const std::vector<std::uint64_t>& ids);

// Writes the filter for what the protected-cgroups map holds now. `load`
// calls it too: maps kept from an earlier load may hold entries that a new
// filter map has no bits for. Returns how many cgroups the map holds.
std::size_t rebuild_cgroup_filter(int map_fd, int filter_fd);

class ProtectedCgroups {
public:
    explicit ProtectedCgroups(const PinnedMaps& maps);

    // False when it was already protected.
    bool add(std::uint64_t cgroup_id, std::uint32_t source);
    bool remove(std::uint64_t cgroup_id);
    std::vector<ProtectedCgroup> list() const;

private:
    // The kernel skips the cgroup walk while the count is zero, and skips
    // the map for ids whose filter bit is clear, so both are rebuilt from
    // the map after every change. add() sets the new bit before the entry
    // exists, so a cgroup the map lists is never skipped.
    void set_filter_bit(std::uint64_t cgroup_id);
    void sync();

    int fd_;
    int settings_fd_;
    int filter_fd_;
};

}  // namespace liveguard
