/* What the kernel side needs to know of x86-64 (through arch.h): the
 * syscall wrappers that take the user's registers, which register holds
 * which argument, and the numbers of the calls the hooks tell apart. The
 * second set of numbers is the ia32 entry's (TS_COMPAT). */
#ifndef LG_BPF_ARCH_X86_64_H
#define LG_BPF_ARCH_X86_64_H

#define LG_SYS_EXECVE "__x64_sys_execve"
#define LG_SYS_EXECVEAT "__x64_sys_execveat"
#define LG_EXECVE_ARGV(regs) BPF_CORE_READ(regs, si)
#define LG_EXECVEAT_ARGV(regs) BPF_CORE_READ(regs, dx)

/* The system call the task is in (the hooks that name only their target
 * tell the call apart by it), and its arguments as the user passed them. */
#define LG_SYSCALL_NR(regs) ((regs)->orig_ax)
/* x32 calls carry this bit, on the 64-bit call's number for the calls
 * told apart here. */
#define LG_X32_SYSCALL_BIT 0x40000000
#define LG_NR_SCHED_SETSCHEDULER 144
#define LG_NR_SCHED_SETATTR 314
#define LG_NR_COMPAT_SCHED_SETSCHEDULER 156
#define LG_NR_COMPAT_SCHED_SETATTR 351
#define LG_SYSCALL_ARG1(regs) ((regs)->di)
#define LG_SYSCALL_ARG2(regs) ((regs)->si)
#define LG_SYSCALL_ARG3(regs) ((regs)->dx)
#define LG_SYSCALL_ARG4(regs) ((regs)->r10)
/* The machine's calls that only CAP_SYS_ADMIN guards, with nothing in
 * the capability check to tell them from the many others it guards. A
 * task in an ia32 call (TS_COMPAT in its thread_info) uses the second
 * set; the x32 bit is masked off first. */
#define LG_SYSCALL_COMPAT(task) (BPF_CORE_READ(task, thread_info.status) & 0x0002)
#define LG_NR_SWAPON 167
#define LG_NR_SWAPOFF 168
#define LG_NR_SETHOSTNAME 170
#define LG_NR_SETDOMAINNAME 171
#define LG_NR_COMPAT_SWAPON 87
#define LG_NR_COMPAT_SWAPOFF 115
#define LG_NR_COMPAT_SETHOSTNAME 74
#define LG_NR_COMPAT_SETDOMAINNAME 121
/* Numbers from 424 on are the same on every architecture and ABI. */
#define LG_NR_PROCESS_MADVISE 440
#define LG_COMPAT_SYSCALL_ARG1(regs) ((regs)->bx)
#define LG_COMPAT_SYSCALL_ARG2(regs) ((regs)->cx)
#define LG_COMPAT_SYSCALL_ARG3(regs) ((regs)->dx)

/* The calls whose size a write to a filesystem with a reserve is charged
 * by (lib/write_size.h). */
#define LG_NR_WRITE 1
#define LG_NR_PWRITE64 18
#define LG_NR_WRITEV 20
#define LG_NR_FALLOCATE 285
#define LG_NR_PWRITEV 296
#define LG_NR_PWRITEV2 328
#define LG_NR_COMPAT_WRITE 4
#define LG_NR_COMPAT_PWRITE64 181

/* The calls that make what the kernel counts per user (inotify and
 * fanotify), told apart in the hooks that see them by number. */
#define LG_NR_INOTIFY_INIT 253
#define LG_NR_INOTIFY_ADD_WATCH 254
#define LG_NR_INOTIFY_INIT1 294
#define LG_NR_FANOTIFY_INIT 300
#define LG_NR_FANOTIFY_MARK 301
#define LG_NR_COMPAT_INOTIFY_INIT 291
#define LG_NR_COMPAT_INOTIFY_ADD_WATCH 292
#define LG_NR_COMPAT_INOTIFY_INIT1 332
#define LG_NR_COMPAT_FANOTIFY_INIT 338
#define LG_NR_COMPAT_FANOTIFY_MARK 339

#endif
