#pragma once
// Where liveguard's kernel objects live in bpffs. Enforcement outlives the
// command that loaded it because these pins hold the link and the maps.
#include <string>

namespace liveguard::pins {

inline constexpr const char* kBpffs = "/sys/fs/bpf";
inline constexpr const char* kDir = "/sys/fs/bpf/liveguard";

inline std::string map(const char* name) { return std::string(kDir) + "/" + name; }
inline std::string link(const char* prog) { return std::string(kDir) + "/link_" + prog; }

// Map names as the BPF object defines them (and as bpftool shows them).
inline constexpr const char* kProtected = "lg_protected";
inline constexpr const char* kSessions = "lg_sessions";
inline constexpr const char* kEvents = "lg_events";
inline constexpr const char* kCounters = "lg_counters";
inline constexpr const char* kProtectedCgroups = "lg_protected_cgroups";
inline constexpr const char* kSettings = "lg_settings";
inline constexpr const char* kMaps[] = {kProtected, kSessions,          kEvents,
                                        kCounters,  kProtectedCgroups, kSettings};

// Programs whose links are pinned; one entry per LSM hook.
inline constexpr const char* kPrograms[] = {"lg_task_kill", "lg_task_alloc"};

}  // namespace liveguard::pins
