/* The system call the current task is in, for hooks whose arguments do
 * not say which call reached them. */
#ifndef LG_BPF_SYSCALL_H
#define LG_BPF_SYSCALL_H

#include "common.h"
#include "../arch/arch.h"

/* The call's number, the x32 bit masked off, and whether it came through
 * the 32-bit entry (ia32, AArch32), whose numbers differ. */
static __always_inline __u64 current_syscall(bool *compat)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	*compat = LG_SYSCALL_COMPAT(task);
	return LG_SYSCALL_NR(regs) & ~LG_X32_SYSCALL_BIT;
}

/* Its first two arguments, as the caller passed them. */
static __always_inline void current_syscall_args(bool compat, __u64 *arg1, __u64 *arg2)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	*arg1 = compat ? (__u32)LG_COMPAT_SYSCALL_ARG1(regs) : LG_SYSCALL_ARG1(regs);
	*arg2 = compat ? (__u32)LG_COMPAT_SYSCALL_ARG2(regs) : LG_SYSCALL_ARG2(regs);
}

#endif
