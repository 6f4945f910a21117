/* Who a process is to liveguard: protected (a mark on it, or on the
 * inheriting supervisor that forked it) and a session member (a mark made
 * at fork inside a session, or a tagged cgroup it runs in). Marks live in
 * task-local storage, so they die with the process and a PID reused later
 * carries none. */
#ifndef LG_BPF_MARKS_H
#define LG_BPF_MARKS_H

#include "maps.h"

/* Membership is a mark on the thread-group leader, made wherever a task
 * becomes a member: at fork inside a session (lineage.bpf.c), when it
 * arrives in a tagged cgroup (fork there, or a move), at `tag` for the
 * tasks already there (the loader), and at the exec or `run` that starts a
 * process session. So a task with no BPF local storage at all is no
 * member, and every process on the machine that is none learns it in one
 * load. Only when the kernel failed to make a mark (task storage refuses
 * creation while another storage operation holds this CPU) is this
 * nonzero; from then on the cgroup and the parent's mark are asked too,
 * as they were for every process before. Not pinned: a load that reuses
 * pinned maps sets it, as the marks behind them may be missing. */
__u64 lg_unmarked_members __weak = 0;

/* A task with no BPF local storage at all carries no mark of ours. Most
 * processes have none, and reading the pointer is one load where asking
 * the map is a helper call that disables migration. A mark being created
 * concurrently is missed either way. */
static __always_inline bool may_have_marks(struct task_struct *t)
{
	return t->bpf_storage;
}

/* The tagged cgroup `cg` is in (itself or an ancestor), or 0. Level 0 is
 * the root cgroup, which `tag` refuses. Direct loads: `cg` comes typed. */
static __always_inline __u64 session_of_cgroup(struct cgroup *cg)
{
	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		struct cgroup_subsys_state *parent = cg->self.parent;

		if (!parent)
			break;
		__u64 id = cg->kn->id;

		if (bpf_map_lookup_elem(&lg_sessions, &id))
			return id;
		cg = parent->cgroup;
	}
	return 0;
}

/* The same for the current task, from the ancestors the kernel keeps. */
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

static __always_inline struct lg_protected *protection_mark(struct task_struct *leader)
{
	if (!may_have_marks(leader))
		return 0;
	return bpf_task_storage_get(&lg_protected, leader, 0, 0);
}

/* A member mark counts while its session is still tagged. */
static __always_inline __u64 marked_session(struct task_struct *leader)
{
	if (!may_have_marks(leader))
		return 0;
	struct lg_member *m = bpf_task_storage_get(&lg_members, leader, 0, 0);

	if (m && bpf_map_lookup_elem(&lg_sessions, &m->session_cgroup_id))
		return m->session_cgroup_id;
	return 0;
}

/* The session the current task belongs to, or 0: the first check of every
 * hook whose actor is the current task. Membership sticks to the process
 * tree: a descendant forked inside a session carries a mark that moving
 * to another cgroup does not remove. */
static __always_inline __u64 member_session(void)
{
	struct task_struct *leader = bpf_get_current_task_btf()->group_leader;

	if (!may_have_marks(leader) && !lg_unmarked_members)
		return 0;
	__u64 s = marked_session(leader);

	if (s || !lg_unmarked_members)
		return s;
	s = current_session();
	if (s)
		return s;
	return marked_session(leader->real_parent->group_leader);
}

/* Marks `leader` a member of `session`, unless it is one of a session
 * still tagged. A failure is counted, and opens the fallback above. */
static __always_inline void mark_member(struct task_struct *leader, __u64 session)
{
	struct lg_member *m =
		bpf_task_storage_get(&lg_members, leader, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!m) {
		count(LG_COUNTER_MEMBER_MARK_FAILED);
		__sync_fetch_and_add(&lg_unmarked_members, 1);
		return;
	}
	if (m->since_boot_ns && bpf_map_lookup_elem(&lg_sessions, &m->session_cgroup_id))
		return;
	m->session_cgroup_id = session;
	m->since_boot_ns = bpf_ktime_get_boot_ns();
}

/* Protection is a mark on the thread-group leader, so it covers every
 * thread whichever one a tkill/tgkill names. A child of a supervisor whose
 * children inherit is protected through its parent as well: the mark made
 * at fork can be missing (task storage refuses creation while another
 * storage operation holds this CPU), and the parent's says the same. */
static __always_inline struct lg_protected *covering_mark(struct task_struct *p)
{
	struct task_struct *leader = p->group_leader;
	struct lg_protected *m = protection_mark(leader);

	if (m)
		return m;
	m = protection_mark(leader->real_parent->group_leader);
	return m && (m->flags & LG_PROTECT_INHERIT) ? m : 0;
}

static __always_inline bool is_protected(struct task_struct *p)
{
	return covering_mark(p);
}

#endif
