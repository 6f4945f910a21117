// SPDX-License-Identifier: GPL-2.0
/* Audit-only mode: where the kernel will not run the trampolines LSM and
 * fentry programs need, these tracepoints report what enforcement would
 * have refused, and block nothing. The loader loads them instead of the
 * enforcing programs, never beside them; every program whose name starts
 * with lg_audit_ is of this mode. */
#include "lib/exec_guard.h"

/* The argv copies, from the syscall tracepoints (fentry is a trampoline). */
SEC("tp/syscalls/sys_enter_execve")
int lg_audit_execve_argv(struct trace_event_raw_sys_enter *ctx)
{
	carry_marks_through_exec();
	return capture_argv(ctx->args[1]);
}

SEC("tp/syscalls/sys_enter_execveat")
int lg_audit_execveat_argv(struct trace_event_raw_sys_enter *ctx)
{
	carry_marks_through_exec();
	return capture_argv(ctx->args[2]);
}

SEC("tp_btf/signal_generate")
int BPF_PROG(lg_audit_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	if (!sessions_exist())
		return 0;
	/* Only signals a process asked for: kill(), sigqueue(), cgroup.kill.
	 * The kernel's own (SIGCHLD, SIGPIPE, faults) carry a positive si_code
	 * or SEND_SIG_PRIV. */
	if ((unsigned long)info == 1)
		return 0;
	if ((unsigned long)info > 1 && BPF_CORE_READ(info, si_code) > 0)
		return 0;
	if (!target_protected(task))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_task(LG_VERDICT_AUDITED, LG_HOOK_TASK_KILL, session, task, sig, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lg_audit_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 session = member_session();

	if (!session)
		return 0;
	/* The argv was copied under the thread id the exec started with. */
	__u32 kind = service_control_exec(bprm, (__u32)old_pid);

	if (!kind)
		return 0;
	report_object(LG_VERDICT_AUDITED, LG_HOOK_EXEC, session, bprm->file->f_path.dentry,
		      bprm->file->f_inode->i_ino, kind, 0);
	return 0;
}
