// SPDX-License-Identifier: GPL-2.0
/* Kernel side of liveguard: refuse signals from tagged test sessions to
 * protected processes. Runs on every signal permission check on the
 * machine, so the common case (target not protected) must exit after one
 * task-storage lookup. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "liveguard/abi.h"

#define EPERM 1
#define CLONE_THREAD 0x00010000

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lg_protected);
} lg_protected SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, struct lg_session);
} lg_sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_PROTECTED_CGROUPS);
	__type(key, __u64);
	__type(value, struct lg_cgroup_protection);
} lg_protected_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_SETTING_COUNT);
	__type(key, __u32);
	__type(value, struct lg_settings);
} lg_settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LG_RINGBUF_BYTES);
} lg_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lg_counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&lg_counters, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline bool any(__u32 setting)
{
	struct lg_settings *s = bpf_map_lookup_elem(&lg_settings, &setting);

	return s && s->count;
}

/* The tagged cgroup that makes the current task a session member, or 0.
 * Level 0 is the root cgroup, which `tag` refuses, so the walk starts at 1. */
static __always_inline __u64 current_session(void)
{
	for (int level = 1; level < LG_MAX_CGROUP_LEVEL; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id)
			break;
		if (bpf_map_lookup_elem(&lg_sessions, &id))
			return id;
	}
	return 0;
}

/* Protection is a mark on the thread-group leader, so it covers every
 * thread whichever one a tkill/tgkill names. A child of a supervisor whose
 * children inherit is protected through its parent as well: the mark made
 * at fork can be missing (task storage refuses creation while another
 * storage operation holds this CPU), and the parent's says the same. */
static __always_inline bool is_protected(struct task_struct *p)
{
	struct task_struct *leader = p->group_leader;

	if (bpf_task_storage_get(&lg_protected, leader, 0, 0))
		return true;
	struct lg_protected *pm =
		bpf_task_storage_get(&lg_protected, leader->real_parent->group_leader, 0, 0);
	return pm && (pm->flags & LG_PROTECT_INHERIT);
}


/* Whether the target's cgroup, or an ancestor of it, is protected. Read at
 * signal time, so a process started in a protected unit is covered before
 * any userspace watcher could have seen it. */
static __always_inline bool in_protected_cgroup(struct task_struct *p)
{
	struct cgroup *cg = BPF_CORE_READ(p, cgroups, dfl_cgrp);

	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);

		if (bpf_map_lookup_elem(&lg_protected_cgroups, &id))
			return true;
		/* struct cgroup starts with its css, so a parent css is the
		 * parent cgroup. */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

static __always_inline void report(__u32 hook, __u64 session, struct task_struct *target,
				   int sig)
{
	struct lg_event *e = bpf_ringbuf_reserve(&lg_events, sizeof(*e), 0);

	if (!e) {
		count(LG_COUNTER_EVENTS_LOST);
		return;
	}
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	e->boot_ns = bpf_ktime_get_boot_ns();
	e->session_cgroup_id = session;
	e->verdict = LG_VERDICT_DENIED;
	e->hook = hook;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->target_pid = BPF_CORE_READ(target, tgid);
	e->target_tid = BPF_CORE_READ(target, pid);
	e->signal = sig;
	e->_pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	BPF_CORE_READ_STR_INTO(&e->target_comm, target, group_leader, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("lsm/task_kill")
int BPF_PROG(lg_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	/* Signal 0 only probes for existence: discovery without delivery. */
	if (sig == 0)
		return 0;
	/* No session tagged anywhere: nothing can be refused. */
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	__u64 session;
	if (is_protected(p)) {
		session = current_session();
		if (!session)
			return 0;
	} else {
		if (!any(LG_SETTING_PROTECTED_CGROUPS))
			return 0;
		session = current_session();
		if (!session || !in_protected_cgroup(p))
			return 0;
	}
	count(LG_COUNTER_DENIED_TASK_KILL);
	report(LG_HOOK_TASK_KILL, session, p, sig);
	return -EPERM;
}

/* A fork by a process whose protection is inherited (a supervisor) marks
 * the child before it runs, so a restarted service has no unprotected
 * moment. Threads share their leader's mark and need none. */
SEC("lsm/task_alloc")
int BPF_PROG(lg_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	if (ret)
		return ret;
	if (clone_flags & CLONE_THREAD)
		return 0;
	struct task_struct *parent = bpf_get_current_task_btf();
	struct lg_protected *pm = bpf_task_storage_get(&lg_protected, parent->group_leader, 0, 0);

	if (!pm || !(pm->flags & LG_PROTECT_INHERIT))
		return 0;
	struct lg_protected *cm =
		bpf_task_storage_get(&lg_protected, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!cm) {
		count(LG_COUNTER_INHERIT_FAILED);
		return 0;
	}
	cm->since_boot_ns = bpf_ktime_get_boot_ns();
	cm->source = pm->source;
	cm->flags = LG_PROTECT_INHERITED;
	return 0;
}
