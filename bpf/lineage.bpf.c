// SPDX-License-Identifier: GPL-2.0
/* Marks and lineage: who is protected and who is a member follows the
 * process tree. A fork by a supervisor whose children inherit protection
 * marks the child before it runs, so a restarted service has no
 * unprotected moment; a fork inside a session marks the child a member, so
 * it stays one wherever it goes. */
#include "lib/hook.h"
#include "lib/gate.h"
#include "lib/keepers.h"

char LICENSE[] SEC("license") = "GPL";

/* `parent` is the current task. */
static __always_inline void inherit_protection(struct task_struct *parent, struct task_struct *task)
{
	struct lg_protected *pm = protection_mark(parent->group_leader);

	if (!pm || !(pm->flags & LG_PROTECT_INHERIT))
		return;
	struct lg_protected *cm = make_protection_mark(task);

	if (!cm)
		return;
	if (!cm->since_boot_ns) {
		cm->since_boot_ns = bpf_ktime_get_boot_ns();
		cm->source = pm->source;
		cm->flags = LG_PROTECT_INHERITED;
	}
}

/* A session's live tasks, when it has an entry (made at a member's first
 * fork while a limit is set). Never below 0: a member that was not
 * forked in the session (its root, a process in a cgroup tagged later)
 * exits uncounted, and would otherwise leave room for one more task
 * each, for as long as the session lasts. */
static __always_inline void count_tasks(__u64 session, __s64 n)
{
	struct lg_session_tasks *t = bpf_map_lookup_elem(&lg_session_tasks, &session);

	if (t && (n > 0 || t->live > 0))
		__sync_fetch_and_add(&t->live, n);
}

/* A fork storm in a session would leave a protected service that runs as
 * the same user (RLIMIT_NPROC), or the machine (pid_max, threads-max),
 * with no room to fork: a session holds at most [sessions] max_tasks
 * tasks, and the fork past it fails with EAGAIN, as at a cgroup's
 * pids.max. A task counts from sched_process_fork on, so forks under way
 * at once (each may sleep between here and there) can pass the limit by
 * as many as are under way: a storm of N forkers by up to N. */
static __always_inline int session_task_limit(__u64 session)
{
	__u32 zero = 0;
	struct lg_session_limits *l = bpf_map_lookup_elem(&lg_session_limits, &zero);

	if (!l || !l->max_tasks)
		return 0;
	__u32 limit = l->max_tasks;
	struct lg_session_tasks *t = bpf_map_lookup_elem(&lg_session_tasks, &session);

	if (!t) {
		struct lg_session_tasks fresh = {};

		bpf_map_update_elem(&lg_session_tasks, &session, &fresh, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&lg_session_tasks, &session);
	}
	__u32 detail = LG_TASKS_LIMIT;

	if (!t)
		detail = LG_TASKS_MAP_FULL;
	else if (t->live < (__s64)limit)
		return 0;
	report_object(LG_VERDICT_DENIED, LG_HOOK_TASKS, session, 0, limit, detail, 0);
	return -EAGAIN;
}

/* An io_uring worker is made by copy_process() alone, which never fires
 * sched_process_fork, but it exits like any thread: it is counted here,
 * once it may be made (a later failure of copy_process leaves it counted,
 * a stricter count, never a looser one). */
#define LG_PF_IO_WORKER 0x00000010

/* A member's fork: where the child may be born, and whether the session
 * has room for it. Apart, so that every other fork pays one load. */
static __noinline int member_fork(struct task_struct *leader, struct task_struct *task,
				  unsigned long clone_flags)
{
	__u64 session = session_of_candidate(leader);

	if (!session)
		return 0;
	if (clone_flags & CLONE_INTO_CGROUP) {
		int r = refuse_object_act(session, LG_HOOK_CLONE_INTO_CGROUP, 0, 0, 0, 0);

		if (r)
			return r;
	}
	int r = session_task_limit(session);

	if (!r && (task->flags & LG_PF_IO_WORKER))
		count_tasks(session, 1);
	return r;
}

/* Protection is inherited before the child runs. Threads share their
 * leader's marks and need none. A member may not start a child in another
 * cgroup (clone3 CLONE_INTO_CGROUP): it would be born outside its
 * session's cgroup, or inside a protected service's, where exhausting the
 * memory limit makes the OOM killer pick the service. Moves by
 * cgroup.procs are refused the same way (bpf/file_doors.bpf.c). */
LG_HOOK(task_alloc, lg_task_alloc, struct task_struct *, task, unsigned long, clone_flags)
{
	if (ret)
		return ret;
	struct task_struct *leader = member_candidate();

	if (leader) {
		int r = member_fork(leader, task, clone_flags);

		if (r)
			return r;
	}
	if (clone_flags & CLONE_THREAD)
		return 0;
	inherit_protection(bpf_get_current_task_btf(), task);
	return 0;
}

/* A protected process that asks to die with its parent makes that parent
 * as vital as itself, from the moment it asks. */
LG_HOOK(task_prctl, lg_task_prctl, int, option, unsigned long, arg2)
{
	if (ret || option != PR_SET_PDEATHSIG || !arg2)
		return ret;
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 source;

	if (protecting_source(t, &source))
		protect_keeper(t, source);
	return 0;
}

/* Membership is marked here: the child is in its final cgroup (a
 * clone3 CLONE_INTO_CGROUP included) and has not run yet. A member's
 * child joins its parent's session; any other child joins the session of
 * the tagged cgroup it was born in, if any. A tag made while this runs is
 * no gap: the child is already listed in its cgroup when the loader marks
 * what the tagged cgroup holds. A supervisor's child gets its number only
 * after task_alloc: it is recorded here for the doors that name a process
 * by number. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lg_fork, struct task_struct *parent, struct task_struct *child)
{
	bool thread = child->pid != child->tgid;

	if (sessions_exist()) {
		__u64 session = member_session();
		bool inherited = session;

		if (!session)
			session = session_of_cgroup(child->cgroups->dfl_cgrp);
		if (session) {
			/* A thread born in a tagged cgroup (threaded cgroups
			 * hold threads of one process apart) makes its whole
			 * process a member; a member's thread needs no mark. */
			if (!thread)
				mark_member(child, session);
			else if (!inherited)
				mark_member(child->group_leader, session);
			count_tasks(session, 1);
		}
	}
	if (thread)
		return 0;
	/* Without the LSM, protection is inherited here, as the child starts. */
	if (lg_audit_only)
		inherit_protection(bpf_get_current_task_btf(), child);
	if (protection_mark(child))
		record_protected_pid(child);
	return 0;
}

/* What is kept by thread or process number goes with it: an argv copy of
 * an exec that failed before its check, and a protected process's number
 * once its last thread is gone. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(lg_exit, struct task_struct *p)
{
	/* Argv copies exist only for members, who carry a mark. */
	if (may_have_marks(p->group_leader) || lg_unmarked_members) {
		__u32 tid = p->pid;

		bpf_map_delete_elem(&lg_exec_args, &tid);
		__u64 session = member_session();

		if (session)
			count_tasks(session, -1);
	}
	if (p->signal->live.counter)
		return 0;
	if (!protection_mark(p->group_leader))
		return 0;
	__u32 tgid = p->tgid;

	bpf_map_delete_elem(&lg_protected_pids, &tgid);
	return 0;
}

/* A task moved into a tagged cgroup (or below one) becomes a member of
 * its session. A protected process moved to another cgroup (by a
 * supervisor, say) makes that cgroup and its ancestors guarded at once. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(lg_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	/* Only the unified hierarchy's: a v1 hierarchy numbers its cgroups
	 * apart, and one may share a tagged or guarded cgroup's number. */
	if (dst->root->hierarchy_id != 0)
		return 0;
	if (sessions_exist()) {
		__u64 session = session_of_cgroup(dst);

		if (session)
			mark_member(task->group_leader, session);
	}
	if (!is_protected(task))
		return 0;
	__u32 one = 1;
	struct cgroup *cg = dst;

	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);

		bpf_map_update_elem(&lg_guarded_cgroups, &id, &one, BPF_ANY);
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return 0;
}
