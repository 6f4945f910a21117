// SPDX-License-Identifier: GPL-2.0
/* A protected service's ports: a member binding one (SO_REUSEPORT beside
 * the service takes a share of its connections; bound while the service
 * restarts, it keeps the service from starting) is refused. The loader
 * fills lg_protected_ports from the services' listening sockets and the
 * policy, and keeps each port until unload. */
#include "lib/hook.h"
#include "lib/gate.h"
#include <bpf/bpf_endian.h>

#define LG_AF_INET 2
#define LG_AF_INET6 10
#define LG_SOCK_STREAM 1
#define LG_SOCK_DGRAM 2
#define LG_IPPROTO_TCP 6
#define LG_IPPROTO_UDP 17

LG_HOOK(socket_bind, lg_socket_bind, struct socket *, sock, struct sockaddr *, address, int, addrlen)
{
	if (ret || addrlen < 4)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	/* sin_port and sin6_port are both at offset 2, in network order; the
	 * address is the kernel's own copy. */
	__u16 family = 0, port_be = 0;

	bpf_probe_read_kernel(&family, sizeof(family), address);
	if (family != LG_AF_INET && family != LG_AF_INET6)
		return 0;
	bpf_probe_read_kernel(&port_be, sizeof(port_be), (void *)address + 2);
	short type = BPF_CORE_READ(sock, type);
	struct lg_port_key key = {
		.net_ns = BPF_CORE_READ(sock, sk, __sk_common.skc_net.net, ns.inum),
		.port = bpf_ntohs(port_be),
		.proto = type == LG_SOCK_STREAM ? LG_IPPROTO_TCP : type == LG_SOCK_DGRAM ? LG_IPPROTO_UDP : 0,
	};

	if (!key.port || !key.proto || !bpf_map_lookup_elem(&lg_protected_ports, &key))
		return 0;
	return refuse_object_act(session, LG_HOOK_PORT, 0, key.port, key.proto, 0);
}
