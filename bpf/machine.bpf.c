// SPDX-License-Identifier: GPL-2.0
/* Acts that reach every process on the machine without naming one, so no
 * check on the service ever runs: a perf event that signals whatever it
 * watches, a fanotify permission mark nobody answers, which blocks every
 * open of the marked files, what only the machine's own capabilities
 * allow (reboot, kexec, modules, the clock, raw I/O, the host name, swap)
 * and changes to its network namespace. A member may use none of them. */
#include "arch/arch.h"
#include "lib/hook.h"
#include "lib/gate.h"
#include "lib/syscall.h"
#include "lib/user_counts.h"

/* Every permission event fanotify has had (FAN_OPEN_PERM, FAN_ACCESS_PERM,
 * FAN_OPEN_EXEC_PERM, FAN_PRE_ACCESS). */
#define LG_FAN_PERM_EVENTS (0x00010000ULL | 0x00020000ULL | 0x00040000ULL | 0x00100000ULL)

/* For root, the kernel does not ask the ptrace check (where a member is
 * refused) before a sigtrap event on another process. Checked when the
 * event is made: the open hook lost its attributes in 6.10. */
LG_HOOK(perf_event_alloc, lg_perf_event_alloc, struct perf_event *, event)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	struct perf_event_attr *attr = &event->attr;

	if (!BPF_CORE_READ_BITFIELD_PROBED(attr, sigtrap))
		return 0;
	return member_act_on_object(LG_HOOK_PERF_EVENT, 0, 0, 0, 0);
}

/* Every inotify watch and fanotify mark is asked for here: a permission
 * mark is refused, and any other one a member would take from its user's
 * reserve (lib/user_counts.h). */
LG_HOOK(path_notify, lg_path_notify, const struct path *, path, __u64, mask, unsigned int, obj_type)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	if (mask & LG_FAN_PERM_EVENTS) {
		int refused = refuse_object_act(session, LG_HOOK_FANOTIFY, BPF_CORE_READ(path, dentry), 0, obj_type, 0);

		if (refused)
			return refused;
	}
	return refuse_from_reserve(session);
}

/* Capabilities that act on the whole machine whoever holds them, checked
 * against the initial user namespace: a member's own user namespace owns
 * nothing they reach. reboot(2) in a PID namespace a member made without
 * a user namespace of its own is refused with them (the check cannot
 * tell the two apart). */
#define LG_CAP_NET_ADMIN 12
#define LG_CAP_SYS_MODULE 16
#define LG_CAP_SYS_RAWIO 17
#define LG_CAP_SYS_ADMIN 21
#define LG_CAP_SYS_BOOT 22
#define LG_CAP_SYS_TIME 25
#define LG_CAP_PERFMON 38
#define LG_MACHINE_CAPS                                                                    \
	((1ULL << LG_CAP_SYS_MODULE) | (1ULL << LG_CAP_SYS_RAWIO) | (1ULL << LG_CAP_SYS_BOOT) | \
	 (1ULL << LG_CAP_SYS_TIME))
/* Capabilities that reach the machine only on some paths, told apart by
 * the namespace the member is in or the call it makes. */
#define LG_SOMETIMES_MACHINE_CAPS \
	((1ULL << LG_CAP_NET_ADMIN) | (1ULL << LG_CAP_SYS_ADMIN) | (1ULL << LG_CAP_PERFMON))

/* The door of a CAP_SYS_ADMIN or CAP_PERFMON check, by the call being
 * made: the host and domain names of the machine's UTS namespace, swap,
 * and process_madvise(), which since 6.13 lets a holder of either
 * (perfmon_capable()) past a ptrace read check the guard refused. 0 for
 * every other use of them (mounts, namespaces, ... have doors of their
 * own). */
static __always_inline __u32 sys_admin_door(int cap)
{
	bool compat;
	__u64 nr = current_syscall(&compat);

	if (nr == LG_NR_PROCESS_MADVISE)
		return LG_HOOK_PTRACE;
	if (cap == LG_CAP_PERFMON)
		return 0;
	if (compat ? nr == LG_NR_COMPAT_SWAPON || nr == LG_NR_COMPAT_SWAPOFF
		   : nr == LG_NR_SWAPON || nr == LG_NR_SWAPOFF)
		return LG_HOOK_SWAP;
	if (compat ? nr == LG_NR_COMPAT_SETHOSTNAME || nr == LG_NR_COMPAT_SETDOMAINNAME
		   : nr == LG_NR_SETHOSTNAME || nr == LG_NR_SETDOMAINNAME)
		return bpf_get_current_task_btf()->nsproxy->uts_ns->ns.inum == lg_host_uts_ns ? LG_HOOK_HOSTNAME
											    : 0;
	return 0;
}

#define LG_NETLINK_SOCK_DIAG 4
#define LG_SOCK_DESTROY 21

/* The door of a capability check by a member, 0 when it reaches nothing
 * of the machine's. CAP_NET_ADMIN counts in the machine's network
 * namespace, where every use of it (an interface ioctl, iptables'
 * setsockopt, /sys/class/net, a netlink family) changes what every
 * service uses; in a namespace of the member's own it is its own. */
static __always_inline __u32 machine_cap_door(int cap)
{
	switch (cap) {
	case LG_CAP_SYS_BOOT: return LG_HOOK_REBOOT;
	case LG_CAP_SYS_MODULE: return LG_HOOK_MODULE;
	case LG_CAP_SYS_TIME: return LG_HOOK_CLOCK;
	case LG_CAP_SYS_RAWIO: return LG_HOOK_RAW_IO;
	case LG_CAP_SYS_ADMIN:
	case LG_CAP_PERFMON: return sys_admin_door(cap);
	default:
		return bpf_get_current_task_btf()->nsproxy->net_ns->ns.inum == lg_host_net_ns ? LG_HOOK_NETWORK
											     : 0;
	}
}

/* Every capability check on the machine passes here: the capability's
 * number rules out nearly all of them before anything else is read. Only
 * the current task's own checks count: the kernel also asks about other
 * tasks' credentials (has_capability), which are no act of theirs. A
 * check the kernel refuses anyway (the capability is not in the task's
 * effective set) is left to it, so no event names an act that could not
 * have happened. */
LG_HOOK(capable, lg_capable, const struct cred *, cred, struct user_namespace *, ns, int, cap)
{
	if (ret || (unsigned int)cap >= 64 || !((1ULL << cap) & (LG_MACHINE_CAPS | LG_SOMETIMES_MACHINE_CAPS)))
		return ret;
	if (BPF_CORE_READ(ns, level) != 0)
		return 0;
	if ((void *)cred != (void *)bpf_get_current_task_btf()->cred)
		return 0;
	__u64 session = member_session();

	if (!session)
		return 0;
	__u64 effective = 0;

	bpf_core_read(&effective, sizeof(effective), &cred->cap_effective);
	if (!((effective >> cap) & 1))
		return 0;
	__u32 door = machine_cap_door(cap);

	if (!door)
		return 0;
	return refuse_object_act(session, door, 0, 0, door == LG_HOOK_NETWORK ? LG_NETWORK_ADMIN : cap, 0);
}

#define LG_NETLINK_ROUTE 0
#define LG_NETLINK_NETFILTER_PROTO 12
#define LG_RTM_BASE 16

#define LG_RTM_NEWLINK 16
#define LG_NLM_F_CREATE 0x400
/* struct ifinfomsg (uapi: fixed): its size and where ifi_index is. */
#define LG_IFINFOMSG_LEN 16
#define LG_IFINFOMSG_INDEX 4

/* iproute2's probe for RTM_NEWLINK, sent before `ip link show` too: no
 * device named (index 0, no attributes) and no NLM_F_CREATE, which the
 * kernel answers with ENODEV and changes nothing. */
static __always_inline bool newlink_probe(struct nlmsghdr *h, unsigned char *msg)
{
	int index = -1;

	if (h->nlmsg_type != LG_RTM_NEWLINK || (h->nlmsg_flags & LG_NLM_F_CREATE) ||
	    h->nlmsg_len > sizeof(*h) + LG_IFINFOMSG_LEN)
		return false;
	bpf_probe_read_kernel(&index, sizeof(index), msg + sizeof(*h) + LG_IFINFOMSG_INDEX);
	return index == 0;
}

/* The change one netlink message of the family `proto` asks for, 0 for a
 * request to read: rtnetlink's RTM_GET* (type - RTM_BASE is 2 modulo 4)
 * and control messages; every sock_diag message but SOCK_DESTROY. */
static __always_inline __u32 netlink_message_change(__u16 proto, struct nlmsghdr *h, unsigned char *msg)
{
	if (proto == LG_NETLINK_SOCK_DIAG)
		return h->nlmsg_type == LG_SOCK_DESTROY ? LG_NETLINK_SOCK_DESTROY : 0;
	if (h->nlmsg_type >= LG_RTM_BASE && ((h->nlmsg_type - LG_RTM_BASE) & 3) != 2 && !newlink_probe(h, msg))
		return h->nlmsg_type;
	return 0;
}

/* The first change among the messages of one rtnetlink or sock_diag send,
 * 0 when all are requests to read. A message that cannot be read, or a
 * send with more messages than are read, counts as a change. */
static __always_inline __u32 netlink_change(__u16 proto, struct sk_buff *skb)
{
	unsigned char *data = BPF_CORE_READ(skb, data);
	__u32 len = BPF_CORE_READ(skb, len);
	__u32 unread = proto == LG_NETLINK_SOCK_DIAG ? LG_NETLINK_SOCK_DESTROY : LG_RTM_BASE;
	__u32 off = 0;

	for (int i = 0; i < LG_NETLINK_MAX_MSGS; i++) {
		struct nlmsghdr h;

		if (off + sizeof(h) > len)
			return 0;
		if (bpf_probe_read_kernel(&h, sizeof(h), data + off))
			return unread;
		__u32 change = netlink_message_change(proto, &h, data + off);

		if (change)
			return change;
		if (h.nlmsg_len < sizeof(h))
			return 0;
		off += (h.nlmsg_len + 3) & ~3U;
	}
	return off < len ? unread : 0;
}

/* Links, addresses, routes, rules, netfilter and the sockets of the
 * machine's network namespace are every service's. A namespace of the
 * member's own is its own (unshare -n, then ip link set lo down). */
LG_HOOK(netlink_send, lg_netlink_send, struct sock *, sk, struct sk_buff *, skb)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	__u16 proto = BPF_CORE_READ(sk, sk_protocol);

	if (proto != LG_NETLINK_ROUTE && proto != LG_NETLINK_NETFILTER_PROTO && proto != LG_NETLINK_SOCK_DIAG)
		return 0;
	if (BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum) != lg_host_net_ns)
		return 0;
	__u32 detail = proto == LG_NETLINK_NETFILTER_PROTO ? LG_NETLINK_NETFILTER : netlink_change(proto, skb);

	if (!detail)
		return 0;
	return refuse_object_act(session, LG_HOOK_NETWORK, 0, 0, detail, 0);
}
