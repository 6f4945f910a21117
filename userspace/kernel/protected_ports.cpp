#include "kernel/protected_ports.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <string>

#include "base/error.h"
#include "base/proc.h"

namespace liveguard {

namespace {

constexpr std::uint16_t kTcp = 6;
constexpr std::uint16_t kUdp = 17;
constexpr std::string_view kTcpListen = "0A";
constexpr std::string_view kUdpUnconnected = "07";

std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        std::size_t j = i;
        while (j < line.size() && line[j] != ' ') ++j;
        if (j > i) out.push_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

std::vector<std::uint64_t> socket_inodes(pid_t pid) {
    std::vector<std::uint64_t> out;
    std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;
    while (auto* e = ::readdir(d)) {
        char target[64];
        ssize_t n = ::readlinkat(::dirfd(d), e->d_name, target, sizeof target - 1);
        if (n <= 0) continue;
        std::string_view t(target, static_cast<std::size_t>(n));
        if (t.substr(0, 8) != "socket:[" || t.back() != ']') continue;
        std::uint64_t ino = 0;
        auto digits = t.substr(8, t.size() - 9);
        if (std::from_chars(digits.data(), digits.data() + digits.size(), ino).ec == std::errc{})
            out.push_back(ino);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

PortRange ephemeral_ports() {
    PortRange r;
    auto text = read_small_file("/proc/sys/net/ipv4/ip_local_port_range", 256);
    unsigned lo = 0, hi = 0;
    if (text && std::sscanf(text->c_str(), "%u %u", &lo, &hi) == 2 && lo <= hi && hi <= 65535) r = {lo, hi};
    return r;
}

std::vector<std::uint16_t> ports_in_table(std::string_view table, bool tcp,
                                          const std::vector<std::uint64_t>& inodes, PortRange ephemeral) {
    std::vector<std::uint16_t> out;
    std::size_t pos = table.find('\n');  // the header
    while (pos != std::string_view::npos && pos < table.size()) {
        std::size_t end = table.find('\n', pos + 1);
        auto f = fields(table.substr(pos + 1, end == std::string_view::npos ? end : end - pos - 1));
        pos = end;
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        if (f.size() < 10) continue;
        auto colon = f[1].rfind(':');
        if (colon == std::string_view::npos) continue;
        unsigned port = 0;
        auto p = f[1].substr(colon + 1);
        std::uint64_t ino = 0;
        if (std::from_chars(p.data(), p.data() + p.size(), port, 16).ec != std::errc{} || port == 0 ||
            port > 65535)
            continue;
        if (std::from_chars(f[9].data(), f[9].data() + f[9].size(), ino).ec != std::errc{}) continue;
        if (tcp && f[3] != kTcpListen) continue;
        // A UDP socket serves on a port it bound and talks to no one
        // peer; one in the ephemeral range is a client's, gone with it.
        if (!tcp && (f[3] != kUdpUnconnected || !f[2].ends_with(":0000") ||
                     (port >= ephemeral.first && port <= ephemeral.last)))
            continue;
        if (!std::binary_search(inodes.begin(), inodes.end(), ino)) continue;
        out.push_back(static_cast<std::uint16_t>(port));
    }
    return out;
}

std::vector<lg_port_key> listening_ports(pid_t pid) {
    std::vector<lg_port_key> out;
    std::string base = "/proc/" + std::to_string(pid);
    struct stat ns {};
    if (::stat((base + "/ns/net").c_str(), &ns) != 0) return out;
    auto inodes = socket_inodes(pid);
    if (inodes.empty()) return out;
    PortRange ephemeral = ephemeral_ports();
    for (const auto& [name, proto] : {std::pair{"tcp", kTcp}, {"tcp6", kTcp}, {"udp", kUdp}, {"udp6", kUdp}}) {
        auto table = read_small_file(base + "/net/" + name, 16 << 20);
        if (!table) continue;
        for (auto port : ports_in_table(*table, proto == kTcp, inodes, ephemeral)) {
            lg_port_key k{static_cast<std::uint32_t>(ns.st_ino), port, proto};
            bool seen = false;
            for (const auto& o : out) seen |= o.net_ns == k.net_ns && o.port == k.port && o.proto == k.proto;
            if (!seen) out.push_back(k);
        }
    }
    return out;
}

std::vector<lg_port_key> policy_port_keys(std::uint16_t port, std::uint32_t host_net_ns) {
    return {lg_port_key{host_net_ns, port, kTcp}, lg_port_key{host_net_ns, port, kUdp}};
}

int protect_ports(int map_fd, const std::vector<lg_port_key>& keys, std::uint32_t source) {
    int added = 0, failed = 0, first_errno = 0;
    const lg_port_key* first = nullptr;
    // Every key is tried: one that does not fit keeps none of the rest out.
    for (const auto& k : keys) {
        if (::bpf_map_update_elem(map_fd, &k, &source, BPF_NOEXIST) == 0) {
            ++added;
            continue;
        }
        if (errno == EEXIST) continue;
        if (!failed++) first = &k, first_errno = errno;
    }
    if (failed)
        throw_errno("cannot protect " + std::to_string(failed) + " port(s), the first " +
                        std::string(first->proto == kTcp ? "TCP" : "UDP") + " port " + std::to_string(first->port) +
                        " (lg_protected_ports holds " + std::to_string(LG_MAX_PROTECTED_PORTS) + "; " +
                        std::to_string(added) + " added)",
                    first_errno);
    return added;
}

}  // namespace liveguard
