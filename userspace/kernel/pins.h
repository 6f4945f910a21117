#pragma once
// Where liveguard's kernel objects live in bpffs. Enforcement outlives the
// command that loaded it because these pins hold the link and the maps.
#include <string>

namespace liveguard::pins {

inline constexpr const char* kBpffs = "/sys/fs/bpf";
inline constexpr const char* kDir = "/sys/fs/bpf/liveguard";

inline std::string map(const char* name) { return std::string(kDir) + "/" + name; }
inline std::string link(const char* prog) { return std::string(kDir) + "/link_" + prog; }

// Throws unless bpffs is mounted at kBpffs.
void require_bpffs();

// The maps userspace opens, by the names the BPF object gives them (and
// bpftool shows); a unit test checks each against the object.
inline constexpr const char* kProtected = "lg_protected";
inline constexpr const char* kSessions = "lg_sessions";
inline constexpr const char* kEvents = "lg_events";
inline constexpr const char* kCounters = "lg_counters";
inline constexpr const char* kProtectedCgroups = "lg_protected_cgroups";
inline constexpr const char* kSettings = "lg_settings";
inline constexpr const char* kProtectedPids = "lg_protected_pids";
inline constexpr const char* kGuardedCgroups = "lg_guarded_cgroups";
inline constexpr const char* kGuardedInodes = "lg_guarded_inodes";
inline constexpr const char* kExecWords = "lg_exec_words";
inline constexpr const char* kCgroupFilter = "lg_cgroup_filter";
inline constexpr const char* kMembers = "lg_members";
inline constexpr const char* kAutoNames = "lg_auto_names";
inline constexpr const char* kPathExcepts = "lg_path_excepts";
inline constexpr const char* kEnvironAt = "lg_environ_at";
inline constexpr const char* kAllowedDoors = "lg_allowed_doors";
inline constexpr const char* kProtectedPorts = "lg_protected_ports";
inline constexpr const char* kSessionTasks = "lg_session_tasks";
inline constexpr const char* kSessionLimits = "lg_session_limits";
inline constexpr const char* kFsSpace = "lg_fs_space";
inline constexpr const char* kEngineRefs = "lg_engine_refs";

}  // namespace liveguard::pins
