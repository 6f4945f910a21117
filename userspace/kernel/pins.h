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

// Map names as the BPF object defines them (and as bpftool shows them).
inline constexpr const char* kProtected = "lg_protected";
inline constexpr const char* kSessions = "lg_sessions";
inline constexpr const char* kEvents = "lg_events";
inline constexpr const char* kCounters = "lg_counters";
inline constexpr const char* kProtectedCgroups = "lg_protected_cgroups";
inline constexpr const char* kSettings = "lg_settings";
inline constexpr const char* kProtectedPids = "lg_protected_pids";
inline constexpr const char* kMembers = "lg_members";
inline constexpr const char* kGuardedCgroups = "lg_guarded_cgroups";
inline constexpr const char* kGuardedInodes = "lg_guarded_inodes";
inline constexpr const char* kExecWords = "lg_exec_words";
inline constexpr const char* kCgroupFilter = "lg_cgroup_filter";
inline constexpr const char* kMaps[] = {
    kProtected,     kSessions,        kEvents,        kCounters,     kProtectedCgroups,
    kSettings,      kProtectedPids,   kMembers,       kGuardedCgroups, kGuardedInodes,
    kExecWords,     kCgroupFilter,    "lg_exec_args", "lg_scratch",  "lg_fowners"};

// Audit-only mode: tracepoints that report, for kernels that will not run
// BPF LSM programs. The argv copies and fork/cgroup bookkeeping serve both.
inline constexpr const char* kAuditPrograms[] = {
    "lg_audit_signal", "lg_audit_exec", "lg_exec_argv", "lg_execveat_argv",
    "lg_fork",         "lg_cgroup_attach"};

// Enforcement: programs whose links are pinned; one entry per hook.
inline constexpr const char* kPrograms[] = {
    "lg_task_kill",     "lg_task_alloc",    "lg_fork",          "lg_cgroup_attach",
    "lg_ptrace",        "lg_file_open",     "lg_set_fowner",
    "lg_sigio",         "lg_unix_connect",  "lg_exec_argv_entry", "lg_execveat_argv_entry",
    "lg_bprm_check",    "lg_bpf_map",       "lg_bpf_prog",      "lg_bpf",
    "lg_inode_unlink",  "lg_inode_rmdir",   "lg_inode_create",  "lg_inode_rename",
    "lg_sb_umount",     "lg_sb_mount",      "lg_move_mount",    "lg_setrlimit",
    "lg_setnice",       "lg_setscheduler",  "lg_setioprio"};

}  // namespace liveguard::pins
