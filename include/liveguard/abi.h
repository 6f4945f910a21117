/* The ABI shared by the BPF programs and the userspace loader.
 * Every struct here crosses the kernel boundary (map values, ring-buffer
 * records), so each has fixed-width fields, explicit padding and layout
 * assertions that both compilers check. */
#ifndef LIVEGUARD_ABI_H
#define LIVEGUARD_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#ifdef __cplusplus
#define LG_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define LG_OFFSETOF(type, field) offsetof(type, field)
#include <cstddef>
#else
#define LG_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define LG_OFFSETOF(type, field) __builtin_offsetof(type, field)
#endif

#define LG_COMM_LEN 16
/* Cgroup nesting levels walked when looking for a tagged ancestor. Deeper
 * sessions than this are refused by `tag` rather than silently ignored. */
#define LG_MAX_CGROUP_LEVEL 32
#define LG_RINGBUF_BYTES (256 * 1024)
#define LG_MAX_SESSIONS 4096
#define LG_MAX_PROTECTED_CGROUPS 4096

enum lg_hook {
	LG_HOOK_TASK_KILL = 0,
	LG_HOOK_COUNT,
};

/* lg_protected.flags */
enum lg_protect_flags {
	/* Every process this one forks is protected from its first
	 * instruction: a supervisor's restarts leave no gap. */
	LG_PROTECT_INHERIT = 1u << 0,
	/* Set on a mark the kernel created at fork from an inheriting parent. */
	LG_PROTECT_INHERITED = 1u << 1,
};

enum lg_verdict {
	LG_VERDICT_DENIED = 0,
	LG_VERDICT_AUDITED = 1,
};

/* Indexes into the counters array map. */
enum lg_counter {
	LG_COUNTER_DENIED_TASK_KILL = 0,
	LG_COUNTER_EVENTS_LOST = 1,
	/* A supervisor's child the kernel could not mark (allocation failed). */
	LG_COUNTER_INHERIT_FAILED = 2,
	LG_COUNTER_COUNT,
};

/* Value of the task-local-storage map that marks a protected process. The
 * mark lives on the task itself, so it dies with the process: a later
 * process that reuses the PID carries no mark. */
struct lg_protected {
	__u64 since_boot_ns; /* when protection was added, CLOCK_BOOTTIME */
	__u32 source;        /* which policy [[protect]] asked (1-based); 0 = command line */
	__u32 flags;         /* enum lg_protect_flags */
};

/* Value of the protected-cgroups hash map, keyed by cgroup v2 id: every
 * process in that cgroup or below it is protected, including processes
 * that join or are started there later. */
struct lg_cgroup_protection {
	__u64 since_boot_ns;
	__u32 source;
	__u32 _pad;
};

/* Indexes into the settings array map. Each entry counts the entries of
 * one map, so the hot path can skip walks that cannot match; each has a
 * single writer-side recount, so concurrent updaters never lose one. */
enum lg_setting {
	LG_SETTING_PROTECTED_CGROUPS = 0,
	LG_SETTING_SESSIONS = 1,
	LG_SETTING_COUNT,
};

struct lg_settings {
	__u32 count;
	__u32 _pad;
};

/* Value of the sessions hash map, keyed by cgroup v2 id. */
struct lg_session {
	__u64 tagged_realtime_ns;
	__u32 flags; /* reserved, 0 */
	__u32 _pad;
};

/* One ring-buffer record per refusal. */
struct lg_event {
	__u64 boot_ns;           /* bpf_ktime_get_boot_ns() at the refusal */
	__u64 session_cgroup_id; /* the tagged cgroup that made the sender a member */
	__u32 verdict;           /* enum lg_verdict */
	__u32 hook;              /* enum lg_hook */
	__u32 pid;               /* sender's thread-group id */
	__u32 tid;
	__u32 target_pid;
	__u32 target_tid;
	__s32 signal;
	__u32 _pad;
	char comm[LG_COMM_LEN];
	char target_comm[LG_COMM_LEN];
};

LG_STATIC_ASSERT(sizeof(struct lg_protected) == 16, "lg_protected layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_protected, source) == 8, "lg_protected layout");
LG_STATIC_ASSERT(sizeof(struct lg_session) == 16, "lg_session layout");
LG_STATIC_ASSERT(sizeof(struct lg_cgroup_protection) == 16, "lg_cgroup_protection layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_cgroup_protection, source) == 8, "lg_cgroup_protection layout");
LG_STATIC_ASSERT(sizeof(struct lg_settings) == 8, "lg_settings layout");
LG_STATIC_ASSERT(sizeof(struct lg_event) == 80, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, session_cgroup_id) == 8, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, verdict) == 16, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, target_pid) == 32, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, signal) == 40, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, comm) == 48, "lg_event layout");
LG_STATIC_ASSERT(LG_OFFSETOF(struct lg_event, target_comm) == 64, "lg_event layout");

#endif
