/* How many bytes the write that reached file_permission asks for. The hook
 * names the file, not the size, so it is read from the system call the
 * member is in: the reserve of a service's filesystem is then held at the
 * write itself, not only from the watcher's last measurement, which a
 * fast writer outruns while the watcher waits for a CPU. */
#ifndef LG_BPF_WRITE_SIZE_H
#define LG_BPF_WRITE_SIZE_H

#include "common.h"
#include "syscall.h"

/* The kernel takes no more iovecs than this (UIO_MAXIOV). */
#define LG_IOV_MAX 1024

struct lg_iov_sum {
	__u64 iov;
	__u64 total;
};

static long lg_add_iov(__u32 i, void *ctx)
{
	struct lg_iov_sum *s = ctx;
	struct {
		__u64 base;
		__u64 len;
	} v;

	if (bpf_probe_read_user(&v, sizeof v, (const void *)(s->iov + (__u64)i * sizeof v)))
		return 1;
	s->total += v.len;
	return 0;
}

/* Bytes the current call writes at most, or 0 when the call does not say
 * (io_uring, aio, a reflink, an ia32 call other than write and pwrite64):
 * then the watcher's measurement alone holds the reserve. */
static __noinline __u64 current_write_size(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	bool compat;
	__u64 nr = current_syscall(&compat);

	if (compat)
		return nr == LG_NR_IA32_WRITE || nr == LG_NR_IA32_PWRITE64 ? (__u32)LG_IA32_SYSCALL_ARG3(regs) : 0;
	switch (nr) {
	case LG_NR_WRITE:
	case LG_NR_PWRITE64:
		return LG_SYSCALL_ARG3(regs);
	case LG_NR_SENDFILE:
	case LG_NR_FALLOCATE:
		return LG_SYSCALL_ARG4(regs);
	case LG_NR_SPLICE:
	case LG_NR_COPY_FILE_RANGE:
		return LG_SYSCALL_ARG5(regs);
	case LG_NR_WRITEV:
	case LG_NR_PWRITEV:
	case LG_NR_PWRITEV2: {
		struct lg_iov_sum s = {.iov = LG_SYSCALL_ARG2(regs)};
		__u64 n = LG_SYSCALL_ARG3(regs);

		bpf_loop(n < LG_IOV_MAX ? n : LG_IOV_MAX, lg_add_iov, &s, 0);
		return s.total;
	}
	default:
		return 0;
	}
}

#endif
