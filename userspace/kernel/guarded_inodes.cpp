#include "kernel/guarded_inodes.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <set>

#include "base/error.h"

namespace liveguard {

namespace {

lg_inode_key key_of(const struct stat& st) {
    lg_inode_key key{};
    // The kernel's dev_t packs MAJOR << 20 | MINOR; stat() reports the
    // userspace encoding of the same device.
    key.dev = (static_cast<std::uint64_t>(major(st.st_dev)) << 20) | minor(st.st_dev);
    key.ino = st.st_ino;
    return key;
}

}  // namespace

std::optional<lg_inode_key> inode_key(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return key_of(st);
}

std::optional<HeldInode> hold_inode(const std::string& path, bool follow) {
    HeldInode held;
    held.fd.reset(::open(path.c_str(), O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)));
    struct stat st {};
    // The key comes from the open file, so it names the inode held even
    // when the path is replaced in between.
    if (!held.fd || ::fstat(held.fd.get(), &st) != 0) return std::nullopt;
    held.key = key_of(st);
    return held;
}

std::uint64_t link_count(const HeldInode& held) {
    struct stat st {};
    if (::fstat(held.fd.get(), &st) != 0) throw_errno("cannot stat a guarded file", errno);
    return st.st_nlink;
}

const char* inode_kind_name(std::uint32_t kind) {
    switch (kind) {
        case LG_INODE_SYSTEMCTL: return "systemctl";
        case LG_INODE_S6_SVC: return "s6-svc";
        case LG_INODE_S6_SVSCANCTL: return "s6-svscanctl";
        case LG_INODE_SUPERVISE_CONTROL: return "supervise-control";
        case LG_INODE_SVSCAN_CONTROL: return "svscan-control";
        case LG_INODE_SERVICE_SOCKET: return "service-socket";
        case LG_INODE_PIN_DIR: return "pin-dir";
        case LG_INODE_MULTIPLEXER: return "multiplexer";
        case LG_INODE_BUS_SOCKET: return "bus-socket";
        case LG_INODE_HELD_OPEN: return "held-open";
        case LG_INODE_ENGINE_SOCKET: return "engine-socket";
        default: return "unknown";
    }
}

bool GuardedInodes::add(const lg_inode_key& key, std::uint32_t kind, std::uint32_t source) {
    lg_guarded_inode v{};
    // The source too: a reloaded policy may have renumbered its tables, and
    // the kernel picks a tree's `except` list by it.
    if (bpf_map_lookup_elem(fd_, &key, &v) == 0 && v.kind == kind && v.source == source) return false;
    v.kind = kind;
    v.source = source;
    if (bpf_map_update_elem(fd_, &key, &v, BPF_ANY) != 0)
        throw_errno(std::string("cannot guard a ") + inode_kind_name(kind) + " file", errno);
    return true;
}

bool GuardedInodes::remove(const lg_inode_key& key) {
    if (bpf_map_delete_elem(fd_, &key) == 0) return true;
    if (errno == ENOENT) return false;
    throw_errno("cannot release a guarded file", errno);
}

std::vector<std::pair<lg_inode_key, lg_guarded_inode>> GuardedInodes::list() const {
    std::vector<std::pair<lg_inode_key, lg_guarded_inode>> out;
    lg_inode_key key{}, next{};
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd_, prev, &next) == 0) {
        lg_guarded_inode v{};
        if (bpf_map_lookup_elem(fd_, &next, &v) == 0) out.emplace_back(next, v);
        key = next;
        prev = &key;
    }
    return out;
}

std::vector<ControlBinary> find_control_binaries() {
    static const std::pair<const char*, std::uint32_t> kNames[] = {
        {"systemctl", LG_INODE_SYSTEMCTL},
        {"s6-svc", LG_INODE_S6_SVC},
        {"s6-svscanctl", LG_INODE_S6_SVSCANCTL},
        {"tmux", LG_INODE_MULTIPLEXER},
        {"screen", LG_INODE_MULTIPLEXER},
    };
    static const char* kDirs[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                  "/usr/bin",        "/sbin",          "/bin"};
    std::vector<ControlBinary> out;
    std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
    for (const auto& [name, kind] : kNames) {
        for (const char* dir : kDirs) {
            std::string path = std::string(dir) + "/" + name;
            auto key = inode_key(path);
            if (!key || !seen.insert({key->dev, key->ino}).second) continue;
            out.push_back({path, kind});
        }
    }
    return out;
}

const std::vector<ServiceManagerSocket>& service_manager_sockets() {
    static const std::vector<ServiceManagerSocket> kSockets = {
        {"/run/systemd/private", false},
        {"/run/dbus/system_bus_socket", true},
        {"/run/user/*/systemd/private", false},
        {"/run/user/*/bus", true},
    };
    return kSockets;
}

const std::vector<std::string>& engine_sockets() {
    static const std::vector<std::string> kSockets = {
        "/run/docker.sock",        "/var/run/docker.sock",           "/run/podman/podman.sock",
        "/run/user/*/docker.sock", "/run/user/*/podman/podman.sock",
    };
    return kSockets;
}

}  // namespace liveguard
