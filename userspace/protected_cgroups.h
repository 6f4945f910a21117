#pragma once
// Cgroups whose every process is protected, checked by the kernel at
// signal time: what systemd units and `cgroup =` policy entries map to.
#include <cstdint>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct ProtectedCgroup {
    std::uint64_t id = 0;
    lg_cgroup_protection info{};
};

class ProtectedCgroups {
public:
    ProtectedCgroups(int map_fd, int settings_fd) : fd_(map_fd), settings_fd_(settings_fd) {}

    // False when it was already protected.
    bool add(std::uint64_t cgroup_id, std::uint32_t source);
    bool remove(std::uint64_t cgroup_id);
    std::vector<ProtectedCgroup> list() const;

private:
    // The kernel skips the cgroup walk while the count is zero, so it is
    // kept equal to the map's size after every change.
    void sync_count();

    int fd_;
    int settings_fd_;
};

}  // namespace liveguard
