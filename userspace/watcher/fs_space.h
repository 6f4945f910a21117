#pragma once
// The free space of the filesystems protected services keep their files
// on (protected trees, PID files, s6 service directories), measured for
// the kernel side: once one is down to [sessions] fs_reserve, a session
// member's writes there fail with ENOSPC, and what is left stays the
// services'. Measured while sessions run, more often as a filesystem
// nears its reserve; and since a fast writer can use a reserve up between
// two measurements (or while the watcher waits for a CPU), members are
// refused early by what the filesystem's measured fill rate would use in
// kHeadroomMs.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace liveguard {

// Where the policy's services keep files: each protected tree, the
// directory of each PID file (its glob's matches, or the pattern's own
// directory) and each s6 service directory, as they exist now.
std::vector<std::string> space_paths(const Policy& policy);

class FsSpace {
public:
    explicit FsSpace(int map_fd) : fd_(map_fd) {}

    // The filesystems to watch: those of `paths` (one entry each), with
    // `reserve`. Entries of filesystems no longer named are removed.
    void watch(const std::vector<std::string>& paths, FsReserve reserve);

    // Measures each watched filesystem and publishes it to the kernel
    // side; returns the milliseconds until the next measurement is due
    // (-1: nothing to watch). A filesystem that cannot be measured keeps
    // its last entry and is logged once.
    int measure();

    bool watching() const { return !watched_.empty(); }

    static constexpr int kIntervalMs = 200;
    // With no session anywhere.
    static constexpr int kIdleIntervalMs = 1000;
    // Within four reserves of the limit.
    static constexpr int kNearIntervalMs = 10;
    // How far ahead of the filling the reserve is kept: ten near
    // intervals, for a watcher that waits its turn on a busy machine.
    static constexpr int kHeadroomMs = 100;

private:
    struct Watched {
        std::string path;
        std::uint32_t dev = 0;
        bool warned = false;
        // The last measurement, and the rate free space fell at since
        // the one before (bytes per millisecond; halved while it rises).
        std::uint64_t last_avail = 0;
        std::chrono::steady_clock::time_point last_at{};
        double fill_rate = 0;
    };
    int fd_;
    FsReserve reserve_;
    std::vector<Watched> watched_;
};

}  // namespace liveguard
