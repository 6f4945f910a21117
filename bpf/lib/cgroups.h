/* Protection by cgroup: a process is protected when its cgroup or an
 * ancestor is (a systemd unit, a `cgroup =` policy entry), and a cgroup is
 * guarded when it holds or is an ancestor of a protected process. Read at
 * the time of the act, so a process started in a protected unit is
 * covered before any userspace watcher could have seen it. */
#ifndef LG_BPF_CGROUPS_H
#define LG_BPF_CGROUPS_H

#include "marks.h"

/* Direct reads, not BPF_CORE_READ: these are plain loads, where
 * BPF_CORE_READ is a probe-read helper call per field, and the cgroup walk
 * runs on every kill. A cgroup's own css points back at it, so the parent
 * comes typed, without a cast the verifier would not follow. */
static __always_inline struct cgroup *cgroup_parent(struct cgroup *cg)
{
	struct cgroup_subsys_state *css = cg->self.parent;

	return css ? css->cgroup : 0;
}

static __always_inline struct cgroup *task_cgroup(struct task_struct *p)
{
	return p->cgroups->dfl_cgrp;
}

static __always_inline bool maybe_protected_cgroup(struct lg_cgroup_filter *f, __u64 id)
{
	return f->words[lg_cgroup_filter_word(id) & (LG_CGROUP_FILTER_BITS / 64 - 1)] &
	       lg_cgroup_filter_bit(id);
}

/* The protection of a cgroup or of its nearest protected ancestor, or 0. */
static __always_inline struct lg_cgroup_protection *covering_cgroup(struct cgroup *cg)
{
	__u32 zero = 0;
	struct lg_cgroup_filter *f = bpf_map_lookup_elem(&lg_cgroup_filter, &zero);

	if (!f)
		return 0;
	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		__u64 id = cg->kn->id;

		if (maybe_protected_cgroup(f, id)) {
			struct lg_cgroup_protection *cp = bpf_map_lookup_elem(&lg_protected_cgroups, &id);

			if (cp)
				return cp;
		}
		cg = cgroup_parent(cg);
	}
	return 0;
}

/* The same walk from a pointer the verifier has no type for (found
 * through i_private or by pointer arithmetic), which direct loads cannot
 * follow: probe reads, on the paths of the side doors only. */
static __always_inline bool cgroup_protected_untyped(struct cgroup *cg)
{
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

static __always_inline bool in_protected_cgroup(struct task_struct *p)
{
	if (!any(LG_SETTING_PROTECTED_CGROUPS))
		return false;
	return covering_cgroup(task_cgroup(p));
}

/* Protected by its mark, its supervisor's, or its cgroup. */
static __always_inline bool target_protected(struct task_struct *p)
{
	return is_protected(p) || in_protected_cgroup(p);
}

/* target_protected() for a task reached through plain kernel memory (a
 * struct pid's task list), a pointer the verifier cannot hand to task
 * storage: its number and start time in lg_protected_pids, or its
 * cgroup. */
static __always_inline bool untyped_task_protected(struct task_struct *t)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);
	__u64 ticks = BPF_CORE_READ(t, group_leader, start_boottime) / NSEC_PER_USER_TICK;
	__u64 *known = bpf_map_lookup_elem(&lg_protected_pids, &tgid);

	if (known && *known == ticks)
		return true;
	return any(LG_SETTING_PROTECTED_CGROUPS) && cgroup_protected_untyped(BPF_CORE_READ(t, cgroups, dfl_cgrp));
}

/* Whether the cgroup is, holds, or is an ancestor of, a protected process. */
static __always_inline bool cgroup_guarded(struct cgroup *cg, __u64 id)
{
	if (bpf_map_lookup_elem(&lg_guarded_cgroups, &id))
		return true;
	return any(LG_SETTING_PROTECTED_CGROUPS) && cgroup_protected_untyped(cg);
}

#endif
