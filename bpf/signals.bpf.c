// SPDX-License-Identifier: GPL-2.0
/* Signals and other acts on a protected process: kill and its relatives,
 * ptrace, limits that kill or starve, and SIGIO/SIGURG through F_SETOWN. */
#include "arch/arch.h"
#include "lib/hook.h"
#include "lib/gate.h"
#include "lib/keepers.h"
#include "lib/trees.h"
#include "lib/terminal.h"
#include "lib/syscall.h"

/* Off the path every kill takes (see member_candidate()). */
static __noinline int probed(struct task_struct *p)
{
	note_keeper(p);
	return 0;
}

LG_HOOK(task_kill, lg_task_kill, struct task_struct *, p, int, sig)
{
	if (ret)
		return ret;
	/* Signal 0 only probes for existence: discovery without delivery.
	 * The loader probes every process it protects, so its keeper is
	 * known even when the death signal was set before. */
	if (sig == 0)
		return probed(p);
	return member_act_on_task(LG_HOOK_TASK_KILL, p, sig, 0);
}

/* ptrace, process_vm_*, /proc/<pid>/mem: all pass mm_access() or
 * ptrace_attach(), which ask this hook with PTRACE_MODE_ATTACH. Reads of
 * /proc/<pid>/status and the like ask only for PTRACE_MODE_READ, and so
 * does process_madvise(), which pages the target's memory out (or
 * collapses it): told apart by the call being made, and only for a
 * member. (Since 6.13 a refused read check is retried as
 * perfmon_capable(), which the capable hook refuses in that call.) */
static __always_inline bool in_process_madvise(void)
{
	bool compat;

	/* The same number on every architecture and ABI. */
	return current_syscall(&compat) == LG_NR_PROCESS_MADVISE;
}

LG_HOOK(ptrace_access_check, lg_ptrace, struct task_struct *, child, unsigned int, mode)
{
	if (ret)
		return ret;
	if (!(mode & PTRACE_MODE_ATTACH) && !(member_session() && in_process_madvise()))
		return 0;
	return member_act_on_task(LG_HOOK_PTRACE, child, 0, mode);
}

/* Limits: a CPU-time limit kills (SIGKILL at the hard limit, with no kill
 * check); priority, scheduler class and I/O priority can starve. */
LG_HOOK(task_setrlimit, lg_setrlimit, struct task_struct *, p)
{
	/* A process may lower its own limits; only another's are guarded. */
	if (ret || p->group_leader == bpf_get_current_task_btf()->group_leader)
		return ret;
	return member_act_on_task(LG_HOOK_LIMITS, p, 0, LG_LIMIT_RLIMIT);
}

LG_HOOK(task_setnice, lg_setnice, struct task_struct *, p)
{
	return ret ? ret : member_act_on_task(LG_HOOK_LIMITS, p, 0, LG_LIMIT_NICE);
}

#define SCHED_FIFO 1
#define SCHED_RR 2
#define SCHED_DEADLINE 6
#define SCHED_RESET_ON_FORK 0x40000000

/* The policy a sched_setscheduler() asks for, read from the caller's
 * registers (the LSM hook names only the target); LG_POLICY_ANY for
 * sched_setattr(), whose struct the kernel has already copied: what is
 * in user memory now may not be what it read. -1 for the other ways here
 * (sched_setparam, affinity, cpuset moves), which never change the class. */
#define LG_POLICY_ANY ((int)LG_DETAIL_SCHED_SETATTR)

static __always_inline int requested_policy(void)
{
	bool compat;
	__u64 nr = current_syscall(&compat), arg1, arg2;

	if (compat ? nr == LG_NR_COMPAT_SCHED_SETATTR : nr == LG_NR_SCHED_SETATTR)
		return LG_POLICY_ANY;
	if (compat ? nr != LG_NR_COMPAT_SCHED_SETSCHEDULER : nr != LG_NR_SCHED_SETSCHEDULER)
		return -1;
	current_syscall_args(compat, &arg1, &arg2);
	return (int)arg2;
}

/* A member may not take a realtime class for anything: realtime spinners
 * on every CPU starve whatever is not realtime, services included. Nor
 * may it use sched_setattr(), whose policy cannot be read reliably here. */
LG_HOOK(task_setscheduler, lg_setscheduler, struct task_struct *, p)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	int policy = requested_policy();

	if (policy > 0)
		policy &= ~SCHED_RESET_ON_FORK;
	if (policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_DEADLINE ||
	    policy == LG_POLICY_ANY) {
		int r = refuse_task_act(session, LG_HOOK_REALTIME, p, 0, policy);

		if (r)
			return r;
	}
	return session_act_on_task(session, LG_HOOK_LIMITS, p, 0, LG_LIMIT_SCHEDULER);
}

LG_HOOK(task_setioprio, lg_setioprio, struct task_struct *, p)
{
	return ret ? ret : member_act_on_task(LG_HOOK_LIMITS, p, 0, LG_LIMIT_IOPRIO);
}

/* SIGIO/SIGURG through F_SETOWN. The signal is sent when I/O happens, by
 * whoever causes it (often an interrupt), so who set the owner is recorded
 * when it is set and checked when the signal goes out. */

/* Kernels before 6.12 embed the owner in struct file; later ones point
 * to it and give it a back pointer. */
struct file___embedded_owner {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

static __always_inline __u64 fown_file(struct fown_struct *fown)
{
	if (bpf_core_field_exists(struct fown_struct, file))
		return (__u64)BPF_CORE_READ(fown, file);
	return (__u64)((void *)fown - bpf_core_field_offset(struct file___embedded_owner, f_owner));
}

/* A member's F_SETOWN is recorded before the owner changes, where it can
 * still be refused: when the map is full, it is. */
static __always_inline int member_sets_owner(struct file *file)
{
	__u64 session = member_session();

	if (!session)
		return 0;
	__u64 key = (__u64)file;

	if (!bpf_map_update_elem(&lg_fowners, &key, &session, BPF_ANY))
		return 0;
	count(LG_COUNTER_FOWNERS_FULL);
	return refuse_object_act(session, LG_HOOK_SIGIO, file->f_path.dentry, 0, LG_DETAIL_MAP_FULL, 0);
}

LG_HOOK(file_fcntl, lg_file_fcntl, struct file *, file, unsigned int, cmd)
{
	if (ret || (cmd != F_SETOWN && cmd != F_SETOWN_EX))
		return ret;
	return member_sets_owner(file);
}

/* Also chattr: an immutable or append-only flag set on a protected file
 * or tree locks its service out of it, and passes no setattr hook; and
 * a terminal a protected process runs in. */
static __always_inline int member_ioctl(struct file *file, unsigned int cmd)
{
	if (terminal_change(cmd))
		return member_terminal_act(file, cmd);
	if (cmd == FS_IOC_SETFLAGS || cmd == FS_IOC32_SETFLAGS || cmd == FS_IOC_FSSETXATTR)
		return tree_change(member_session(), file->f_path.dentry, LG_PATH_SETATTR);
	if (cmd != FIOSETOWN && cmd != SIOCSPGRP)
		return 0;
	return member_sets_owner(file);
}

LG_HOOK(file_ioctl, lg_file_ioctl, struct file *, file, unsigned int, cmd)
{
	return ret ? ret : member_ioctl(file, cmd);
}

/* Where the kernel has this hook (6.8, and 6.1 and 6.6 since their 2024
 * updates), a 32-bit process's ioctl(2) reaches it instead of file_ioctl;
 * before, file_ioctl saw it (programs.cpp). The commands that matter here
 * have the same numbers in both ABIs, or both are listed. */
LG_HOOK(file_ioctl_compat, lg_file_ioctl_compat, struct file *, file, unsigned int, cmd)
{
	return ret ? ret : member_ioctl(file, cmd);
}

struct file___owner_pointer {
	struct fown_struct *f_owner;
} __attribute__((preserve_access_index));

/* Whether anyone ever set the file's owner: only such a file can have an
 * entry. Every close on the machine asks, so the field is read with a
 * typed load of the hook's own argument, not a probe-read helper call. */
static __always_inline bool owner_set(struct file *file)
{
	if (bpf_core_field_exists(struct fown_struct, file))
		return ((struct file___owner_pointer *)file)->f_owner;
	return ((struct file___embedded_owner *)file)->f_owner.pid;
}

LG_OBSERVER(file_free_security, lg_file_free, struct file *, file)
{
	if (!owner_set(file))
		return 0;
	__u64 key = (__u64)file;

	bpf_map_delete_elem(&lg_fowners, &key);
	return 0;
}

/* Every owner change lands here, from fcntl, ioctl, leases and dnotify: a
 * member's is recorded (already, on the fcntl and ioctl paths), anyone
 * else's drops the record. */
LG_OBSERVER(file_set_fowner, lg_set_fowner, struct file *, file)
{
	__u64 key = (__u64)file;
	__u64 session = member_session();

	if (session)
		bpf_map_update_elem(&lg_fowners, &key, &session, BPF_ANY);
	else
		bpf_map_delete_elem(&lg_fowners, &key);
	return 0;
}

/* `current` here is whoever caused the I/O, not the member: the session
 * is the one recorded when the owner was set. */
LG_HOOK(file_send_sigiotask, lg_sigio, struct task_struct *, tsk, struct fown_struct *, fown,
	int, sig)
{
	if (ret)
		return ret;
	if (!sessions_exist())
		return 0;
	__u64 key = fown_file(fown);
	__u64 *session = bpf_map_lookup_elem(&lg_fowners, &key);

	if (!session || !bpf_map_lookup_elem(&lg_sessions, session))
		return 0;
	if (!target_protected(tsk))
		return 0;
	return refuse_task_act(*session, LG_HOOK_SIGIO, tsk, sig ? sig : SIGIO, 0);
}
