/* The exec guard's judgement of a service-control command (systemctl,
 * s6-svc, s6-svscanctl) run by a member: its arguments are copied at
 * syscall entry, as hashes, because by the time the exec is checked the
 * new argv lives in an address space BPF cannot read; the check compares
 * them with the words that name protected services. Shared by the
 * enforcing hook and the audit tracepoint. */
#ifndef LG_BPF_EXEC_GUARD_H
#define LG_BPF_EXEC_GUARD_H

#include "gate.h"
#include "inodes.h"

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

/* Copies a member's argv (a user pointer to the pointer array). */
static __always_inline int capture_argv(__u64 argv)
{
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
	/* The copy is kept: in the fmod_ret form the hook's twin judges the
	 * same exec again (lib/twins.h). The exec that succeeds drops it
	 * (sessions.bpf.c), the next execve replaces it, exit drops it. */
	return refuse;
}

/* The kind of service-control binary a member's exec runs, when its
 * arguments act on a protected service; 0 otherwise. */
static __always_inline __u32 service_control_exec(struct linux_binprm *bprm, __u32 tid)
{
	struct lg_guarded_inode *g = guarded_inode(bprm->file->f_inode);

	if (!g || g->kind < LG_INODE_SYSTEMCTL || g->kind > LG_INODE_S6_SVSCANCTL)
		return 0;
	__u32 kind = g->kind;

	if (!exec_touches_protected(kind, tid))
		return 0;
	return kind;
}

#endif
