/* Every map of liveguard's kernel side, declared once. Each program file
 * includes this header; the maps are weak so the linked object holds one
 * of each (bpftool gen object), and userspace pins them by these names.
 * State a decision depends on lives in maps that never evict. */
#ifndef LG_BPF_MAPS_H
#define LG_BPF_MAPS_H

#include "common.h"

/* The mark of a protected process, on its thread-group leader. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lg_protected);
} lg_protected __weak SEC(".maps");

/* Protected thread-group ids, for doors that reach a process by number
 * (/proc/<pid>/...): value = its start time in /proc ticks, so a reused
 * PID never matches. An entry goes when its process exits; when the map
 * is full, those doors refuse members outright. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_PROTECTED_PIDS);
	__type(key, __u32);
	__type(value, __u64);
} lg_protected_pids __weak SEC(".maps");

/* Filesystems protected services keep their files on, and whether their
 * free space is down to the reserve (the watcher measures them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_WATCHED_FILESYSTEMS);
	__type(key, __u32);
	__type(value, struct lg_fs_space);
} lg_fs_space __weak SEC(".maps");

/* The session of the member that listens on a unix socket, set at
 * listen(): a member may still reach servers it started itself. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} lg_member_listeners __weak SEC(".maps");

/* The mark of a session member's descendant. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lg_member);
} lg_members __weak SEC(".maps");

/* Cgroups that hold a protected process, or are an ancestor of one (the
 * loader adds them; the kernel adds a cgroup a protected process is moved
 * into). Writing their files could kill, freeze or starve the service. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_GUARDED_CGROUPS);
	__type(key, __u64);
	__type(value, __u32);
} lg_guarded_cgroups __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_GUARDED_INODES);
	__type(key, struct lg_inode_key);
	__type(value, struct lg_guarded_inode);
} lg_guarded_inodes __weak SEC(".maps");

/* Names that stay writable below a protected tree ([[protect]] except). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_PATH_EXCEPTS);
	__type(key, __u64);
	__type(value, struct lg_path_except);
} lg_path_excepts __weak SEC(".maps");

/* Hashes of the words that make a service-control command mutate a
 * protected service: verbs, unit names, service and scan directories. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_EXEC_WORDS);
	__type(key, __u64);
	__type(value, __u32);
} lg_exec_words __weak SEC(".maps");

/* A member's argv, copied at execve entry, keyed by thread id; consumed
 * by the exec check, dropped when the thread exits. A copy that finds the
 * map full is missing, and the exec check fails closed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_EXEC_ARG_COPIES);
	__type(key, __u32);
	__type(value, struct lg_exec_args);
} lg_exec_args __weak SEC(".maps");

struct lg_arg_buf {
	char c[LG_EXEC_ARG_LEN];
};

/* One argument at a time, too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_arg_buf);
} lg_scratch __weak SEC(".maps");

/* The doors the policy opens to every session ([sessions] allow), one bit
 * per enum lg_hook: only doors that guard the machine as a whole. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lg_allowed_doors __weak SEC(".maps");

/* Ports protected services listen on, by namespace and protocol; the
 * value is the [[protect]] that asked (1-based), 0 when learned from a
 * protected process's sockets. Written by the loader only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_PROTECTED_PORTS);
	__type(key, struct lg_port_key);
	__type(value, __u32);
} lg_protected_ports __weak SEC(".maps");

/* The containers guarded at their engines' API sockets, by every ref a
 * request can name them with (struct lg_engine_ref); the value is the
 * 1. Written by the loader
 * only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_ENGINE_REFS);
	__type(key, struct lg_engine_ref);
	__type(value, __u32);
} lg_engine_refs __weak SEC(".maps");

/* Where `environ` is in a process running a given executable, as the
 * watcher found it in the file (no decision depends on it: an executable
 * not listed only leaves events without the test's name). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_ENVIRON_EXES);
	__type(key, struct lg_exe_key);
	__type(value, struct lg_environ_at);
} lg_environ_at __weak SEC(".maps");

/* The test's name on its way into an event: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_test_text);
} lg_test_scratch __weak SEC(".maps");

/* Files whose owner (F_SETOWN) a session member set: SIGIO/SIGURG they
 * raise is sent on the member's behalf. Keyed by the struct file; an
 * entry goes when the file is freed or a non-member sets its owner. A
 * member's F_SETOWN that finds the map full is refused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_FOWNERS);
	__type(key, __u64);
	__type(value, __u64);
} lg_fowners __weak SEC(".maps");

/* Tagged session cgroups, by cgroup v2 id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, struct lg_session);
} lg_sessions __weak SEC(".maps");

/* Live tasks per session (struct lg_session_tasks). Twice the sessions:
 * an ended session's entry stays until the watcher's next pass. Not LRU:
 * a session without an entry has its forks refused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * LG_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, struct lg_session_tasks);
} lg_session_tasks __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_session_limits);
} lg_session_limits __weak SEC(".maps");

/* The names whose exec starts a session (enum lg_auto_flags), by the
 * FNV-1a hash of the name without its version suffix. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_AUTO_NAMES);
	__type(key, __u64);
	__type(value, __u32);
} lg_auto_names __weak SEC(".maps");

/* Cgroups every process of which is protected, by cgroup v2 id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_PROTECTED_CGROUPS);
	__type(key, __u64);
	__type(value, struct lg_cgroup_protection);
} lg_protected_cgroups __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_cgroup_filter);
} lg_cgroup_filter __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_SETTING_COUNT);
	__type(key, __u32);
	__type(value, struct lg_settings);
} lg_settings __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LG_RINGBUF_BYTES);
} lg_events __weak SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lg_counters __weak SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&lg_counters, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Whether the map a setting counts holds anything. */
static __always_inline bool any(__u32 setting)
{
	struct lg_settings *s = bpf_map_lookup_elem(&lg_settings, &setting);

	return s && s->count;
}

#endif
