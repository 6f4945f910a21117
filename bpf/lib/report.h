/* The ring-buffer record of a refusal (or, audit-only, of an act that
 * enforcement would have refused), and the per-door counters. The
 * culprit's ancestors and command line go into the record: by the time
 * userspace reads it, a short-lived test helper may be gone. */
#ifndef LG_BPF_REPORT_H
#define LG_BPF_REPORT_H

#include "cgroups.h"

/* Which [[protect]] protects a process: its mark's source, its inheriting
 * parent's, or its protected cgroup's. Only on the refusal path. */
static __always_inline __u32 protection_source(struct task_struct *p)
{
	struct lg_protected *m = covering_mark(p);

	if (m)
		return m->source;
	struct lg_cgroup_protection *cp = covering_cgroup(task_cgroup(p));

	return cp ? cp->source : LG_SOURCE_UNKNOWN;
}

/* A call of its own: the hooks that report have little stack left. */
static __noinline void describe_culprit(struct lg_event *e)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *a = BPF_CORE_READ(t, group_leader, real_parent);
	__u32 n = 0;

	for (int i = 0; i < LG_CHAIN_LEN; i++) {
		if (!a)
			break;
		__u32 pid = BPF_CORE_READ(a, tgid);

		if (!pid)
			break;
		e->chain[i].pid = pid;
		e->chain[i]._pad = 0;
		BPF_CORE_READ_STR_INTO(&e->chain[i].comm, a, group_leader, comm);
		n = i + 1;
		if (pid == 1)
			break;
		a = BPF_CORE_READ(a, group_leader, real_parent);
	}
	e->chain_len = n;
	/* Its number as the container it runs in knows it: numbers[level]
	 * of its struct pid (a flexible array, hence the arithmetic), read
	 * straight into the record (the hooks' stacks are full); a failed
	 * read leaves it zero. */
	struct pid *tp = BPF_CORE_READ(t, group_leader, thread_pid);
	__u32 level = BPF_CORE_READ(tp, level);

	e->ns_pid = 0;
	if (level > 0 && level < 32)
		bpf_probe_read_kernel(&e->ns_pid, sizeof(e->ns_pid),
				      (void *)tp + bpf_core_field_offset(struct pid, numbers) +
					      level * bpf_core_type_size(struct upid) +
					      bpf_core_field_offset(struct upid, nr));
	__u64 start = BPF_CORE_READ(t, mm, arg_start);
	__u64 end = BPF_CORE_READ(t, mm, arg_end);
	__u64 len = end > start ? end - start : 0;

	if (len > LG_ARGS_LEN)
		len = LG_ARGS_LEN;
	e->args_len = 0;
	if (len && !bpf_probe_read_user(e->args, len & 0xff, (void *)start))
		e->args_len = len & 0xff;
}

/* bpf/current_test.bpf.c */
extern int lg_current_test(void);

/* Counts the refusal and reserves its record, filled with what every door
 * reports; 0 when the ring buffer is full (counted as lost). */
static __always_inline struct lg_event *event_start(__u32 verdict, __u32 hook, __u64 session)
{
	count(LG_COUNTER_DENIED + hook);
	struct lg_event *e = bpf_ringbuf_reserve(&lg_events, sizeof(*e), 0);

	if (!e) {
		count(LG_COUNTER_EVENTS_LOST);
		return 0;
	}
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	e->boot_ns = bpf_ktime_get_boot_ns();
	e->session_cgroup_id = session;
	e->verdict = verdict;
	e->target_source = LG_SOURCE_UNKNOWN;
	describe_culprit(e);
	e->hook = hook;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->target_pid = 0;
	e->target_tid = 0;
	e->signal = 0;
	e->detail = 0;
	e->object_id = 0;
	e->target_comm[0] = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->test[0] = 0;
	if (lg_current_test() > 0) {
		__u32 zero = 0;
		struct lg_test_text *text = bpf_map_lookup_elem(&lg_test_scratch, &zero);

		if (text)
			__builtin_memcpy(e->test, text->text, sizeof(e->test));
	}
	return e;
}

/* An act aimed at a process. */
static __always_inline void report_task(__u32 verdict, __u32 hook, __u64 session,
					struct task_struct *target, int sig, __u32 detail)
{
	struct lg_event *e = event_start(verdict, hook, session);

	if (!e)
		return;
	e->target_source = protection_source(target);
	e->target_pid = BPF_CORE_READ(target, tgid);
	e->target_tid = BPF_CORE_READ(target, pid);
	e->signal = sig;
	e->detail = detail;
	BPF_CORE_READ_STR_INTO(&e->target_comm, target, group_leader, comm);
	bpf_ringbuf_submit(e, 0);
}

/* An act aimed at a file, a cgroup or a kernel object; the record names
 * the dentry, when there is one, and the policy entry that protects the
 * object when one does (`source`, else LG_SOURCE_UNKNOWN). */
static __always_inline void report_object_of(__u32 verdict, __u32 hook, __u64 session,
					     struct dentry *d, __u64 object, __u32 detail,
					     __u32 target_pid, __u32 source)
{
	struct lg_event *e = event_start(verdict, hook, session);

	if (!e)
		return;
	e->target_source = source;
	e->object_id = object;
	e->detail = detail;
	e->target_pid = target_pid;
	if (d)
		bpf_probe_read_kernel_str(e->target_comm, sizeof(e->target_comm),
					  BPF_CORE_READ(d, d_name.name));
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void report_object(__u32 verdict, __u32 hook, __u64 session,
					  struct dentry *d, __u64 object, __u32 detail,
					  __u32 target_pid)
{
	report_object_of(verdict, hook, session, d, object, detail, target_pid, LG_SOURCE_UNKNOWN);
}

#endif
