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
	/* The argument scan's state between calls: in map memory, whose
	 * contents the verifier does not assume. Kept on the stack, a flag
	 * the first call sees clear would be proven clear for every call by
	 * kernels that check a bpf_loop callback once, and the code that
	 * reads it set would be removed as dead. */
	bool module_next;
	bool skip_next;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_name_buf);
} lg_name_scratch SEC(".maps");

#define NAME_MASK (LG_EXEC_ARG_LEN - 1)

/* Every scan below is a bpf_loop callback: the verifier checks each body
 * once, where open-coded loops over data-dependent bounds are walked
 * iteration by iteration and exceed its budget on newer kernels. */

struct span_hash {
	const struct lg_name_buf *b;
	__u64 h;
	int from;
	int to;
};

static long hash_byte(__u32 i, struct span_hash *s)
{
	int j = s->from + (int)i;

	if (j >= s->to)
		return 1;
	s->h ^= (unsigned char)s->b->c[j & NAME_MASK];
	s->h *= LG_FNV_PRIME;
	return 0;
}

/* FNV-1a over c[from, to), continuing from `h`. Names longer than a
 * policy name can be never match, so at most LG_AUTO_NAME_LEN bytes are
 * hashed. */
static __always_inline __u64 hash_span(const struct lg_name_buf *b, __u64 h, int from, int to)
{
	struct span_hash s = {.b = b, .h = h, .from = from, .to = to};

	bpf_loop(LG_AUTO_NAME_LEN, hash_byte, &s, 0);
	return s.h;
}

struct name_scan {
	const struct lg_name_buf *b;
	int len;
	int start; /* after the last '/' */
	int end;   /* before the version suffix */
};

static long find_last_slash(__u32 i, struct name_scan *s)
{
	if ((int)i >= s->len)
		return 1;
	if (s->b->c[i & NAME_MASK] == '/')
		s->start = i + 1;
	return 0;
}

static long strip_version(__u32 i, struct name_scan *s)
{
	int e = s->end;

	if (e <= s->start)
		return 1;
	char c = s->b->c[(e - 1) & NAME_MASK];

	if (!((c >= '0' && c <= '9') || c == '.'))
		return 1;
	s->end = e - 1;
	return 0;
}

/* The hash of the name at c[0, len) after its last '/', without a version
 * suffix: digits and dots, then one '-' (python3.11 and pytest-3 are
 * python and pytest). A name that is all suffix keeps it whole; 0 for a
 * name too long to be in the policy. */
static __always_inline __u64 base_name_hash(const struct lg_name_buf *b, int len)
{
	struct name_scan s = {.b = b, .len = len, .start = 0, .end = len};

	bpf_loop(LG_EXEC_ARG_LEN, find_last_slash, &s, 0);
	if (len - s.start >= LG_AUTO_NAME_LEN)
		return 0;
	bpf_loop(LG_AUTO_NAME_LEN, strip_version, &s, 0);
	int end = s.end;

	if (end > s.start && end < len && b->c[(end - 1) & NAME_MASK] == '-')
		end--;
	if (end <= s.start)
		end = len;
	return hash_span(b, LG_FNV_OFFSET, s.start, end);
}

static __always_inline __u32 name_flags(__u64 h)
{
	__u32 *f = bpf_map_lookup_elem(&lg_auto_names, &h);

	return f ? *f : 0;
}

/* Walking an interpreter's arguments for the module it runs. */
struct arg_scan {
	struct lg_name_buf *b;
	unsigned long p;
	unsigned long end;
	/* Where the module's name is: its argument, and the offset in it. */
	unsigned long module;
	int module_from;
};

static long scan_arg(__u32 i, struct arg_scan *s)
{
	unsigned long arg = s->p;

	if (arg >= s->end)
		return 1;
	long n = bpf_probe_read_user_str(s->b->c, sizeof(s->b->c), (void *)arg);

	/* Unreadable, or longer than the buffer (the next would start mid
	 * argument): look no further. */
	if (n < 1 || n >= (long)sizeof(s->b->c))
		return 1;
	s->p = arg + n;
	int len = n - 1;

	if (i == 0)
		return 0;
	if (s->b->module_next) {
		s->module = arg;
		s->module_from = 0;
		return 1;
	}
	if (s->b->skip_next) {
		s->b->skip_next = false;
		return 0;
	}
	if (len < 2 || s->b->c[0] != '-')
		return 1;
	char c1 = s->b->c[1];

	if (c1 == 'm') {
		if (len == 2) {
			s->b->module_next = true;
			return 0;
		}
		s->module = arg;
		s->module_from = 2;
		return 1;
	}
	/* -c runs a command, -- ends the options: no module follows. */
	if (c1 == 'c' || c1 == '-')
		return 1;
	/* Options whose value is the next argument. */
	if (len == 2 && (c1 == 'X' || c1 == 'W'))
		s->b->skip_next = true;
	return 0;
}

/* Whether an interpreter's arguments (in the new image, at arg_start)
 * run a module some entry names with it: "-m MODULE" or "-mMODULE" after
 * any options, before the first argument that is not one. */
static __always_inline bool runs_named_module(struct lg_name_buf *b, __u64 interp_hash)
{
	struct mm_struct *mm = bpf_get_current_task_btf()->mm;

	if (!mm)
		return false;
	struct arg_scan s = {.b = b, .p = mm->arg_start, .end = mm->arg_end};

	b->module_next = false;
	b->skip_next = false;
	bpf_loop(LG_AUTO_MAX_ARGS, scan_arg, &s, 0);
	if (!s.module)
		return false;
	long n = bpf_probe_read_user_str(b->c, sizeof(b->c), (void *)s.module);

	if (n < 1)
		return false;
	/* key = hash(interpreter, NUL, module) */
	__u64 h = interp_hash * LG_FNV_PRIME;

	return name_flags(hash_span(b, h, s.module_from, n - 1)) & LG_AUTO_MODULE;
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
	/* A live mark the membership check could not see (task storage can
	 * refuse a lookup while another user of it holds this CPU) wins: a
	 * member never moves to a new session. */
	__u64 old = m->session_cgroup_id;

	if (m->since_boot_ns && old != key && bpf_map_lookup_elem(&lg_sessions, &old)) {
		if (key != LG_SESSION_OVERFLOW)
			bpf_map_delete_elem(&lg_sessions, &key);
		return;
	}
	m->session_cgroup_id = key;
	m->since_boot_ns = now;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lg_exec_session, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	/* The exec's argv copy has been judged, or was never needed (the
	 * binary controls no service): either way it is done with. */
	if (may_have_marks(p->group_leader) || lg_unmarked_members) {
		__u32 tid = old_pid;

		bpf_map_delete_elem(&lg_exec_args, &tid);
	}
	if (!any(LG_SETTING_AUTO_NAMES))
		return 0;
	if (!exec_starts_session(bprm))
		return 0;
	/* A test runner inside a session stays in it, and carries that
	 * session's mark itself: membership through its parent's mark would
	 * end with the parent. */
	__u64 session = member_session();

	if (session)
		mark_member(p, session);
	else
		start_session(p);
	return 0;
}
