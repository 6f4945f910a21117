/* The one decision every refusing hook ends in. A hook first rules out,
 * as cheaply as it can, acts that touch nothing protected (every process
 * on the machine pays for that part); what is left is refused when the
 * actor is a session member, with one event, and allowed otherwise. */
#ifndef LG_BPF_GATE_H
#define LG_BPF_GATE_H

#include "report.h"

/* No session anywhere. Hooks whose actor is the current task ask
 * member_session() first instead, which for a process that is no member
 * is one load; this is for the hooks that mark or whose actor is not the
 * current task. */
static __always_inline bool sessions_exist(void)
{
	return any(LG_SETTING_SESSIONS);
}

/* `session`: the actor's (member_session()), 0 when it is no member. */
static __always_inline int refuse_task_act(__u64 session, __u32 hook, struct task_struct *target,
					   int sig, __u32 detail)
{
	if (!session)
		return 0;
	report_task(LG_VERDICT_DENIED, hook, session, target, sig, detail);
	return -EPERM;
}

/* A door the policy opened to sessions: asked only of a member's act that
 * would be refused otherwise. */
static __always_inline bool door_allowed(__u32 hook)
{
	__u32 key = 0;
	__u64 *open = bpf_map_lookup_elem(&lg_allowed_doors, &key);

	return open && hook < 64 && ((*open >> hook) & 1);
}

static __always_inline int refuse_object_act(__u64 session, __u32 hook, struct dentry *d,
					     __u64 object, __u32 detail, __u32 target_pid)
{
	if (!session || door_allowed(hook))
		return 0;
	report_object(LG_VERDICT_DENIED, hook, session, d, object, detail, target_pid);
	return -EPERM;
}

/* A member's act on a process, refused when the process is protected. */
static __always_inline int session_act_on_task(__u64 session, __u32 hook, struct task_struct *target,
					       int sig, __u32 detail)
{
	if (!session || !target_protected(target))
		return 0;
	return refuse_task_act(session, hook, target, sig, detail);
}

static __noinline int candidate_act_on_task(struct task_struct *leader, __u32 hook,
					    struct task_struct *target, int sig, __u32 detail)
{
	return session_act_on_task(session_of_candidate(leader), hook, target, sig, detail);
}

/* The current task's act on a process, for hooks that name one. The
 * actor's membership first: it settles every process on the machine that
 * is no member in one load, where the target's protection walks its
 * cgroups. */
static __always_inline int member_act_on_task(__u32 hook, struct task_struct *target, int sig,
					      __u32 detail)
{
	struct task_struct *leader = member_candidate();

	return leader ? candidate_act_on_task(leader, hook, target, sig, detail) : 0;
}

/* The current task's act on a guarded object the caller has found. */
static __always_inline int member_act_on_object(__u32 hook, struct dentry *d, __u64 object,
						__u32 detail, __u32 target_pid)
{
	return refuse_object_act(member_session(), hook, d, object, detail, target_pid);
}

#endif
