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

/* 32 nested user namespaces is the kernel's limit, plus the machine's. */
#define LG_USERNS_LEVELS 33

/* fanotify_mark() flags: only an added mark is counted, and not at all in
 * a group made with FAN_UNLIMITED_MARKS. */
#define LG_FAN_MARK_ADD 0x1
#define LG_FAN_UNLIMITED_MARKS 0x20

/* Whether user `uc` is into its reserve of count `type`, at any level of
 * its user namespaces: `taken` says the act's own one is already
 * counted. The limit crossed in *max. */
static __always_inline bool into_reserve(struct ucounts *uc, int type, bool taken, long *max)
{
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

/* The notification group behind descriptor `fd` of the current task:
 * the call already checked it is an inotify (or fanotify) one. */
static __always_inline struct fsnotify_group *group_of_fd(__u64 fd)
{
	struct fdtable *fdt = BPF_CORE_READ(bpf_get_current_task_btf(), files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *file = 0;

	if (fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
	return file ? BPF_CORE_READ(file, private_data) : 0;
}

#define LG_UCOUNT(name) (bpf_core_enum_value_exists(enum ucount_type, name) ? bpf_core_enum_value(enum ucount_type, name) : -1)

/* Which of the user's counts the current call takes (enum
 * lg_user_count_detail), 0 for none. */
static __always_inline __u32 counted_by_call(bool *compat)
{
	__u64 nr = current_syscall(compat);

	if (*compat) {
		switch (nr) {
		case LG_NR_COMPAT_INOTIFY_INIT:
		case LG_NR_COMPAT_INOTIFY_INIT1: return LG_USER_COUNT_INOTIFY_INSTANCES;
		case LG_NR_COMPAT_INOTIFY_ADD_WATCH: return LG_USER_COUNT_INOTIFY_WATCHES;
		case LG_NR_COMPAT_FANOTIFY_INIT: return LG_USER_COUNT_FANOTIFY_GROUPS;
		case LG_NR_COMPAT_FANOTIFY_MARK: return LG_USER_COUNT_FANOTIFY_MARKS;
		}
		return 0;
	}
	switch (nr) {
#ifdef LG_NR_INOTIFY_INIT
	case LG_NR_INOTIFY_INIT:
#endif
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
 * just before, to its effective user, and undone when that fails), a
 * watch or mark at path_notify (counted after, to the user that made its
 * group). Each call reaches only its own hook. */
static __always_inline int refuse_from_reserve(__u64 session)
{
	bool compat;
	__u64 fd, flags;
	__u32 which = counted_by_call(&compat);
	struct ucounts *uc = 0;
	int type = -1;

	if (!which)
		return 0;
	current_syscall_args(compat, &fd, &flags);
	switch (which) {
	case LG_USER_COUNT_INOTIFY_INSTANCES:
	case LG_USER_COUNT_FANOTIFY_GROUPS: {
		const struct cred *cred = bpf_get_current_task_btf()->cred;

		type = which == LG_USER_COUNT_INOTIFY_INSTANCES ? LG_UCOUNT(UCOUNT_INOTIFY_INSTANCES)
								: LG_UCOUNT(UCOUNT_FANOTIFY_GROUPS);
		uc = BPF_CORE_READ(cred, ucounts);
		/* The credentials' counts are their real user's; the kernel
		 * charges the effective one, whose counts no pointer leads to:
		 * a member acting as another user makes none. */
		if (BPF_CORE_READ(cred, euid.val) != BPF_CORE_READ(uc, uid.val))
			uc = 0;
		break;
	}
	case LG_USER_COUNT_INOTIFY_WATCHES: {
		struct fsnotify_group *group = group_of_fd(fd);

		type = LG_UCOUNT(UCOUNT_INOTIFY_WATCHES);
		uc = BPF_CORE_READ(group, inotify_data.ucounts);
		break;
	}
	case LG_USER_COUNT_FANOTIFY_MARKS: {
		struct fsnotify_group *group = group_of_fd(fd);

		if (!(flags & LG_FAN_MARK_ADD) ||
		    (BPF_CORE_READ(group, fanotify_data.flags) & LG_FAN_UNLIMITED_MARKS))
			return 0;
		type = LG_UCOUNT(UCOUNT_FANOTIFY_MARKS);
		uc = BPF_CORE_READ(group, fanotify_data.ucounts);
		break;
	}
	}
	if (type < 0)
		return 0;
	bool made = which == LG_USER_COUNT_INOTIFY_INSTANCES || which == LG_USER_COUNT_FANOTIFY_GROUPS;
	long max = 0;

	if (uc && !into_reserve(uc, type, made, &max))
		return 0;
	if (door_allowed(LG_HOOK_USER_COUNTS))
		return 0;
	report_object(LG_VERDICT_DENIED, LG_HOOK_USER_COUNTS, session, 0, max, which, 0);
	return made ? -EMFILE : -ENOSPC;
}

#endif
