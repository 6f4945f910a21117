/* What every program file of liveguard's kernel side starts from: kernel
 * types, libbpf's helpers, the ABI shared with userspace, and the kernel
 * constants vmlinux.h does not carry (macros are not in BTF). */
#ifndef LG_BPF_COMMON_H
#define LG_BPF_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "liveguard/abi.h"

#define EPERM 1
#define SIGIO 29
#define CLONE_THREAD 0x00010000
#define FMODE_WRITE 0x2
#define PTRACE_MODE_ATTACH 0x02
#define CGROUP2_SUPER_MAGIC 0x63677270
#define PROC_SUPER_MAGIC 0x9fa0
#define BPF_FS_MAGIC 0xcafe4a11
/* /proc/<pid>/stat reports start times in USER_HZ ticks. */
#define NSEC_PER_USER_TICK 10000000ULL

/* Set by the loader before load: the verifier then drops the code of the
 * other mode, so enforcement pays nothing for audit-only paths. Weak:
 * every program file sees it, the linked object holds one. */
const volatile bool lg_audit_only __weak = false;

#endif
