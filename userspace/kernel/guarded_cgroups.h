#pragma once
// Cgroups that hold a protected process or are an ancestor of one: a
// session member may write none of their files (cgroup.kill, cgroup.freeze,
// memory.max, ...), since each could stop the service. The kernel adds the
// cgroups a protected process is later moved into.
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace liveguard {

class GuardedCgroups {
public:
    GuardedCgroups(int map_fd, std::string mount) : fd_(map_fd), mount_(std::move(mount)) {}

    // Guards the cgroup at `dir` (under the cgroup v2 mount) and every
    // ancestor up to the root.
    void add_chain(const std::string& dir);
    // Guards the cgroup `pid` is in, and its ancestors. False when the
    // process or its cgroup is already gone.
    bool add_chain_of(pid_t pid);

private:
    int fd_;
    std::string mount_;
};

}  // namespace liveguard
