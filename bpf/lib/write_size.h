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
/* The kernel writes no more than this in one call (MAX_RW_COUNT). */
#define LG_MAX_RW_COUNT 0x7ffff000ULL

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
	/* Clamped so the sum cannot wrap; the kernel writes MAX_RW_COUNT at most. */
	s->total += v.len < LG_MAX_RW_COUNT ? v.len : LG_MAX_RW_COUNT;
	return 0;
}

/* fallocate modes that free or move blocks instead of allocating them. */
#define LG_FALLOC_FL_PUNCH_HOLE 0x02
#define LG_FALLOC_FL_COLLAPSE_RANGE 0x08

/* Bytes the current call writes, or 0 when it does not say: only calls
 * that write what they name, and that pass the hook once (write, pwrite,
 * writev, pwritev, fallocate allocating). sendfile, splice and
 * copy_file_range name an upper bound (cp asks copy_file_range for 8 EiB
 * and gets the file's size), and before 6.8 pass the hook once per
 * 64 KiB; they, io_uring, aio and 32-bit calls other than write and pwrite64
 * are held by the watcher's measurement alone. */
static __noinline __u64 current_write_size(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	bool compat;
	__u64 nr = current_syscall(&compat);
	__u64 size = 0;

	if (compat) {
		if (nr == LG_NR_COMPAT_WRITE || nr == LG_NR_COMPAT_PWRITE64)
			size = (__u32)LG_COMPAT_SYSCALL_ARG3(regs);
	} else if (nr == LG_NR_WRITE || nr == LG_NR_PWRITE64) {
		size = LG_SYSCALL_ARG3(regs);
	} else if (nr == LG_NR_FALLOCATE) {
		if (!(LG_SYSCALL_ARG2(regs) & (LG_FALLOC_FL_PUNCH_HOLE | LG_FALLOC_FL_COLLAPSE_RANGE)))
			size = LG_SYSCALL_ARG4(regs);
	} else if (nr == LG_NR_WRITEV || nr == LG_NR_PWRITEV || nr == LG_NR_PWRITEV2) {
		struct lg_iov_sum s = {.iov = LG_SYSCALL_ARG2(regs)};
		__u64 n = LG_SYSCALL_ARG3(regs);

		bpf_loop(n < LG_IOV_MAX ? n : LG_IOV_MAX, lg_add_iov, &s, 0);
		size = s.total;
	}
	return size < LG_MAX_RW_COUNT ? size : LG_MAX_RW_COUNT;
}

#endif
