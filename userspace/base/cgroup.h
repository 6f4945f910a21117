#pragma once
// cgroup v2 facts: where the hierarchy is mounted, a directory's cgroup id
// (the key the BPF side sees), the path back from an id, and membership.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace liveguard {

// The mount point of the cgroup v2 hierarchy in a mountinfo text. Pure v2
// hosts mount it at /sys/fs/cgroup, hybrid ones at /sys/fs/cgroup/unified.
std::optional<std::string> find_cgroup2_mount(std::string_view mountinfo);

// Same, from this process's /proc/self/mountinfo; throws with the fix.
std::string cgroup2_mount();

// Throws unless `dir` is a directory on a cgroup v2 filesystem.
void require_cgroup2_dir(const std::string& dir);

// The 64-bit cgroup id of a cgroup v2 directory, as
// bpf_get_current_ancestor_cgroup_id() reports it.
std::uint64_t cgroup_id_of(const std::string& dir);

// The cgroup v2 directory (under `mount`) that process `pid` is in, from
// its /proc/<pid>/cgroup; nothing when the process is gone.
std::optional<std::string> cgroup_dir_of(const std::string& mount, pid_t pid);

// The nesting level below the root (root = 0) of a directory under `mount`.
int cgroup_level(const std::string& mount, const std::string& dir);

// The path of the cgroup with this id, if it still exists.
std::optional<std::string> cgroup_path_of_id(const std::string& mount, std::uint64_t id);

// Processes in the cgroup and all its descendants.
std::size_t cgroup_member_count(const std::string& dir);

// Absolute, normalised form of a path (no trailing slash, no "." or "..").
std::string normalize_path(const std::string& path);

}  // namespace liveguard
