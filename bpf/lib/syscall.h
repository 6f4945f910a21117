/* The system call the current task is in, for hooks whose arguments do
 * not say which call reached them. */
#ifndef LG_BPF_SYSCALL_H
#define LG_BPF_SYSCALL_H

#include "common.h"
#include "../arch/x86_64.h"

/* The call's number, the x32 bit masked off, and whether it came through
 * the ia32 entry (whose numbers differ). */
static __always_inline __u64 current_syscall(bool *compat)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	*compat = LG_SYSCALL_COMPAT(task);
	return LG_SYSCALL_NR(regs) & ~LG_X32_SYSCALL_BIT;
}

#endif
