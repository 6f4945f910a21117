#pragma once
// The files a protected process holds open. A member's lock on one (a
// read-only descriptor is enough for flock and F_RDLCK) would block the
// service when it takes its own, so these are guarded for locks
// (LG_INODE_HELD_OPEN), found by reading /proc/<pid>/fd.
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace liveguard {

// "/proc/<pid>/fd/<n>" for each descriptor of `pid` that is a regular file
// or a directory with a name left on a real filesystem (not /proc, /sys or
// /dev), at most `max`; fewer, without error, when the process exits or
// its descriptors change meanwhile.
std::vector<std::string> held_open_files(pid_t pid, std::size_t max);

// The processes in the cgroup at `path` and the cgroups below it, at most
// `max`, kCgroupDepth levels down.
inline constexpr int kCgroupDepth = 8;
std::vector<pid_t> cgroup_processes(const std::string& path, std::size_t max);

}  // namespace liveguard
