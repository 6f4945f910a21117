// SPDX-License-Identifier: GPL-2.0
/* Signals and other acts on a protected process: kill and its relatives,
 * ptrace, limits that kill or starve, and SIGIO/SIGURG through F_SETOWN. */
#include "lib/gate.h"

SEC("lsm/task_kill")
int BPF_PROG(lg_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	/* Signal 0 only probes for existence: discovery without delivery. */
	if (sig == 0)
		return 0;
	return member_act_on_task(LG_HOOK_TASK_KILL, p, sig, 0);
}

/* ptrace, process_vm_*, /proc/<pid>/mem: all pass mm_access() or
 * ptrace_attach(), which ask this hook with PTRACE_MODE_ATTACH. Reads of
 * /proc/<pid>/status and the like ask only for PTRACE_MODE_READ. */
SEC("lsm/ptrace_access_check")
int BPF_PROG(lg_ptrace, struct task_struct *child, unsigned int mode, int ret)
{
	if (ret)
		return ret;
	if (!(mode & PTRACE_MODE_ATTACH))
		return 0;
	return member_act_on_task(LG_HOOK_PTRACE, child, 0, mode);
}

/* Limits: a CPU-time limit kills (SIGKILL at the hard limit, with no kill
 * check); priority, scheduler class and I/O priority can starve. */
SEC("lsm/task_setrlimit")
int BPF_PROG(lg_setrlimit, struct task_struct *p, unsigned int resource, struct rlimit *new_rlim,
	     int ret)
{
	/* A process may lower its own limits; only another's are guarded. */
	if (ret || p->group_leader == bpf_get_current_task_btf()->group_leader)
		return ret;
	return member_act_on_task(LG_HOOK_LIMITS, p, 0, LG_LIMIT_RLIMIT);
}

SEC("lsm/task_setnice")
int BPF_PROG(lg_setnice, struct task_struct *p, int nice, int ret)
{
	return ret ? ret : member_act_on_task(LG_HOOK_LIMITS, p, 0, LG_LIMIT_NICE);
}

SEC("lsm/task_setscheduler")
int BPF_PROG(lg_setscheduler, struct task_struct *p, int ret)
{
	return ret ? ret : member_act_on_task(LG_HOOK_LIMITS, p, 0, LG_LIMIT_SCHEDULER);
}

SEC("lsm/task_setioprio")
int BPF_PROG(lg_setioprio, struct task_struct *p, int ioprio, int ret)
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

SEC("lsm/file_set_fowner")
int BPF_PROG(lg_set_fowner, struct file *file)
{
	__u64 key = (__u64)file;

	if (!sessions_exist()) {
		bpf_map_delete_elem(&lg_fowners, &key);
		return 0;
	}
	__u64 session = member_session();

	if (session)
		bpf_map_update_elem(&lg_fowners, &key, &session, BPF_ANY);
	else
		bpf_map_delete_elem(&lg_fowners, &key);
	return 0;
}

/* `current` here is whoever caused the I/O, not the member: the session
 * is the one recorded when the owner was set. */
SEC("lsm/file_send_sigiotask")
int BPF_PROG(lg_sigio, struct task_struct *tsk, struct fown_struct *fown, int sig, int ret)
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
