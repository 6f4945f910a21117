#pragma once
// The ports protected services listen on, in lg_protected_ports: learned
// from each protected process's sockets at every pass, or named in the
// policy. A port stays until unload, so a member cannot take it while
// the service restarts.
#include <sys/types.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

// The TCP ports `pid` listens on and the UDP ports it serves on, keyed by
// its network namespace. Empty when the process is gone or its sockets
// cannot be read (a race with its exit is no error).
std::vector<lg_port_key> listening_ports(pid_t pid);

// The ports the kernel picks for clients (ip_local_port_range; Linux's
// default when it cannot be read).
struct PortRange {
    unsigned first = 32768, last = 60999;
};
PortRange ephemeral_ports();

// One /proc/net/{tcp,tcp6,udp,udp6} table: the local ports of the rows
// whose socket inode is in `inodes`: TCP rows when listening, UDP rows
// when bound and unconnected, outside the `ephemeral` range.
std::vector<std::uint16_t> ports_in_table(std::string_view table, bool tcp,
                                          const std::vector<std::uint64_t>& inodes, PortRange ephemeral = {});

// The machine's network namespace, TCP and UDP, for a port the policy
// names.
std::vector<lg_port_key> policy_port_keys(std::uint16_t port, std::uint32_t host_net_ns);

// Adds the keys not yet in the map. Returns how many were new; throws
// when the map is full, naming the port that did not fit.
int protect_ports(int map_fd, const std::vector<lg_port_key>& keys, std::uint32_t source);

}  // namespace liveguard
