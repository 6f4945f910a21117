// SPDX-License-Identifier: GPL-2.0
/* Automatic sessions: the exec of a test runner the policy names (pytest,
 * `python3 -m pytest`, tox, ...) makes that process the root of a new
 * session before its first instruction runs, for any user, with no wrapper.
 * Its descendants become members at fork, as in every session. The watcher
 * ends the session when the root exits. */
#include "lib/gate.h"

#define SIGKILL 9

struct lg_name_buf {
	char c[LG_EXEC_ARG_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_name_buf);
} lg_name_scratch SEC(".maps");

#define NAME_MASK (LG_EXEC_ARG_LEN - 1)

static __always_inline bool is_version_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.';
}

/* FNV-1a over c[from, to), continuing from `h`. */
static __always_inline __u64 hash_span(const struct lg_name_buf *b, __u64 h, int from, int to)
{
	for (int i = 0; i < LG_EXEC_ARG_LEN; i++) {
		int j = from + i;

		if (j >= to)
			break;
		h ^= (unsigned char)b->c[j & NAME_MASK];
		h *= LG_FNV_PRIME;
	}
	return h;
}

/* The hash of the name at c[0, len) after its last '/', without a version
 * suffix: digits and dots, then one '-' (python3.11 and pytest-3 are
 * python and pytest). A name that is all suffix keeps it whole. */
static __always_inline __u64 base_name_hash(const struct lg_name_buf *b, int len)
{
	int start = 0;

	for (int i = 0; i < LG_EXEC_ARG_LEN; i++) {
		if (i >= len)
			break;
		if (b->c[i & NAME_MASK] == '/')
			start = i + 1;
	}
	int end = len;

	for (int i = 0; i < LG_AUTO_NAME_LEN; i++) {
		if (end <= start || !is_version_char(b->c[(end - 1) & NAME_MASK]))
			break;
		end--;
	}
	if (end > start && end < len && b->c[(end - 1) & NAME_MASK] == '-')
		end--;
	if (end <= start)
		end = len;
	return hash_span(b, LG_FNV_OFFSET, start, end);
}

static __always_inline __u32 name_flags(__u64 h)
{
	__u32 *f = bpf_map_lookup_elem(&lg_auto_names, &h);

	return f ? *f : 0;
}

/* Whether an interpreter's arguments (in the new image, at arg_start)
 * run a module some entry names with it: "-m MODULE" or "-mMODULE" after
 * any options, before the first argument that is not one. */
static __always_inline bool runs_named_module(struct lg_name_buf *b, __u64 interp_hash)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;
	unsigned long p, end;

	if (!mm)
		return false;
	p = mm->arg_start;
	end = mm->arg_end;
	bool module_next = false;
	bool skip_next = false;

	for (int i = 0; i < LG_AUTO_MAX_ARGS; i++) {
		if (p >= end)
			break;
		long n = bpf_probe_read_user_str(b->c, sizeof(b->c), (void *)p);

		if (n < 1)
			break;
		p += n;
		int len = n - 1;

		if (i == 0)
			continue;
		if (module_next) {
			__u64 h = interp_hash;

			h ^= 0;
			h *= LG_FNV_PRIME;
			return name_flags(hash_span(b, h, 0, len)) & LG_AUTO_MODULE;
		}
		if (skip_next) {
			skip_next = false;
			continue;
		}
		if (len < 2 || b->c[0] != '-')
			return false;
		char c1 = b->c[1];

		if (c1 == 'm') {
			if (len == 2) {
				module_next = true;
				continue;
			}
			__u64 h = interp_hash;

			h ^= 0;
			h *= LG_FNV_PRIME;
			return name_flags(hash_span(b, h, 2, len)) & LG_AUTO_MODULE;
		}
		/* -c runs a command, -- ends the options: no module follows. */
		if (c1 == 'c' || c1 == '-')
			return false;
		/* Options whose value is the next argument. */
		if (len == 2 && (c1 == 'X' || c1 == 'W'))
			skip_next = true;
	}
	return false;
}

/* Whether the exec starts a session: its path's last name (the entry
 * script for `/usr/bin/pytest`, the link for `pytest-3`), or else the name
 * of the file the kernel runs (`fexecve`, a link named otherwise). */
static __always_inline bool exec_starts_session(struct linux_binprm *bprm)
{
	__u32 zero = 0;
	struct lg_name_buf *b = bpf_map_lookup_elem(&lg_name_scratch, &zero);

	if (!b)
		return false;
	long n = bpf_probe_read_kernel_str(b->c, sizeof(b->c), bprm->filename);

	if (n < 1)
		return false;
	__u64 h = base_name_hash(b, n - 1);
	__u32 f = name_flags(h);

	if (!f) {
		n = bpf_probe_read_kernel_str(b->c, sizeof(b->c), bprm->file->f_path.dentry->d_name.name);
		if (n < 1)
			return false;
		h = base_name_hash(b, n - 1);
		f = name_flags(h);
	}
	if (f & LG_AUTO_PROGRAM)
		return true;
	return (f & LG_AUTO_INTERPRETER) && runs_named_module(b, h);
}

/* The exec'ing process becomes a session's root. A session that cannot be
 * recorded becomes the shared overflow session; a process that cannot be
 * marked at all never runs. */
static __always_inline void start_session(struct task_struct *task)
{
	__u64 now = bpf_ktime_get_boot_ns();
	__u64 key = LG_SESSION_PROCESS_BIT | now;
	struct lg_session s = {.since_ns = now, .flags = LG_SESSION_AUTO, .root_pid = task->tgid};

	if (key == LG_SESSION_OVERFLOW || bpf_map_update_elem(&lg_sessions, &key, &s, BPF_NOEXIST)) {
		key = LG_SESSION_OVERFLOW;
		count(LG_COUNTER_SESSION_OVERFLOW);
	}
	struct lg_member *m = bpf_task_storage_get(&lg_members, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!m) {
		if (key != LG_SESSION_OVERFLOW)
			bpf_map_delete_elem(&lg_sessions, &key);
		count(LG_COUNTER_SESSION_MARK_FAILED);
		bpf_send_signal(SIGKILL);
		return;
	}
	m->session_cgroup_id = key;
	m->since_boot_ns = now;
}

/* After the new image is in place and before it runs: a failed exec
 * starts nothing. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(lg_exec_session, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!any(LG_SETTING_AUTO_NAMES))
		return 0;
	if (!exec_starts_session(bprm))
		return 0;
	/* A test runner inside a session stays in it. */
	if (sessions_exist() && member_session())
		return 0;
	start_session(p);
	return 0;
}
