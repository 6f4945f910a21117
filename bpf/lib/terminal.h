/* A terminal is shared by every process of its session: input pushed into
 * it (TIOCSTI of ^C), its settings (stty tostop stops a background job on
 * its next write; a flow stop blocks every writer), its foreground group,
 * a hangup, a break or a stolen controlling terminal all reach a service
 * that runs in a terminal without any kill check naming it. A member may
 * change none of that on a terminal whose session holds a protected
 * process, unless the terminal is its own. */
#ifndef LG_BPF_TERMINAL_H
#define LG_BPF_TERMINAL_H

#include "gate.h"
#include "cgroups.h"

/* Leaders of the terminal's session looked at; a session with more is
 * taken to hold a protected one (a member's own terminal is never
 * looked at). */
#define LG_TERMINAL_SESSION_SCAN 16
#define LG_PIDTYPE_SID 3
#define LG_S_IFMT 00170000
#define LG_S_IFCHR 0020000

/* The terminal ioctls (asm-generic numbers: x86 and arm64) that change
 * what the session's processes see; reads, FIONBIO and FIOCLEX are not. */
static __always_inline bool terminal_change(unsigned int cmd)
{
	switch (cmd) {
	case 0x5402: /* TCSETS */
	case 0x5403: /* TCSETSW */
	case 0x5404: /* TCSETSF */
	case 0x5406: /* TCSETA */
	case 0x5407: /* TCSETAW */
	case 0x5408: /* TCSETAF */
	case 0x5409: /* TCSBRK */
	case 0x540A: /* TCXONC */
	case 0x540B: /* TCFLSH */
	case 0x540C: /* TIOCEXCL */
	case 0x540E: /* TIOCSCTTY */
	case 0x5410: /* TIOCSPGRP */
	case 0x5412: /* TIOCSTI */
	case 0x5414: /* TIOCSWINSZ */
	case 0x5416: /* TIOCMBIS */
	case 0x5417: /* TIOCMBIC */
	case 0x5418: /* TIOCMSET */
	case 0x541D: /* TIOCCONS */
	case 0x541F: /* TIOCSSERIAL */
	case 0x5423: /* TIOCSETD */
	case 0x5425: /* TCSBRKP */
	case 0x5427: /* TIOCSBRK */
	case 0x5433: /* TCSETX */
	case 0x5434: /* TCSETXF */
	case 0x5435: /* TCSETXW */
	case 0x5437: /* TIOCVHANGUP */
	case 0x5457: /* TIOCSLCKTRMIOS */
	case 0x402C542B: /* TCSETS2 */
	case 0x402C542C: /* TCSETSW2 */
	case 0x402C542D: /* TCSETSF2 */
	case 0x40045436: /* TIOCSIG (a pty master) */
		return true;
	default:
		return false;
	}
}

/* Before 6.0 the session was a field of tty_struct itself. */
struct tty_struct___flat {
	struct pid *session;
} __attribute__((preserve_access_index));

static __always_inline struct pid *terminal_session(struct tty_struct *tty)
{
	if (bpf_core_field_exists(tty->ctrl))
		return BPF_CORE_READ(tty, ctrl.session);
	return BPF_CORE_READ((struct tty_struct___flat *)tty, session);
}

/* The tgid of a protected process among the session's leaders (only
 * leaders are on its list), 0 when none is, ~0 when there are more than
 * are looked at. */
static __noinline __u32 session_protected_tgid(struct pid *sid)
{
	if (!sid)
		return 0;
	struct hlist_node *n = BPF_CORE_READ(sid, tasks[LG_PIDTYPE_SID].first);
	__u32 links = bpf_core_field_offset(struct task_struct, pid_links) +
		      LG_PIDTYPE_SID * sizeof(struct hlist_node);

	for (int i = 0; i < LG_TERMINAL_SESSION_SCAN; i++) {
		if (!n)
			return 0;
		struct task_struct *t = (void *)n - links;

		if (untyped_task_protected(t))
			return BPF_CORE_READ(t, tgid);
		n = BPF_CORE_READ(n, next);
	}
	return n ? ~0U : 0;
}

/* The terminal behind a file, or 0 when it is no terminal: a terminal's
 * file points at a tty_file_private that points back at the file. */
static __always_inline struct tty_struct *file_terminal(struct file *file)
{
	if ((BPF_CORE_READ(file, f_inode, i_mode) & LG_S_IFMT) != LG_S_IFCHR)
		return 0;
	struct tty_file_private *priv = BPF_CORE_READ(file, private_data);

	if (!priv || (void *)BPF_CORE_READ(priv, file) != (void *)file)
		return 0;
	return BPF_CORE_READ(priv, tty);
}

static __always_inline int member_terminal_act(struct file *file, unsigned int cmd)
{
	__u64 session = member_session();

	if (!session)
		return 0;
	struct tty_struct *tty = file_terminal(file);

	if (!tty)
		return 0;
	/* A pty master's ioctls reach the terminal on the other side. */
	struct tty_struct *other = BPF_CORE_READ(tty, link);
	struct tty_struct *own = BPF_CORE_READ(bpf_get_current_task_btf(), signal, tty);

	if (own && (own == tty || own == other))
		return 0;
	__u32 tgid = session_protected_tgid(terminal_session(tty));

	if (!tgid && other)
		tgid = session_protected_tgid(terminal_session(other));
	if (!tgid)
		return 0;
	return refuse_object_act(session, LG_HOOK_TERMINAL, 0, BPF_CORE_READ(file, f_inode, i_rdev), cmd,
				 tgid == ~0U ? 0 : tgid);
}

#endif
