/* What the kernel counts per user, not per process: inotify instances and
 * watches, fanotify groups and marks. A member that takes all of its
 * user's leaves every other process of that user, a service among them,
 * unable to watch a file: its next start fails (EMFILE, ENOSPC). So a
 * member may not take the last eighth of any of them; that reserve stays
 * for the processes outside sessions.
 *
 * The counts are the user's ucounts (kernel/ucount.c), charged at every
 * level of its user namespaces, each level with its own limit. They are
 * read where the kernel makes the thing counted: a watch or mark at
 * path_notify, before it is counted; an instance or group when its file
 * is allocated, just after (no hook sees the count change itself). Both
 * hooks serve other calls, so the call is told by its number. */
#ifndef LG_BPF_USER_COUNTS_H
#define LG_BPF_USER_COUNTS_H

#include "gate.h"
#include "syscall.h"

#define LG_EMFILE 24
#define LG_ENOSPC 28
/* 32 nested user namespaces is the kernel's limit, plus the machine's. */
#define LG_USERNS_LEVELS 33

/* Whether the current task's user is into its reserve of count `type`,
 * at any level of its user namespaces: `taken` says the act's own one is
 * already counted. The limit crossed in *max. The task's credentials
 * name its real user, which the kernel charges for everything but a
 * setuid program's own calls (those go to its effective user). */
static __always_inline bool into_reserve(int type, bool taken, long *max)
{
	struct ucounts *uc = BPF_CORE_READ(bpf_get_current_task_btf(), cred, ucounts);

	for (int level = 0; level < LG_USERNS_LEVELS && uc; level++) {
		struct user_namespace *ns = BPF_CORE_READ(uc, ns);
		long limit = 0, count = 0;

		if (bpf_core_read(&limit, sizeof(limit), &ns->ucount_max[type]) ||
		    bpf_core_read(&count, sizeof(count), &uc->ucount[type]))
			return false;
		long reserve = limit >> 3 ? limit >> 3 : 1;

		if (count + !taken > limit - reserve) {
			*max = limit;
			return true;
		}
		uc = BPF_CORE_READ(ns, ucounts);
	}
	return false;
}

#define LG_UCOUNT(name) (bpf_core_enum_value_exists(enum ucount_type, name) ? bpf_core_enum_value(enum ucount_type, name) : -1)

/* Which of the user's counts the current call takes (enum
 * lg_user_count_detail), 0 for none. */
static __always_inline __u32 counted_by_call(void)
{
	bool compat;
	__u64 nr = current_syscall(&compat);

	if (compat) {
		switch (nr) {
		case LG_NR_IA32_INOTIFY_INIT:
		case LG_NR_IA32_INOTIFY_INIT1: return LG_USER_COUNT_INOTIFY_INSTANCES;
		case LG_NR_IA32_INOTIFY_ADD_WATCH: return LG_USER_COUNT_INOTIFY_WATCHES;
		case LG_NR_IA32_FANOTIFY_INIT: return LG_USER_COUNT_FANOTIFY_GROUPS;
		case LG_NR_IA32_FANOTIFY_MARK: return LG_USER_COUNT_FANOTIFY_MARKS;
		}
		return 0;
	}
	switch (nr) {
	case LG_NR_INOTIFY_INIT:
	case LG_NR_INOTIFY_INIT1: return LG_USER_COUNT_INOTIFY_INSTANCES;
	case LG_NR_INOTIFY_ADD_WATCH: return LG_USER_COUNT_INOTIFY_WATCHES;
	case LG_NR_FANOTIFY_INIT: return LG_USER_COUNT_FANOTIFY_GROUPS;
	case LG_NR_FANOTIFY_MARK: return LG_USER_COUNT_FANOTIFY_MARKS;
	}
	return 0;
}

/* A member's call that would take from its user's reserve, refused with
 * the errno of the kernel's own limit. Asked where the kernel makes what
 * is counted: an instance or group at its file's allocation (counted
 * just before, and undone when that fails), a watch or mark at
 * path_notify (counted after). Each call reaches only its own hook. */
static __always_inline int refuse_from_reserve(__u64 session)
{
	__u32 which = counted_by_call();
	int type = -1;

	switch (which) {
	case LG_USER_COUNT_INOTIFY_INSTANCES: type = LG_UCOUNT(UCOUNT_INOTIFY_INSTANCES); break;
	case LG_USER_COUNT_INOTIFY_WATCHES: type = LG_UCOUNT(UCOUNT_INOTIFY_WATCHES); break;
	case LG_USER_COUNT_FANOTIFY_GROUPS: type = LG_UCOUNT(UCOUNT_FANOTIFY_GROUPS); break;
	case LG_USER_COUNT_FANOTIFY_MARKS: type = LG_UCOUNT(UCOUNT_FANOTIFY_MARKS); break;
	}
	if (type < 0)
		return 0;
	bool made = which == LG_USER_COUNT_INOTIFY_INSTANCES || which == LG_USER_COUNT_FANOTIFY_GROUPS;
	long max = 0;

	if (!into_reserve(type, made, &max) || door_allowed(LG_HOOK_USER_COUNTS))
		return 0;
	report_object(LG_VERDICT_DENIED, LG_HOOK_USER_COUNTS, session, 0, max, which, 0);
	return made ? -LG_EMFILE : -LG_ENOSPC;
}

#endif
