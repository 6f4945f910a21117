/* Who a process is to liveguard: protected (a mark on it, or on the
 * inheriting supervisor that forked it) and a session member (a mark made
 * at fork inside a session, or a tagged cgroup it runs in). Marks live in
 * task-local storage, so they die with the process and a PID reused later
 * carries none. */
#ifndef LG_BPF_MARKS_H
#define LG_BPF_MARKS_H

#include "maps.h"

/* The tagged cgroup that makes the current task a session member by where
 * it runs, or 0. Level 0 is the root cgroup, which `tag` refuses, so the
 * walk starts at 1. */
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

/* A task with no BPF local storage at all carries no mark of ours. Most
 * processes have none, and reading the pointer is one load where asking
 * the map is a helper call that disables migration: on the kill and fork
 * paths of every process that difference is most of the hook's cost. A
 * mark being created concurrently is missed either way. */
static __always_inline bool may_have_marks(struct task_struct *t)
{
	return t->bpf_storage;
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

/* The session the current task belongs to, or 0. Membership sticks to the
 * process tree: a descendant forked inside a session carries a mark that
 * moving to another cgroup does not remove. The parent's mark stands in
 * for a child's that could not be created at fork. */
static __always_inline __u64 member_session(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *leader = t->group_leader;
	__u64 s = marked_session(leader);

	if (s)
		return s;
	s = current_session();
	if (s)
		return s;
	return marked_session(leader->real_parent->group_leader);
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
