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

/* The current task's thread-group leader when it may be a session
 * member; 0 settles that it is none. The first check of every hook whose
 * actor is the current task, and all that a process that is no member
 * pays there. Hooks on paths every process takes continue in a subprogram
 * (__noinline): the hook's own code then stays this small, and so does
 * its prologue, which saves the registers the whole program uses. */
static __always_inline struct task_struct *member_candidate(void)
{
	struct task_struct *leader = bpf_get_current_task_btf()->group_leader;

	if (may_have_marks(leader))
		return leader;
	/* Two tests, not one: clang would OR the storage pointer with the
	 * gate, pointer arithmetic the verifier refuses. */
	asm volatile("" ::: "memory");
	return lg_unmarked_members ? leader : 0;
}

/* The session `leader` (the current task's, from member_candidate())
 * belongs to, or 0. Membership sticks to the process tree: a descendant
 * forked inside a session carries a mark that moving to another cgroup
 * does not remove. */
static __noinline __u64 session_of_candidate(struct task_struct *leader)
{
	struct lg_member *m = 0;

	if (may_have_marks(leader))
		m = bpf_task_storage_get(&lg_members, leader, 0, 0);
	if (m && bpf_map_lookup_elem(&lg_sessions, &m->session_cgroup_id))
		return m->session_cgroup_id;
	/* A mark of a session that has ended: a process that lived on in a
	 * cgroup tagged meanwhile (marked then, it kept its live mark) is a
	 * member of that cgroup's session. */
	if (!m && !lg_unmarked_members)
		return 0;
	__u64 s = current_session();

	if (s || !lg_unmarked_members)
		return s;
	return marked_session(leader->real_parent->group_leader);
}

/* The session the current task belongs to, or 0. */
static __always_inline __u64 member_session(void)
{
	struct task_struct *leader = member_candidate();

	return leader ? session_of_candidate(leader) : 0;
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

/* A protection mark for `task`, new or already there; a failure is
 * counted. */
static __always_inline struct lg_protected *make_protection_mark(struct task_struct *task)
{
	struct lg_protected *m =
		bpf_task_storage_get(&lg_protected, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!m)
		count(LG_COUNTER_INHERIT_FAILED);
	return m;
}

/* An exec by a thread that is not its process's leader makes that thread
 * the leader (de_thread) and the old leader, with its marks, goes. The
 * exec'ing thread takes copies first, before that point: membership and
 * protection stay with the process. */
static __always_inline void carry_marks_through_exec(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *leader = t->group_leader;

	if (t == leader || !may_have_marks(leader))
		return;
	struct lg_member *m = bpf_task_storage_get(&lg_members, leader, 0, 0);

	if (m && bpf_map_lookup_elem(&lg_sessions, &m->session_cgroup_id))
		mark_member(t, m->session_cgroup_id);
	struct lg_protected *pm = bpf_task_storage_get(&lg_protected, leader, 0, 0);

	if (!pm)
		return;
	struct lg_protected *cm = make_protection_mark(t);

	if (!cm)
		return;
	cm->since_boot_ns = pm->since_boot_ns;
	cm->source = pm->source;
	cm->flags = pm->flags;
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
