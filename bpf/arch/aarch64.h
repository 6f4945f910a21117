/* What the kernel side needs to know of arm64 (through arch.h), under the
 * same names as x86_64.h. The second set of numbers is the AArch32 entry's
 * (a 32-bit task on a kernel with CONFIG_COMPAT), which differ from the
 * 64-bit ones. */
#ifndef LG_BPF_ARCH_AARCH64_H
#define LG_BPF_ARCH_AARCH64_H

/* execve(path, argv, envp) and execveat(dfd, path, argv, envp, flags). */
#define LG_SYS_EXECVE "__arm64_sys_execve"
#define LG_SYS_EXECVEAT "__arm64_sys_execveat"
#define LG_EXECVE_ARGV(regs) BPF_CORE_READ(regs, regs[1])
#define LG_EXECVEAT_ARGV(regs) BPF_CORE_READ(regs, regs[2])

/* The call the task is in (-1 outside one: the entry code sets it on every
 * entry from user mode), and its arguments as the call itself reads them:
 * x0 is overwritten by the return value only once the call returns (and
 * a tracer's change at the entry stop is in x0, not in orig_x0). AArch32
 * passes arguments in r0-r6, which are x0-x6 here. */
#define LG_SYSCALL_NR(regs) ((__u64)(__u32)(regs)->syscallno)
#define LG_X32_SYSCALL_BIT 0
#define LG_SYSCALL_ARG1(regs) ((regs)->regs[0])
#define LG_SYSCALL_ARG2(regs) ((regs)->regs[1])
#define LG_SYSCALL_ARG3(regs) ((regs)->regs[2])
#define LG_SYSCALL_ARG4(regs) ((regs)->regs[3])
#define LG_COMPAT_SYSCALL_ARG1(regs) ((regs)->regs[0])
#define LG_COMPAT_SYSCALL_ARG2(regs) ((regs)->regs[1])
#define LG_COMPAT_SYSCALL_ARG3(regs) ((regs)->regs[2])
/* A task in AArch32 state: the saved PSTATE of its user registers has the
 * 32-bit mode bit and EL0 (compat_user_mode()). Read from the registers,
 * which the architecture fixes, not from a thread flag whose number the
 * kernel may move. */
#define LG_PSR_MODE32_BIT 0x10
#define LG_PSR_MODE_MASK 0x0f
#define LG_SYSCALL_COMPAT(task)                                                                     \
	((BPF_CORE_READ((struct pt_regs *)bpf_task_pt_regs(task), pstate) &                           \
	  (LG_PSR_MODE32_BIT | LG_PSR_MODE_MASK)) == LG_PSR_MODE32_BIT)

#define LG_NR_SCHED_SETSCHEDULER 119
#define LG_NR_SCHED_SETATTR 274
#define LG_NR_COMPAT_SCHED_SETSCHEDULER 156
#define LG_NR_COMPAT_SCHED_SETATTR 380

/* The machine's calls that only CAP_SYS_ADMIN guards. */
#define LG_NR_SWAPON 224
#define LG_NR_SWAPOFF 225
#define LG_NR_SETHOSTNAME 161
#define LG_NR_SETDOMAINNAME 162
#define LG_NR_COMPAT_SWAPON 87
#define LG_NR_COMPAT_SWAPOFF 115
#define LG_NR_COMPAT_SETHOSTNAME 74
#define LG_NR_COMPAT_SETDOMAINNAME 121
/* Numbers from 424 on are the same on every architecture and ABI. */
#define LG_NR_PROCESS_MADVISE 440

/* The calls whose size a write to a filesystem with a reserve is charged
 * by (lib/write_size.h). */
#define LG_NR_WRITE 64
#define LG_NR_PWRITE64 68
#define LG_NR_WRITEV 66
#define LG_NR_FALLOCATE 47
#define LG_NR_PWRITEV 70
#define LG_NR_PWRITEV2 287
#define LG_NR_COMPAT_WRITE 4
#define LG_NR_COMPAT_PWRITE64 181

/* The calls that make what the kernel counts per user (inotify and
 * fanotify). arm64 has no inotify_init, only inotify_init1. */
#define LG_NR_INOTIFY_ADD_WATCH 27
#define LG_NR_INOTIFY_INIT1 26
#define LG_NR_FANOTIFY_INIT 262
#define LG_NR_FANOTIFY_MARK 263
#define LG_NR_COMPAT_INOTIFY_INIT 316
#define LG_NR_COMPAT_INOTIFY_ADD_WATCH 317
#define LG_NR_COMPAT_INOTIFY_INIT1 360
#define LG_NR_COMPAT_FANOTIFY_INIT 367
#define LG_NR_COMPAT_FANOTIFY_MARK 368

#endif
