/* Keepers: the parent of a protected process that asked to die with it
 * (PR_SET_PDEATHSIG). The kernel's death signal is sent by the dying
 * parent and passes no check a member could be refused at, so killing the
 * parent would kill the service; the parent is protected instead, for as
 * long as it lives. */
#ifndef LG_BPF_KEEPERS_H
#define LG_BPF_KEEPERS_H

#include "cgroups.h"

/* Numbers recorded for the doors that name a process by number. A full
 * map is counted; those doors then refuse members outright. */
static __always_inline void record_protected_pid(struct task_struct *leader)
{
	__u32 tgid = leader->tgid;
	__u64 ticks = leader->start_boottime / NSEC_PER_USER_TICK;

	if (bpf_map_update_elem(&lg_protected_pids, &tgid, &ticks, BPF_ANY))
		count(LG_COUNTER_PROTECTED_PIDS_FULL);
}

/* Whether `t` is protected, by mark or by cgroup; `source` receives the
 * [[protect]] that protects it. */
static __always_inline bool protecting_source(struct task_struct *t, __u32 *source)
{
	struct lg_protected *m = covering_mark(t);

	if (m) {
		*source = m->source;
		return true;
	}
	if (!any(LG_SETTING_PROTECTED_CGROUPS))
		return false;
	struct lg_cgroup_protection *cp = covering_cgroup(task_cgroup(t));

	if (!cp)
		return false;
	*source = cp->source;
	return true;
}

/* `t` (any thread) is protected, by `source`, and has a death signal. */
static __always_inline void protect_keeper(struct task_struct *t, __u32 source)
{
	struct task_struct *parent = t->real_parent->group_leader;
	struct lg_protected *pm = make_protection_mark(parent);

	if (!pm)
		return;
	if (!pm->since_boot_ns) {
		pm->since_boot_ns = bpf_ktime_get_boot_ns();
		pm->source = source;
		pm->flags = LG_PROTECT_KEEPER;
	}
	record_protected_pid(parent);
}

/* A process already protected is looked at when the loader probes it
 * (signal 0): one that set its death signal before it was protected gets
 * its keeper then. */
static __always_inline void note_keeper(struct task_struct *t)
{
	__u32 source;

	if (t->pdeath_signal && protecting_source(t, &source))
		protect_keeper(t, source);
}

#endif
