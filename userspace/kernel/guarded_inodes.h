#pragma once
// Files the kernel guards by identity (device and inode, never by name, so
// a symlink, a relative path or a bind mount reaches the same answer):
// service-control binaries, supervisors' control FIFOs, service manager
// sockets and liveguard's own pin directory.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/fd.h"
#include "liveguard/abi.h"

namespace liveguard {

// The kernel's name for the file `path` resolves to (symlinks followed),
// or nothing when it does not exist.
std::optional<lg_inode_key> inode_key(const std::string& path);

// A guarded file held open with O_PATH, which neither reads it nor opens a
// FIFO's end: while it is held its inode number cannot go to a new file, so
// the map entry naming it names nothing else.
struct HeldInode {
    lg_inode_key key{};
    UniqueFd fd;
};

// The file `path` resolves to (symlinks followed, unless `follow` is
// false: then a symlink itself), held; nothing when it cannot be opened.
std::optional<HeldInode> hold_inode(const std::string& path, bool follow = true);

// How many names the held file has left: 0 once its last one is unlinked.
std::uint64_t link_count(const HeldInode& held);

const char* inode_kind_name(std::uint32_t kind);

class GuardedInodes {
public:
    explicit GuardedInodes(int map_fd) : fd_(map_fd) {}

    // False when it was already guarded as this kind, for this source.
    bool add(const lg_inode_key& key, std::uint32_t kind, std::uint32_t source);
    bool remove(const lg_inode_key& key);
    std::vector<std::pair<lg_inode_key, lg_guarded_inode>> list() const;

private:
    int fd_;
};

struct ControlBinary {
    std::string path;
    std::uint32_t kind = 0;  // LG_INODE_SYSTEMCTL, _S6_SVC, _S6_SVSCANCTL, _MULTIPLEXER
};

// The service-control binaries installed on this machine, and the terminal
// multiplexers' (whose servers run what a client sends them), looked up in
// the standard command directories (each distinct file once).
std::vector<ControlBinary> find_control_binaries();

// The service managers' sockets, system and per user (globs): systemd's
// private sockets, which only systemctl uses and members never reach, and
// the D-Bus buses, which stay open unless the policy closes them
// ([sessions] refuse_service_manager_sockets) while what members send
// over them to systemd and logind is read (bpf/lib/bus_message.h).
struct ServiceManagerSocket {
    std::string pattern;
    bool bus;
};
const std::vector<ServiceManagerSocket>& service_manager_sockets();

// Where container engines listen for their API (Docker's and Podman's
// service, rootful and rootless): what
// members send there is read for requests that change a guarded
// container (LG_INODE_ENGINE_SOCKET).
const std::vector<std::string>& engine_sockets();

}  // namespace liveguard
