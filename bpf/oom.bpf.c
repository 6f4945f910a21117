// SPDX-License-Identifier: GPL-2.0
/* The OOM killer's choice, told. The watcher ranks every session member
 * first (oom_score_adj 1000, which an unprivileged member cannot lower
 * and file_doors.bpf.c keeps a root one from writing), so a member that
 * ate the memory goes before a service. Every OOM kill, the machine's or
 * a cgroup's memory.max, marks its victim in mark_oom_victim(), in the
 * task whose allocation found no memory: that task is the event's actor
 * (its test is named), the victim its target. A member taken is reported;
 * so is a protected process, which the order exists to spare. */
#include "lib/hook.h"
#include "lib/gate.h"

SEC("fentry/mark_oom_victim")
int BPF_PROG(lg_oom_victim, struct task_struct *victim)
{
	struct task_struct *leader = victim->group_leader;
	__u32 kind = LG_OOM_MEMBER_KILLED;
	__u64 session;

	/* Set below, at the process's first mark: a thread of a victim that
	 * allocates while it dies is marked again, and told once. */
	if (victim->signal->oom_mm)
		return 0;
	if (target_protected(victim)) {
		kind = LG_OOM_PROTECTED_KILLED;
		session = member_session();
	} else {
		session = marked_session(leader);
		if (!session && sessions_exist())
			session = session_of_cgroup(victim->cgroups->dfl_cgrp);
		if (!session)
			return 0;
	}
	struct lg_event *e = event_start(LG_VERDICT_KILLED, LG_HOOK_OOM, session);

	if (!e)
		return 0;
	e->target_source = kind == LG_OOM_PROTECTED_KILLED ? protection_source(victim) : LG_SOURCE_UNKNOWN;
	e->target_pid = victim->tgid;
	e->target_tid = victim->pid;
	e->signal = 9; /* SIGKILL, sent by the OOM killer with no kill check */
	e->detail = kind;
	/* Why it was chosen: its oom_score_adj, plus 1000 (0 to 2000). */
	e->object_id = (__u64)(victim->signal->oom_score_adj + 1000);
	BPF_CORE_READ_STR_INTO(&e->target_comm, leader, comm);
	bpf_ringbuf_submit(e, 0);
	return 0;
}
