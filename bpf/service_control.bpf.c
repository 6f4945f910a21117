// SPDX-License-Identifier: GPL-2.0
/* Service managers: a member may not have systemd or s6 stop a protected
 * service for it, by running their control commands against it or (when
 * the policy asks) by connecting to the manager's socket at all. */
#include "arch/x86_64.h"
#include "lib/hook.h"
#include "lib/exec_guard.h"

/* Enforcement copies argv on entry to the syscall wrappers, which take the
 * user's registers. The syscall tracepoints would do too, but enabling any
 * of them sends every syscall of every process on the machine through the
 * tracing slow path; fentry costs only execve. */
SEC("fentry/" LG_SYS_EXECVE)
int BPF_PROG(lg_exec_argv_entry, const struct pt_regs *regs)
{
	return capture_argv(LG_EXECVE_ARGV(regs));
}

SEC("fentry/" LG_SYS_EXECVEAT)
int BPF_PROG(lg_execveat_argv_entry, const struct pt_regs *regs)
{
	return capture_argv(LG_EXECVEAT_ARGV(regs));
}

LG_HOOK(bprm_check_security, lg_bprm_check, struct linux_binprm *, bprm)
{
	if (ret)
		return ret;
	carry_marks_through_exec();
	__u64 session = member_session();

	if (!session)
		return 0;
	__u32 kind = service_control_exec(bprm, (__u32)bpf_get_current_pid_tgid());

	if (!kind)
		return 0;
	return refuse_object_act(session, LG_HOOK_EXEC, bprm->file->f_path.dentry,
				 bprm->file->f_inode->i_ino, kind, 0);
}

/* Opt-in: the loader lists the sockets only when the policy asks. Matched
 * on the listening socket's inode, so any path or symlink to it is the
 * same socket. */
LG_HOOK(unix_stream_connect, lg_unix_connect, struct sock *, other)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	struct unix_sock *u = (void *)other;
	struct dentry *d = BPF_CORE_READ(u, path.dentry);

	if (!d)
		return 0;
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct lg_guarded_inode *g = guarded_inode(inode);

	if (!g || g->kind != LG_INODE_SERVICE_SOCKET)
		return 0;
	return refuse_object_act(session, LG_HOOK_SERVICE_SOCKET, d, BPF_CORE_READ(inode, i_ino), g->kind, 0);
}
