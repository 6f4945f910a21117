// SPDX-License-Identifier: GPL-2.0
/* An inotify instance or fanotify group a member makes from its user's
 * reserve (lib/user_counts.h) fails with EMFILE, as at the kernel's own
 * limit. Its file is allocated after it was counted, and the only hook
 * there is file_alloc_security, which the BPF LSM does not offer on every
 * kernel: so the program modifies security_file_alloc()'s return in both
 * forms, twinned as the hooks are in the fmod_ret form (lib/twins.h),
 * since the kernel's guard against recursion is per program whichever
 * form loads it. Every file the machine opens passes here; a process that
 * is no member leaves at the first test. */
#include "lib/hook.h"
#include "lib/user_counts.h"

static __always_inline int file_alloc(int ret)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	return session ? refuse_from_reserve(session) : 0;
}

SEC("fmod_ret/security_file_alloc")
int BPF_PROG(lg_file_alloc, struct file *file, int ret)
{
	return file_alloc(ret);
}

SEC("fmod_ret/security_file_alloc")
int BPF_PROG(lg_file_alloc_twin, struct file *file, int ret)
{
	return file_alloc(ret);
}
