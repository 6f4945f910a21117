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
#define EAGAIN 11
#define EMFILE 24
#define ENOSPC 28
#define SIGIO 29
#define CLONE_THREAD 0x00010000
#define CLONE_INTO_CGROUP 0x200000000ULL
#define FMODE_WRITE 0x2
#define MAY_WRITE 0x2
#define S_IFMT 00170000
#define S_IFIFO 0010000
#define S_IFREG 0100000
#define PR_SET_PDEATHSIG 1
#define F_SETOWN 8
#define F_SETOWN_EX 15
#define FIOSETOWN 0x8901
#define SIOCSPGRP 0x8902
/* chattr: inode flags (immutable, append-only) and their fsxattr form. */
#define FS_IOC_SETFLAGS 0x40086602
#define FS_IOC32_SETFLAGS 0x40046602
#define FS_IOC_FSSETXATTR 0x401c5820
#define MNT_SHARED 0x1000
#define MS_BIND 4096
#define MS_SHARED (1 << 20)
#define MS_PRIVATE (1 << 18)
#define MS_SLAVE (1 << 19)
#define MS_UNBINDABLE (1 << 17)
#define CGROUP_SUPER_MAGIC 0x27e0eb
#define PIPEFS_MAGIC 0x50495045
#define SYSFS_MAGIC 0x62656572
#define BINFMTFS_MAGIC 0x42494e4d
#define MS_REMOUNT 32
#define MS_MOVE 8192
#define PTRACE_MODE_ATTACH 0x02
#define CGROUP2_SUPER_MAGIC 0x63677270
#define PROC_SUPER_MAGIC 0x9fa0
#define BPF_FS_MAGIC 0xcafe4a11
#define SECURITYFS_MAGIC 0x73636673
#define LG_F_UNLCK 2
/* iattr.ia_valid: the size changes (truncate, ftruncate, O_TRUNC). */
#define LG_ATTR_SIZE (1 << 3)
/* /proc/<pid>/stat reports start times in USER_HZ ticks. */
#define NSEC_PER_USER_TICK 10000000ULL

/* Set by the loader before load: the verifier then drops the code of the
 * other mode, so enforcement pays nothing for audit-only paths. Weak:
 * every program file sees it, the linked object holds one. */
const volatile bool lg_audit_only __weak = false;
/* Loaded in the fmod_ret form: the hooks are then tracing programs, which
 * the kernel does not let use socket storage. */
const volatile bool lg_fmod_ret_form __weak = false;
/* The inode number of the initial mount namespace (the loader reads it
 * from /proc/1/ns/mnt): mounts there are everyone's. */
const volatile __u32 lg_host_mnt_ns __weak = 0;
/* The same for the initial network namespace: a member may write the
 * sysctls of a network namespace of its own. */
const volatile __u32 lg_host_net_ns __weak = 0;
/* And the initial UTS namespace: a member may name one of its own. */
const volatile __u32 lg_host_uts_ns __weak = 0;

#endif
