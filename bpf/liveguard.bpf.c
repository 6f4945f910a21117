// SPDX-License-Identifier: GPL-2.0
/* Kernel side of liveguard: refuse what tagged test sessions may not do to
 * protected processes: signal them, or reach them through a side door
 * (service managers, control FIFOs, cgroup and /proc files, ptrace,
 * F_SETOWN, liveguard's own objects). Every hook runs for the whole
 * machine, so each first checks the cheapest thing that rules it out:
 * no session tagged anywhere, a read-only open, a filesystem that cannot
 * hold what the door guards. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "liveguard/abi.h"

#define EPERM 1
#define CLONE_THREAD 0x00010000
#define FMODE_WRITE 0x2
#define PTRACE_MODE_ATTACH 0x02
#define CGROUP2_SUPER_MAGIC 0x63677270
#define PROC_SUPER_MAGIC 0x9fa0
#define BPF_FS_MAGIC 0xcafe4a11
/* /proc/<pid>/stat reports start times in USER_HZ ticks. */
#define NSEC_PER_USER_TICK 10000000ULL

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lg_protected);
} lg_protected SEC(".maps");

/* Protected thread-group ids, for doors that reach a process by number
 * (/proc/<pid>/...): value = its start time in /proc ticks, so a reused
 * PID never matches. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LG_MAX_GUARDED_CGROUPS);
	__type(key, __u32);
	__type(value, __u64);
} lg_protected_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lg_member);
} lg_members SEC(".maps");

/* Cgroups that hold a protected process, or are an ancestor of one (the
 * loader adds them; the kernel adds a cgroup a protected process is moved
 * into). Writing their files could kill, freeze or starve the service. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_GUARDED_CGROUPS);
	__type(key, __u64);
	__type(value, __u32);
} lg_guarded_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_GUARDED_INODES);
	__type(key, struct lg_inode_key);
	__type(value, struct lg_guarded_inode);
} lg_guarded_inodes SEC(".maps");

/* Hashes of the words that make a service-control command mutate a
 * protected service: verbs, unit names, service and scan directories. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_EXEC_WORDS);
	__type(key, __u64);
	__type(value, __u32);
} lg_exec_words SEC(".maps");

/* A member's argv, copied at execve entry, keyed by thread id. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct lg_exec_args);
} lg_exec_args SEC(".maps");

struct lg_arg_buf {
	char c[LG_EXEC_ARG_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_arg_buf);
} lg_scratch SEC(".maps");

/* Files whose owner (F_SETOWN) a session member set: SIGIO/SIGURG they
 * raise is sent on the member's behalf. Keyed by the struct file. Every
 * F_SETOWN rewrites or drops its file's entry before any signal can be
 * sent, so an entry left by a freed file is never consulted for a new
 * file at the same address: no hook on file release is needed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} lg_fowners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_SESSIONS);
	__type(key, __u64);
	__type(value, struct lg_session);
} lg_sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LG_MAX_PROTECTED_CGROUPS);
	__type(key, __u64);
	__type(value, struct lg_cgroup_protection);
} lg_protected_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lg_cgroup_filter);
} lg_cgroup_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_SETTING_COUNT);
	__type(key, __u32);
	__type(value, struct lg_settings);
} lg_settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LG_RINGBUF_BYTES);
} lg_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lg_counters SEC(".maps");

static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&lg_counters, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline bool any(__u32 setting)
{
	struct lg_settings *s = bpf_map_lookup_elem(&lg_settings, &setting);

	return s && s->count;
}

/* The tagged cgroup that makes the current task a session member by where
 * it runs, or 0. Level 0 is the root cgroup, which `tag` refuses, so the
 * walk starts at 1. */
static __always_inline __u64 current_session(void)
{
	for (int level = 1; level < LG_MAX_CGROUP_LEVEL; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id)
			break;
		if (bpf_map_lookup_elem(&lg_sessions, &id))
			return id;
	}
	return 0;
}

/* A task with no BPF local storage at all carries no mark of ours. Most
 * processes have none, and reading the pointer is one load where asking
 * the map is a helper call that disables migration: on the kill and fork
 * paths of every process that difference is most of the hook's cost. A
 * mark being created concurrently is missed either way. */
static __always_inline bool may_have_marks(struct task_struct *t)
{
	return t->bpf_storage;
}

static __always_inline struct lg_protected *protection_mark(struct task_struct *leader)
{
	if (!may_have_marks(leader))
		return 0;
	return bpf_task_storage_get(&lg_protected, leader, 0, 0);
}

/* A member mark counts while its session is still tagged. */
static __always_inline __u64 marked_session(struct task_struct *leader)
{
	if (!may_have_marks(leader))
		return 0;
	struct lg_member *m = bpf_task_storage_get(&lg_members, leader, 0, 0);

	if (m && bpf_map_lookup_elem(&lg_sessions, &m->session_cgroup_id))
		return m->session_cgroup_id;
	return 0;
}

/* The session the current task belongs to, or 0. Membership sticks to the
 * process tree: a descendant forked inside a session carries a mark that
 * moving to another cgroup does not remove. The parent's mark stands in
 * for a child's that could not be created at fork. */
static __always_inline __u64 member_session(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *leader = t->group_leader;
	__u64 s = marked_session(leader);

	if (s)
		return s;
	s = current_session();
	if (s)
		return s;
	return marked_session(leader->real_parent->group_leader);
}

/* Protection is a mark on the thread-group leader, so it covers every
 * thread whichever one a tkill/tgkill names. A child of a supervisor whose
 * children inherit is protected through its parent as well: the mark made
 * at fork can be missing (task storage refuses creation while another
 * storage operation holds this CPU), and the parent's says the same. */
static __always_inline struct lg_protected *covering_mark(struct task_struct *p)
{
	struct task_struct *leader = p->group_leader;
	struct lg_protected *m = protection_mark(leader);

	if (m)
		return m;
	m = protection_mark(leader->real_parent->group_leader);
	return m && (m->flags & LG_PROTECT_INHERIT) ? m : 0;
}

static __always_inline bool is_protected(struct task_struct *p)
{
	return covering_mark(p);
}

/* Direct reads, not BPF_CORE_READ: these are plain loads, where
 * BPF_CORE_READ is a probe-read helper call per field, and the cgroup walk
 * runs on every kill. A cgroup's own css points back at it, so the parent
 * comes typed, without a cast the verifier would not follow. */
static __always_inline struct cgroup *cgroup_parent(struct cgroup *cg)
{
	struct cgroup_subsys_state *css = cg->self.parent;

	return css ? css->cgroup : 0;
}

static __always_inline struct cgroup *task_cgroup(struct task_struct *p)
{
	return p->cgroups->dfl_cgrp;
}

static __always_inline bool maybe_protected_cgroup(struct lg_cgroup_filter *f, __u64 id)
{
	return f->words[lg_cgroup_filter_word(id) & (LG_CGROUP_FILTER_BITS / 64 - 1)] &
	       lg_cgroup_filter_bit(id);
}

/* The protection of a cgroup or of its nearest protected ancestor, or 0.
 * Read at the time of the act, so a process started in a protected unit
 * is covered before any userspace watcher could have seen it. */
static __always_inline struct lg_cgroup_protection *covering_cgroup(struct cgroup *cg)
{
	__u32 zero = 0;
	struct lg_cgroup_filter *f = bpf_map_lookup_elem(&lg_cgroup_filter, &zero);

	if (!f)
		return 0;
	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		__u64 id = cg->kn->id;

		if (maybe_protected_cgroup(f, id)) {
			struct lg_cgroup_protection *cp = bpf_map_lookup_elem(&lg_protected_cgroups, &id);

			if (cp)
				return cp;
		}
		cg = cgroup_parent(cg);
	}
	return 0;
}

/* The same walk from a pointer the verifier has no type for (found
 * through i_private or by pointer arithmetic), which direct loads cannot
 * follow: probe reads, on the paths of the side doors only. */
static __always_inline bool cgroup_protected_untyped(struct cgroup *cg)
{
	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);

		if (bpf_map_lookup_elem(&lg_protected_cgroups, &id))
			return true;
		/* struct cgroup starts with its css, so a parent css is the
		 * parent cgroup. */
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return false;
}

static __always_inline bool in_protected_cgroup(struct task_struct *p)
{
	if (!any(LG_SETTING_PROTECTED_CGROUPS))
		return false;
	return covering_cgroup(task_cgroup(p));
}

static __always_inline bool target_protected(struct task_struct *p)
{
	return is_protected(p) || in_protected_cgroup(p);
}

/* Which [[protect]] protects a process: its mark's source, its inheriting
 * parent's, or its protected cgroup's. Only on the refusal path. */
static __always_inline __u32 protection_source(struct task_struct *p)
{
	struct lg_protected *m = covering_mark(p);

	if (m)
		return m->source;
	struct lg_cgroup_protection *cp = covering_cgroup(task_cgroup(p));

	return cp ? cp->source : LG_SOURCE_UNKNOWN;
}

/* The culprit's ancestors and command line go into the record: by the
 * time userspace reads it, a short-lived test helper may be gone. */
static __always_inline void describe_culprit(struct lg_event *e)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct task_struct *a = BPF_CORE_READ(t, group_leader, real_parent);
	__u32 n = 0;

	for (int i = 0; i < LG_CHAIN_LEN; i++) {
		if (!a)
			break;
		__u32 pid = BPF_CORE_READ(a, tgid);

		if (!pid)
			break;
		e->chain[i].pid = pid;
		e->chain[i]._pad = 0;
		BPF_CORE_READ_STR_INTO(&e->chain[i].comm, a, group_leader, comm);
		n = i + 1;
		if (pid == 1)
			break;
		a = BPF_CORE_READ(a, group_leader, real_parent);
	}
	e->chain_len = n;
	__u64 start = BPF_CORE_READ(t, mm, arg_start);
	__u64 end = BPF_CORE_READ(t, mm, arg_end);
	__u64 len = end > start ? end - start : 0;

	if (len > LG_ARGS_LEN)
		len = LG_ARGS_LEN;
	e->args_len = 0;
	if (len && !bpf_probe_read_user(e->args, len & 0xff, (void *)start))
		e->args_len = len & 0xff;
}

static __always_inline struct lg_event *event_start(__u32 verdict, __u32 hook, __u64 session)
{
	count(LG_COUNTER_DENIED + hook);
	struct lg_event *e = bpf_ringbuf_reserve(&lg_events, sizeof(*e), 0);

	if (!e) {
		count(LG_COUNTER_EVENTS_LOST);
		return 0;
	}
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	e->boot_ns = bpf_ktime_get_boot_ns();
	e->session_cgroup_id = session;
	e->verdict = verdict;
	e->target_source = LG_SOURCE_UNKNOWN;
	e->_pad2 = 0;
	describe_culprit(e);
	e->hook = hook;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->target_pid = 0;
	e->target_tid = 0;
	e->signal = 0;
	e->detail = 0;
	e->object_id = 0;
	e->target_comm[0] = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/* A refusal aimed at a process. */
static __always_inline void report_task_v(__u32 verdict, __u32 hook, __u64 session,
					  struct task_struct *target, int sig, __u32 detail)
{
	struct lg_event *e = event_start(verdict, hook, session);

	if (!e)
		return;
	e->target_source = protection_source(target);
	e->target_pid = BPF_CORE_READ(target, tgid);
	e->target_tid = BPF_CORE_READ(target, pid);
	e->signal = sig;
	e->detail = detail;
	BPF_CORE_READ_STR_INTO(&e->target_comm, target, group_leader, comm);
	bpf_ringbuf_submit(e, 0);
}

/* A refusal aimed at a file, a cgroup or a kernel object. */
static __always_inline void report_object_v(__u32 verdict, __u32 hook, __u64 session,
					    struct dentry *d, __u64 object, __u32 detail,
					    __u32 target_pid)
{
	struct lg_event *e = event_start(verdict, hook, session);

	if (!e)
		return;
	e->object_id = object;
	e->detail = detail;
	e->target_pid = target_pid;
	if (d)
		bpf_probe_read_kernel_str(e->target_comm, sizeof(e->target_comm),
					  BPF_CORE_READ(d, d_name.name));
	bpf_ringbuf_submit(e, 0);
}

#define report_task(...) report_task_v(LG_VERDICT_DENIED, __VA_ARGS__)
#define report_object(...) report_object_v(LG_VERDICT_DENIED, __VA_ARGS__)

static __always_inline struct lg_guarded_inode *guarded_inode(struct inode *inode)
{
	struct lg_inode_key key = {
		.dev = BPF_CORE_READ(inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(inode, i_ino),
	};

	return bpf_map_lookup_elem(&lg_guarded_inodes, &key);
}

/* The decision the task hooks share: a session member acting on a
 * protected process is refused, with one event. Cheapest checks first: no
 * session tagged anywhere means nothing can be refused, and most targets
 * are unprotected, which is cheaper to learn than membership. */
static __always_inline int refuse_member_act(__u32 hook, struct task_struct *p, int sig,
					     __u32 detail)
{
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	if (!target_protected(p))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_task(hook, session, p, sig, detail);
	return -EPERM;
}

SEC("lsm/task_kill")
int BPF_PROG(lg_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	if (ret)
		return ret;
	/* Signal 0 only probes for existence: discovery without delivery. */
	if (sig == 0)
		return 0;
	return refuse_member_act(LG_HOOK_TASK_KILL, p, sig, 0);
}

/* A fork by a process whose protection is inherited (a supervisor) marks
 * the child, so a restarted service has no unprotected moment; a fork
 * inside a session marks the child a member, so it stays one wherever it
 * goes. `parent` is the current task. */
static __always_inline void mark_child(struct task_struct *parent, struct task_struct *task)
{
	struct lg_protected *pm = protection_mark(parent->group_leader);

	if (pm && (pm->flags & LG_PROTECT_INHERIT)) {
		struct lg_protected *cm =
			bpf_task_storage_get(&lg_protected, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (cm) {
			if (!cm->since_boot_ns) {
				cm->since_boot_ns = bpf_ktime_get_boot_ns();
				cm->source = pm->source;
				cm->flags = LG_PROTECT_INHERITED;
			}
		} else {
			count(LG_COUNTER_INHERIT_FAILED);
		}
	}
	if (!any(LG_SETTING_SESSIONS))
		return;
	__u64 session = member_session();
	if (!session)
		return;
	struct lg_member *mm =
		bpf_task_storage_get(&lg_members, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!mm) {
		count(LG_COUNTER_MEMBER_MARK_FAILED);
		return;
	}
	if (!mm->since_boot_ns) {
		mm->session_cgroup_id = session;
		mm->since_boot_ns = bpf_ktime_get_boot_ns();
	}
}

/* Marks are made before the child runs. Threads share their leader's
 * marks and need none. */
SEC("lsm/task_alloc")
int BPF_PROG(lg_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	if (ret)
		return ret;
	if (clone_flags & CLONE_THREAD)
		return 0;
	mark_child(bpf_get_current_task_btf(), task);
	return 0;
}

/* A supervisor's child gets its number only after task_alloc: record it
 * for the doors that name a process by number. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(lg_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->pid != child->tgid)
		return 0;
	/* Without the LSM, the marks are made here, as the child starts. */
	if (any(LG_SETTING_AUDIT_ONLY))
		mark_child(bpf_get_current_task_btf(), child);
	struct lg_protected *cm = protection_mark(child);

	if (!cm)
		return 0;
	__u32 tgid = child->tgid;
	__u64 ticks = child->start_boottime / NSEC_PER_USER_TICK;

	bpf_map_update_elem(&lg_protected_pids, &tgid, &ticks, BPF_ANY);
	return 0;
}

/* A protected process moved to another cgroup (by a supervisor, say)
 * makes that cgroup and its ancestors guarded at once. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(lg_cgroup_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	if (!is_protected(task))
		return 0;
	__u32 one = 1;
	struct cgroup *cg = dst;

	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		__u64 id = BPF_CORE_READ(cg, kn, id);

		bpf_map_update_elem(&lg_guarded_cgroups, &id, &one, BPF_ANY);
		cg = (struct cgroup *)BPF_CORE_READ(cg, self.parent);
	}
	return 0;
}

/* ---- ptrace, process_vm_*, /proc/<pid>/mem: all pass mm_access() or
 * ptrace_attach(), which ask this hook with PTRACE_MODE_ATTACH. Reads of
 * /proc/<pid>/status and the like ask only for PTRACE_MODE_READ. */
SEC("lsm/ptrace_access_check")
int BPF_PROG(lg_ptrace, struct task_struct *child, unsigned int mode, int ret)
{
	if (ret)
		return ret;
	if (!(mode & PTRACE_MODE_ATTACH))
		return 0;
	return refuse_member_act(LG_HOOK_PTRACE, child, 0, mode);
}

/* ---- limits: a CPU-time limit kills (SIGKILL at the hard limit, with no
 * kill check); priority, scheduler class and I/O priority can starve. */
static __always_inline int limit_change(struct task_struct *p, __u32 what)
{
	return refuse_member_act(LG_HOOK_LIMITS, p, 0, what);
}

SEC("lsm/task_setrlimit")
int BPF_PROG(lg_setrlimit, struct task_struct *p, unsigned int resource, struct rlimit *new_rlim,
	     int ret)
{
	/* A process may lower its own limits; only another's are guarded. */
	if (ret || p->group_leader == bpf_get_current_task_btf()->group_leader)
		return ret;
	return limit_change(p, 1);
}

SEC("lsm/task_setnice")
int BPF_PROG(lg_setnice, struct task_struct *p, int nice, int ret)
{
	return ret ? ret : limit_change(p, 2);
}

SEC("lsm/task_setscheduler")
int BPF_PROG(lg_setscheduler, struct task_struct *p, int ret)
{
	return ret ? ret : limit_change(p, 3);
}

SEC("lsm/task_setioprio")
int BPF_PROG(lg_setioprio, struct task_struct *p, int ioprio, int ret)
{
	return ret ? ret : limit_change(p, 4);
}

/* ---- files opened for writing: control FIFOs, cgroup files, /proc files */

static __always_inline bool name_is(struct dentry *d, const char *want, int len)
{
	char buf[16] = {};

	if (bpf_probe_read_kernel_str(buf, sizeof(buf), BPF_CORE_READ(d, d_name.name)) != len + 1)
		return false;
	for (int i = 0; i < len && i < 16; i++)
		if (buf[i] != want[i])
			return false;
	return true;
}

/* Whether the cgroup is, holds, or is an ancestor of, a protected process. */
static __always_inline bool cgroup_guarded(struct cgroup *cg, __u64 id)
{
	if (bpf_map_lookup_elem(&lg_guarded_cgroups, &id))
		return true;
	return any(LG_SETTING_PROTECTED_CGROUPS) && cgroup_protected_untyped(cg);
}

static __always_inline int cgroup_file_open(struct file *file, __u64 session)
{
	struct dentry *d = file->f_path.dentry;
	struct kernfs_node *dir = BPF_CORE_READ(d, d_parent, d_inode, i_private);
	__u64 id = BPF_CORE_READ(dir, id);
	struct cgroup *cg = BPF_CORE_READ(dir, priv);

	/* Moving a process is refused wherever it would go: the kernel gives
	 * no hook that names the process being moved, and a move could take
	 * a member out of its session or a protected process out of its
	 * protected cgroup. */
	bool move = name_is(d, "cgroup.procs", 12) || name_is(d, "cgroup.threads", 14);

	if (!move && !cgroup_guarded(cg, id))
		return 0;
	report_object(LG_HOOK_CGROUP_FILE, session, d, id, 0, 0);
	return -EPERM;
}

/* The process a /proc/<pid>/... inode is about: proc_inode's struct pid,
 * read as plain kernel memory (the pointer is not one the verifier can
 * hand to task storage, hence lg_protected_pids). */
static __always_inline int proc_file_open(struct file *file, __u64 session)
{
	struct dentry *d = file->f_path.dentry;

	/* SysRq e/i/f signal or OOM-kill processes without any kill check. */
	if (name_is(d, "sysrq-trigger", 13)) {
		report_object(LG_HOOK_PROC_FILE, session, d, 0, 0, 0);
		return -EPERM;
	}
	if (!name_is(d, "oom_score_adj", 13) && !name_is(d, "oom_adj", 7))
		return 0;
	struct inode *inode = file->f_inode;
	struct proc_inode *pi =
		(void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);
	struct pid *pid = BPF_CORE_READ(pi, pid);
	struct hlist_node *first = BPF_CORE_READ(pid, tasks[0].first);

	if (!first)
		return 0;
	struct task_struct *t = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	__u32 tgid = BPF_CORE_READ(t, tgid);
	__u64 ticks = BPF_CORE_READ(t, group_leader, start_boottime) / NSEC_PER_USER_TICK;
	__u64 *known = bpf_map_lookup_elem(&lg_protected_pids, &tgid);
	bool protected = known && *known == ticks;

	if (!protected && any(LG_SETTING_PROTECTED_CGROUPS))
		protected = cgroup_protected_untyped(BPF_CORE_READ(t, cgroups, dfl_cgrp));
	if (!protected)
		return 0;
	report_object(LG_HOOK_PROC_FILE, session, d, BPF_CORE_READ(inode, i_ino), 0, tgid);
	return -EPERM;
}

SEC("lsm/file_open")
int BPF_PROG(lg_file_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	if (!(file->f_mode & FMODE_WRITE))
		return 0;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	struct inode *inode = file->f_inode;
	unsigned long magic = inode->i_sb->s_magic;
	struct lg_guarded_inode *g = 0;

	if (magic != CGROUP2_SUPER_MAGIC && magic != PROC_SUPER_MAGIC) {
		g = guarded_inode(inode);
		if (!g || (g->kind != LG_INODE_SUPERVISE_CONTROL && g->kind != LG_INODE_SVSCAN_CONTROL))
			return 0;
	}
	__u64 session = member_session();
	if (!session)
		return 0;
	if (magic == CGROUP2_SUPER_MAGIC)
		return cgroup_file_open(file, session);
	if (magic == PROC_SUPER_MAGIC)
		return proc_file_open(file, session);
	report_object(LG_HOOK_CONTROL_FIFO, session, file->f_path.dentry, inode->i_ino,
		      g ? g->kind : 0, 0);
	return -EPERM;
}

/* ---- SIGIO/SIGURG through F_SETOWN. The signal is sent when I/O happens,
 * by whoever causes it (often an interrupt), so who set the owner is
 * recorded when it is set and checked when the signal goes out. */

/* Kernels before 6.12 embed the owner in struct file; later ones point
 * to it and give it a back pointer. */
struct file___embedded_owner {
	struct fown_struct f_owner;
} __attribute__((preserve_access_index));

static __always_inline __u64 fown_file(struct fown_struct *fown)
{
	if (bpf_core_field_exists(struct fown_struct, file))
		return (__u64)BPF_CORE_READ(fown, file);
	return (__u64)((void *)fown - bpf_core_field_offset(struct file___embedded_owner, f_owner));
}

SEC("lsm/file_set_fowner")
int BPF_PROG(lg_set_fowner, struct file *file)
{
	__u64 key = (__u64)file;

	if (!any(LG_SETTING_SESSIONS)) {
		bpf_map_delete_elem(&lg_fowners, &key);
		return 0;
	}
	__u64 session = member_session();

	if (session)
		bpf_map_update_elem(&lg_fowners, &key, &session, BPF_ANY);
	else
		bpf_map_delete_elem(&lg_fowners, &key);
	return 0;
}

SEC("lsm/file_send_sigiotask")
int BPF_PROG(lg_sigio, struct task_struct *tsk, struct fown_struct *fown, int sig, int ret)
{
	if (ret)
		return ret;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	__u64 key = fown_file(fown);
	__u64 *session = bpf_map_lookup_elem(&lg_fowners, &key);

	if (!session || !bpf_map_lookup_elem(&lg_sessions, session))
		return 0;
	if (!target_protected(tsk))
		return 0;
	report_task(LG_HOOK_SIGIO, *session, tsk, sig ? sig : 29 /* SIGIO */, 0);
	return -EPERM;
}

/* ---- service manager sockets (opt-in: the loader lists them only when
 * the policy asks). Matched on the listening socket's inode, so any path
 * or symlink to it is the same socket. */
SEC("lsm/unix_stream_connect")
int BPF_PROG(lg_unix_connect, struct socket *sock, struct sock *other, struct sock *newsk,
	     int ret)
{
	if (ret)
		return ret;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	struct unix_sock *u = (void *)other;
	struct dentry *d = BPF_CORE_READ(u, path.dentry);

	if (!d)
		return 0;
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct lg_guarded_inode *g = guarded_inode(inode);

	if (!g || g->kind != LG_INODE_SERVICE_SOCKET)
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_SERVICE_SOCKET, session, d, BPF_CORE_READ(inode, i_ino), g->kind, 0);
	return -EPERM;
}

/* ---- exec guard: service-control commands. The arguments are copied at
 * syscall entry; by the time the exec is checked the new argv lives in an
 * address space BPF cannot read. */

struct capture_ctx {
	__u64 argv;
	__u32 tid;
};

static long capture_arg(__u32 i, struct capture_ctx *c)
{
	if (i >= LG_EXEC_MAX_ARGS)
		return 1;
	__u64 arg = 0;
	__u32 zero = 0;
	struct lg_arg_buf *buf = bpf_map_lookup_elem(&lg_scratch, &zero);
	struct lg_exec_args *a = bpf_map_lookup_elem(&lg_exec_args, &c->tid);

	if (!buf || !a)
		return 1;
	/* An argument that cannot be read here (its page not present just
	 * now) might be the one that matters: mark the copy incomplete, and
	 * the decision fails closed. */
	if (bpf_probe_read_user(&arg, sizeof(arg), (void *)(c->argv + i * sizeof(__u64)))) {
		a->argc = LG_EXEC_MAX_ARGS + 1;
		return 1;
	}
	if (!arg)
		return 1;
	if (bpf_probe_read_user_str(buf->c, sizeof(buf->c), (void *)arg) < 1) {
		a->argc = LG_EXEC_MAX_ARGS + 1;
		return 1;
	}
	__u64 h = LG_FNV_OFFSET;
	bool glob = false;

	for (int j = 0; j < LG_EXEC_ARG_LEN; j++) {
		char ch = buf->c[j];

		if (!ch)
			break;
		h ^= (unsigned char)ch;
		h *= LG_FNV_PRIME;
		if (ch == '*' || ch == '?' || ch == '[')
			glob = true;
	}
	/* The mask restates i < LG_EXEC_MAX_ARGS where the verifier sees it. */
	a->hash[i & (LG_EXEC_MAX_ARGS - 1)] = h;
	if (glob)
		a->glob_mask |= 1u << (i & (LG_EXEC_MAX_ARGS - 1));
	a->argc = i + 1;
	return 0;
}

static __always_inline int capture_argv(__u64 argv)
{
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	if (!member_session())
		return 0;
	struct capture_ctx c = {.argv = argv, .tid = (__u32)bpf_get_current_pid_tgid()};
	struct lg_exec_args empty = {};

	if (bpf_map_update_elem(&lg_exec_args, &c.tid, &empty, BPF_ANY))
		return 0;
	bpf_loop(LG_EXEC_MAX_ARGS, capture_arg, &c, 0);
	/* More arguments than were copied: the decision fails closed. */
	__u64 more = 0;

	if (!bpf_probe_read_user(&more, sizeof(more), (void *)(argv + LG_EXEC_MAX_ARGS * sizeof(__u64))) &&
	    more) {
		struct lg_exec_args *a = bpf_map_lookup_elem(&lg_exec_args, &c.tid);

		/* Only past a full copy: a shorter argv ends at its NULL. */
		if (a && a->argc == LG_EXEC_MAX_ARGS)
			a->argc = LG_EXEC_MAX_ARGS + 1;
	}
	return 0;
}

/* Enforcement copies argv on entry to the x86-64 syscall wrappers, which
 * take the user's registers. The syscall tracepoints would do too, but
 * enabling any of them sends every syscall of every process on the machine
 * through the tracing slow path; fentry costs only execve. */
SEC("fentry/__x64_sys_execve")
int BPF_PROG(lg_exec_argv_entry, const struct pt_regs *regs)
{
	return capture_argv(BPF_CORE_READ(regs, si));
}

SEC("fentry/__x64_sys_execveat")
int BPF_PROG(lg_execveat_argv_entry, const struct pt_regs *regs)
{
	return capture_argv(BPF_CORE_READ(regs, dx));
}

/* Audit-only mode keeps the tracepoints: it serves kernels that refuse the
 * trampolines LSM programs need, and fentry uses the same trampolines. */
SEC("tp/syscalls/sys_enter_execve")
int lg_exec_argv(struct trace_event_raw_sys_enter *ctx)
{
	return capture_argv(ctx->args[1]);
}

SEC("tp/syscalls/sys_enter_execveat")
int lg_execveat_argv(struct trace_event_raw_sys_enter *ctx)
{
	return capture_argv(ctx->args[2]);
}

/* Whether a member's exec of a service-control binary would act on a
 * protected service, judged from the argv copied for thread `tid`. */
static __always_inline bool exec_touches_protected(__u32 kind, __u32 tid)
{
	struct lg_exec_args *a = bpf_map_lookup_elem(&lg_exec_args, &tid);
	bool refuse;

	if (!a) {
		/* Not knowing what the command would do, refuse it. */
		count(LG_COUNTER_ARGV_MISSING);
		return true;
	}
	__u32 words = 0;
	__u32 argc = a->argc;

	for (__u32 i = 1; i < LG_EXEC_MAX_ARGS; i++) {
		if (i >= argc)
			break;
		__u32 *w = bpf_map_lookup_elem(&lg_exec_words, &a->hash[i]);

		if (w)
			words |= *w;
	}
	bool globs = a->glob_mask & ~1u;
	/* Arguments past the copied ones could name anything. */
	bool unseen = argc > LG_EXEC_MAX_ARGS;

	if (kind == LG_INODE_SYSTEMCTL)
		refuse = (words & LG_WORD_GLOBAL_VERB) ||
			 ((words & LG_WORD_MUTATING_VERB) &&
			  ((words & LG_WORD_PROTECTED_UNIT) || globs || unseen));
	else if (kind == LG_INODE_S6_SVC)
		refuse = (words & LG_WORD_S6_SERVICE) || unseen;
	else
		refuse = (words & LG_WORD_S6_SCANDIR) || unseen;
	bpf_map_delete_elem(&lg_exec_args, &tid);
	return refuse;
}

/* The kind of service-control binary a member's exec runs, when its
 * arguments act on a protected service; 0 otherwise. `session` receives
 * the member's session. Shared by the enforcing hook and the audit
 * tracepoint, which differ only in when they run. */
static __always_inline __u32 service_control_exec(struct linux_binprm *bprm, __u32 tid,
						  __u64 *session)
{
	struct lg_guarded_inode *g = guarded_inode(bprm->file->f_inode);

	if (!g || g->kind < LG_INODE_SYSTEMCTL || g->kind > LG_INODE_S6_SVSCANCTL)
		return 0;
	__u32 kind = g->kind;

	*session = member_session();
	if (!*session || !exec_touches_protected(kind, tid))
		return 0;
	return kind;
}

SEC("lsm/bprm_check_security")
int BPF_PROG(lg_bprm_check, struct linux_binprm *bprm, int ret)
{
	if (ret)
		return ret;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	__u64 session;
	__u32 kind = service_control_exec(bprm, (__u32)bpf_get_current_pid_tgid(), &session);

	if (!kind)
		return 0;
	report_object(LG_HOOK_EXEC, session, bprm->file->f_path.dentry, bprm->file->f_inode->i_ino,
		      kind, 0);
	return -EPERM;
}

/* ---- tampering: liveguard's own maps, programs, links and pins */

static __always_inline bool ours(const char *name)
{
	char n[3] = {};

	bpf_probe_read_kernel(n, sizeof(n), name);
	return n[0] == 'l' && n[1] == 'g' && n[2] == '_';
}

/* A member may read liveguard's maps (discovery is harmless) but get no
 * writable fd to them, and no fd to its programs. */
SEC("lsm/bpf_map")
int BPF_PROG(lg_bpf_map, struct bpf_map *map, fmode_t fmode, int ret)
{
	if (ret)
		return ret;
	if (!(fmode & FMODE_WRITE) || !any(LG_SETTING_SESSIONS))
		return 0;
	if (!ours(map->name))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_BPF, session, 0, map->id, 0, 0);
	return -EPERM;
}

SEC("lsm/bpf_prog")
int BPF_PROG(lg_bpf_prog, struct bpf_prog *prog, int ret)
{
	if (ret)
		return ret;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	if (!ours(prog->aux->name))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_BPF, session, 0, prog->aux->id, 0, 0);
	return -EPERM;
}

/* Links have no hook of their own: a member may not detach, replace or
 * look up any link by id. */
SEC("lsm/bpf")
int BPF_PROG(lg_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	if (ret)
		return ret;
	if (cmd != BPF_LINK_DETACH && cmd != BPF_LINK_UPDATE && cmd != BPF_LINK_GET_FD_BY_ID &&
	    cmd != BPF_PROG_DETACH)
		return 0;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_BPF, session, 0, 0, cmd, 0);
	return -EPERM;
}

static __always_inline bool is_pin_dir(struct inode *inode)
{
	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != BPF_FS_MAGIC)
		return false;
	struct lg_guarded_inode *g = guarded_inode(inode);

	return g && g->kind == LG_INODE_PIN_DIR;
}

static __always_inline int pin_change(struct inode *dir, struct dentry *d)
{
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	if (!is_pin_dir(dir) && !is_pin_dir(BPF_CORE_READ(d, d_inode)))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_PINS, session, d, BPF_CORE_READ(dir, i_ino), 0, 0);
	return -EPERM;
}

SEC("lsm/inode_unlink")
int BPF_PROG(lg_inode_unlink, struct inode *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : pin_change(dir, dentry);
}

SEC("lsm/inode_rmdir")
int BPF_PROG(lg_inode_rmdir, struct inode *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : pin_change(dir, dentry);
}

SEC("lsm/inode_create")
int BPF_PROG(lg_inode_create, struct inode *dir, struct dentry *dentry, umode_t mode, int ret)
{
	return ret ? ret : pin_change(dir, dentry);
}

SEC("lsm/inode_rename")
int BPF_PROG(lg_inode_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry, int ret)
{
	if (ret)
		return ret;
	int r = pin_change(old_dir, old_dentry);

	return r ? r : pin_change(new_dir, new_dentry);
}

/* Unmounting the last bpffs mount would drop the pins, and with them the
 * links. */
SEC("lsm/sb_umount")
int BPF_PROG(lg_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	if (BPF_CORE_READ(mnt, mnt_sb, s_magic) != BPF_FS_MAGIC)
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_PINS, session, BPF_CORE_READ(mnt, mnt_root), 0, 0, 0);
	return -EPERM;
}

/* Mounting over bpffs hides the pins from `unload` and `status` (old or
 * new mount API alike). */
static __always_inline int mount_over(const struct path *target)
{
	if (!any(LG_SETTING_SESSIONS))
		return 0;
	if (BPF_CORE_READ(target, dentry, d_sb, s_magic) != BPF_FS_MAGIC)
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_object(LG_HOOK_PINS, session, BPF_CORE_READ(target, dentry), 0, 0, 0);
	return -EPERM;
}

SEC("lsm/sb_mount")
int BPF_PROG(lg_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	return ret ? ret : mount_over(path);
}

SEC("lsm/move_mount")
int BPF_PROG(lg_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	return ret ? ret : mount_over(to_path);
}

/* ---- audit-only mode: where the kernel will not run LSM programs, these
 * tracepoints report what enforcement would have refused, and block
 * nothing. Loaded instead of the LSM programs, never beside them. */

SEC("tp_btf/signal_generate")
int BPF_PROG(lg_audit_signal, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	if (!any(LG_SETTING_AUDIT_ONLY) || !any(LG_SETTING_SESSIONS))
		return 0;
	/* Only signals a process asked for: kill(), sigqueue(), cgroup.kill.
	 * The kernel's own (SIGCHLD, SIGPIPE, faults) carry a positive si_code
	 * or SEND_SIG_PRIV. */
	if ((unsigned long)info == 1)
		return 0;
	if ((unsigned long)info > 1 && BPF_CORE_READ(info, si_code) > 0)
		return 0;
	if (!target_protected(task))
		return 0;
	__u64 session = member_session();
	if (!session)
		return 0;
	report_task_v(LG_VERDICT_AUDITED, LG_HOOK_TASK_KILL, session, task, sig, 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lg_audit_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (!any(LG_SETTING_AUDIT_ONLY) || !any(LG_SETTING_SESSIONS))
		return 0;
	__u64 session;
	/* The argv was copied under the thread id the exec started with. */
	__u32 kind = service_control_exec(bprm, (__u32)old_pid, &session);

	if (!kind)
		return 0;
	report_object_v(LG_VERDICT_AUDITED, LG_HOOK_EXEC, session, bprm->file->f_path.dentry,
			bprm->file->f_inode->i_ino, kind, 0);
	return 0;
}
