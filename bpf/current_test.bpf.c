// SPDX-License-Identifier: GPL-2.0
/* The test a culprit is running, read from its own memory at the refusal.
 * pytest sets PYTEST_CURRENT_TEST with setenv() at each phase of each
 * test, so only its libc's `environ` array holds it, and by the time
 * userspace takes up the event a short test is over. One global function,
 * verified once per program rather than at each hook's every call. */
#include "lib/common.h"
#include "lib/maps.h"

char LICENSE[] SEC("license") = "GPL";

/* Eight bytes of a string literal as one little-endian word. */
#define LG_WORD(s, i)                                                                            \
	((__u64)(s)[i] | (__u64)(s)[(i) + 1] << 8 | (__u64)(s)[(i) + 2] << 16 |                 \
	 (__u64)(s)[(i) + 3] << 24 | (__u64)(s)[(i) + 4] << 32 | (__u64)(s)[(i) + 5] << 40 |     \
	 (__u64)(s)[(i) + 6] << 48 | (__u64)(s)[(i) + 7] << 56)
#define LG_TEST_VAR "PYTEST_CURRENT_TEST=\0\0\0\0"
#define LG_TEST_VAR_LEN 20

/* The value's length with its NUL, in lg_test_scratch; 0 when the
 * culprit's executable is not one lg_environ_at lists, or the variable is
 * not among the first LG_ENV_SCAN entries, or its memory is not resident. */
__noinline int lg_current_test(void)
{
	__u32 zero = 0;
	struct lg_test_text *out = bpf_map_lookup_elem(&lg_test_scratch, &zero);
	struct task_struct *t = bpf_get_current_task_btf();
	struct mm_struct *mm = BPF_CORE_READ(t, mm);

	if (!out || !mm)
		return 0;
	struct inode *exe = BPF_CORE_READ(mm, exe_file, f_inode);
	struct lg_exe_key key = {
		.ino = BPF_CORE_READ(exe, i_ino),
		.size = BPF_CORE_READ(exe, i_size),
	};
	struct lg_environ_at *at = bpf_map_lookup_elem(&lg_environ_at, &key);

	if (!at)
		return 0;
	__u64 env = 0;

	if (bpf_probe_read_user(&env, sizeof(env), (void *)(BPF_CORE_READ(mm, start_code) + at->from_start_code)) ||
	    !env)
		return 0;
	for (int i = 0; i < LG_ENV_SCAN; i++) {
		__u64 var = 0;
		__u64 w[3] = {};

		if (bpf_probe_read_user(&var, sizeof(var), (void *)(env + i * sizeof(__u64))) || !var)
			return 0;
		if (bpf_probe_read_user(w, LG_TEST_VAR_LEN, (void *)var))
			continue;
		if (w[0] != LG_WORD(LG_TEST_VAR, 0) || w[1] != LG_WORD(LG_TEST_VAR, 8) ||
		    w[2] != LG_WORD(LG_TEST_VAR, 16))
			continue;
		long n = bpf_probe_read_user_str(out->text, sizeof(out->text), (void *)(var + LG_TEST_VAR_LEN));

		return n > 1 ? (int)n : 0;
	}
	return 0;
}
