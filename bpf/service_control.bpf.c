// SPDX-License-Identifier: GPL-2.0
/* Service managers: a member may not have systemd or s6 stop a protected
 * service for it, by running their control commands against it or (when
 * the policy asks) by connecting to the manager's socket at all. */
#include "arch/arch.h"
#include "lib/hook.h"
#include "lib/exec_guard.h"
#include "lib/bus_message.h"
#include "lib/engine_request.h"

#define LG_AF_UNIX 1

/* Enforcement copies argv on entry to the syscall wrappers, which take the
 * user's registers. The syscall tracepoints would do too, but enabling any
 * of them sends every syscall of every process on the machine through the
 * tracing slow path; fentry costs only execve. */
SEC("fentry/" LG_SYS_EXECVE)
int BPF_PROG(lg_exec_argv_entry, const struct pt_regs *regs)
{
	return capture_argv(LG_EXECVE_ARGV(regs));
}

SEC("fentry/" LG_SYS_EXECVEAT)
int BPF_PROG(lg_execveat_argv_entry, const struct pt_regs *regs)
{
	return capture_argv(LG_EXECVEAT_ARGV(regs));
}

LG_HOOK(bprm_check_security, lg_bprm_check, struct linux_binprm *, bprm)
{
	if (ret)
		return ret;
	carry_marks_through_exec();
	__u64 session = member_session();

	if (!session)
		return 0;
	__u32 kind = service_control_exec(bprm, (__u32)bpf_get_current_pid_tgid());

	if (!kind)
		return 0;
	return refuse_object_act(session, LG_HOOK_EXEC, bprm->file->f_path.dentry,
				 bprm->file->f_inode->i_ino, kind, 0);
}

/* A unix socket a member listens on is its session's: connecting to a
 * terminal multiplexer's server is refused unless the server is one.
 * Socket storage is the LSM form's: tracing programs may not use it, and
 * there a member's own server is known by its cgroup alone (below). */
LG_HOOK(socket_listen, lg_socket_listen, struct socket *, sock, int, backlog)
{
	if (ret || lg_fmod_ret_form)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	struct sock *sk = sock->sk;

	if (!sk || sk->__sk_common.skc_family != LG_AF_UNIX)
		return 0;
	__u64 *mark = bpf_sk_storage_get(&lg_member_listeners, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (mark)
		*mark = session;
	return 0;
}

/* The thread-group leader that listens on `listener`, which the kernel
 * records at listen() (sk_peer_pid of a listening socket); 0 when gone. */
static __always_inline struct task_struct *listener_of(struct sock *listener)
{
	struct pid *pid = BPF_CORE_READ(listener, sk_peer_pid);
	struct hlist_node *first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);

	return first ? (void *)first - bpf_core_field_offset(struct task_struct, pid_links) : 0;
}

/* The first n bytes of name, its NUL included, are want's. */
static __always_inline bool name_is(const char *name, const char *want, int n)
{
	for (int i = 0; i < n; i++)
		if (name[i] != want[i])
			return false;
	return true;
}

/* Whether `task` runs a terminal multiplexer: its executable is one the
 * loader found (tmux, screen), or is named like one (a server started
 * before a package upgrade runs the replaced file). */
static __always_inline bool runs_multiplexer(struct task_struct *task)
{
	struct file *exe = BPF_CORE_READ(task, mm, exe_file);
	struct inode *inode = BPF_CORE_READ(exe, f_inode);

	if (!inode)
		return false;
	struct lg_guarded_inode *g = guarded_inode(inode);

	if (g && g->kind == LG_INODE_MULTIPLEXER)
		return true;
	char name[8] = {};

	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(exe, f_path.dentry, d_name.name));
	return name_is(name, "tmux", 5) || name_is(name, "screen", 7);
}

/* Whether the server listening on `listener` (its leader `task`) belongs
 * to `session`: marked at listen() (the LSM form), or in the session's
 * cgroup or one below it. */
static __always_inline bool server_of_session(struct sock *listener, struct task_struct *task, __u64 session)
{
	if (!lg_fmod_ret_form) {
		__u64 *owner = bpf_sk_storage_get(&lg_member_listeners, listener, 0, 0);

		if (owner && *owner == session)
			return true;
	}
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);

	for (int level = 0; level < LG_MAX_CGROUP_LEVEL && cg; level++) {
		if (BPF_CORE_READ(cg, kn, id) == session)
			return true;
		cg = BPF_CORE_READ(cg, self.parent, cgroup);
	}
	return false;
}

/* Two ways a member's connect() hands work to a manager outside its
 * session: to systemd or the bus, opt-in, the loader listing those sockets
 * only when the policy asks (matched on the listening socket's inode, so
 * any path or symlink to it is the same socket); and to a terminal
 * multiplexer's server (tmux, screen) that is no member: `send-keys` or
 * `-X stuff` type into shells it runs outside every session. */
LG_HOOK(unix_stream_connect, lg_unix_connect, struct sock *, sock, struct sock *, other)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	struct unix_sock *u = (void *)other;
	struct dentry *d = BPF_CORE_READ(u, path.dentry);
	struct inode *inode = d ? BPF_CORE_READ(d, d_inode) : 0;
	struct lg_guarded_inode *g = inode ? guarded_inode(inode) : 0;

	if (g && g->kind == LG_INODE_SERVICE_SOCKET)
		return refuse_object_act(session, LG_HOOK_SERVICE_SOCKET, d, BPF_CORE_READ(inode, i_ino), g->kind, 0);
	if (g && g->kind == LG_INODE_BUS_SOCKET) {
		/* A new connection starts with authentication. */
		__u64 key = (__u64)sock, one = 1;

		if (bpf_map_update_elem(&lg_bus_auth, &key, &one, BPF_ANY))
			return refuse_object_act(session, LG_HOOK_SERVICE_BUS, d, BPF_CORE_READ(inode, i_ino),
						 LG_BUS_UNREADABLE, 0);
		return 0;
	}
	struct task_struct *server = listener_of(other);

	if (!server || !runs_multiplexer(server) || server_of_session(other, server, session))
		return 0;
	return refuse_object_act(session, LG_HOOK_MULTIPLEXER, d, inode ? BPF_CORE_READ(inode, i_ino) : 0, 0,
				 BPF_CORE_READ(server, tgid));
}

/* What a member writes on a bus connection: 0, or why it is refused.
 * The stream is followed once per write. In the fmod_ret form the two
 * programs (in either order) both see it: the first that allows it leaves
 * a note the other takes instead of following the stream again. A note
 * names the write exactly (its msghdr, buffer, length and the moment), so
 * one left over by a program the kernel skipped does not pass a later
 * write. */
static __noinline __u32 bus_write_refusal(struct sock *sk, struct msghdr *msg, int size)
{
	__u64 thread = bpf_get_current_pid_tgid();
	struct lg_bus_note note = {.msg = (__u64)msg, .size = size > 0 ? size : 0,
				   .at = bpf_ktime_get_boot_ns()};

	if (lg_fmod_ret_form) {
		struct lg_bus_note *seen = bpf_map_lookup_elem(&lg_bus_allowed, &thread);

		if (seen && seen->msg == note.msg && seen->size == note.size && note.at - seen->at < LG_BUS_NOTE_NS) {
			bpf_map_delete_elem(&lg_bus_allowed, &thread);
			return 0;
		}
	}
	int verdict = bus_write_verdict(sk, msg, note.size);

	if (!verdict && lg_fmod_ret_form)
		bpf_map_update_elem(&lg_bus_allowed, &thread, &note, BPF_ANY);
	return verdict;
}

/* What a member sends over a bus connection (the peer is the bus's
 * listening socket's, by inode): no call that has systemd or logind
 * change the machine's services or power, so no `systemd-run`, and
 * nothing the bus would read otherwise than this hook did. Over a
 * container engine's API socket: no request that stops, removes or
 * changes a guarded container (lib/engine_request.h). */
LG_HOOK(socket_sendmsg, lg_socket_sendmsg, struct socket *, sock, struct msghdr *, msg, int, size)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	struct sock *sk = BPF_CORE_READ(sock, sk);

	if (!sk || BPF_CORE_READ(sk, __sk_common.skc_family) != LG_AF_UNIX)
		return 0;
	struct unix_sock *peer = (void *)BPF_CORE_READ((struct unix_sock *)sk, peer);
	struct dentry *d = peer ? BPF_CORE_READ(peer, path.dentry) : 0;
	struct inode *inode = d ? BPF_CORE_READ(d, d_inode) : 0;
	struct lg_guarded_inode *g = inode ? guarded_inode(inode) : 0;

	__u32 hook, detail;

	if (g && g->kind == LG_INODE_ENGINE_SOCKET) {
		hook = LG_HOOK_ENGINE_API;
		detail = engine_request_verdict(msg);
	} else if (g && g->kind == LG_INODE_BUS_SOCKET) {
		hook = LG_HOOK_SERVICE_BUS;
		detail = bus_write_refusal(sk, msg, size);
	} else {
		return 0;
	}
	/* One refusal for both doors: each inlined report takes stack of
	 * its own, and this hook's callees leave little. */
	if (!detail)
		return 0;
	return refuse_object_act(session, hook, d, BPF_CORE_READ(inode, i_ino), detail, 0);
}

/* A socket freed takes its authentication phase with it, so the map never
 * fills with closed connections. Every unix socket freed on the machine
 * asks: one typed load of its family, a lookup only for unix sockets. */
LG_OBSERVER(sk_free_security, lg_sk_free, struct sock *, sk)
{
	if (sk->__sk_common.skc_family != LG_AF_UNIX)
		return 0;
	__u64 key = (__u64)sk;

	bpf_map_delete_elem(&lg_bus_auth, &key);
	return 0;
}
