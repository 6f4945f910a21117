#include "watcher/fs_space.h"

#include <bpf/bpf.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "base/error.h"
#include "kernel/guarded_inodes.h"
#include "liveguard/abi.h"
#include "policy/resolver.h"
#include "watcher/log.h"

namespace liveguard {

std::vector<std::string> space_paths(const Policy& policy) {
    std::vector<std::string> out;
    auto parent = [](const std::string& p) {
        auto slash = p.find_last_of('/');
        return slash == 0 ? std::string("/") : p.substr(0, slash);
    };
    for (const auto& t : policy.targets) {
        // Written as a container sees it: its root is not the host's.
        if (!t.container.empty()) continue;
        switch (t.kind) {
            case TargetKind::Path:
            case TargetKind::S6:
                for (const auto& p : expand_glob(t.pattern)) out.push_back(p);
                break;
            case TargetKind::PidFile: {
                auto matches = expand_glob(t.pattern);
                for (const auto& p : matches) out.push_back(parent(p));
                // No PID file yet: the directory it will be written in,
                // when that exists without wildcards.
                std::string dir = parent(t.pattern);
                if (matches.empty() && dir.find_first_of("*?[") == std::string::npos) out.push_back(dir);
                break;
            }
            default: break;
        }
    }
    return out;
}

void FsSpace::watch(const std::vector<std::string>& paths, FsReserve reserve) {
    std::vector<Watched> next;
    std::set<std::uint32_t> devs;
    if (reserve.value != 0)
        for (const auto& p : paths) {
            auto key = inode_key(p);
            if (!key) continue;  // gone since: the next pass finds its replacement
            auto dev = static_cast<std::uint32_t>(key->dev);
            if (devs.insert(dev).second) next.push_back({p, dev, false});
        }
    for (const auto& w : watched_)
        if (!devs.count(w.dev)) ::bpf_map_delete_elem(fd_, &w.dev);
    // A filesystem still watched keeps its warning and its fill rate.
    for (auto& w : next)
        for (const auto& old : watched_)
            if (old.dev == w.dev) {
                std::string path = std::move(w.path);
                w = old;
                w.path = std::move(path);
            }
    watched_ = std::move(next);
    reserve_ = reserve;
}

int FsSpace::measure() {
    if (watched_.empty()) return -1;
    int due = kIntervalMs;
    for (auto& w : watched_) {
        struct statvfs st {};
        if (::statvfs(w.path.c_str(), &st) != 0) {
            if (!w.warned)
                watcher_log("warning: cannot measure the free space of " + w.path + ": " + std::strerror(errno) +
                            " (its last measurement stands)");
            w.warned = true;
            continue;
        }
        w.warned = false;
        lg_fs_space v{};
        v.avail = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
        v.reserve = reserve_.bytes_of(static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize);
        auto now = std::chrono::steady_clock::now();
        if (w.last_at != std::chrono::steady_clock::time_point{}) {
            double ms = std::chrono::duration<double, std::milli>(now - w.last_at).count();
            if (v.avail < w.last_avail && ms > 0)
                w.fill_rate = std::max(w.fill_rate / 2, static_cast<double>(w.last_avail - v.avail) / ms);
            else
                w.fill_rate /= 2;
        }
        w.last_avail = v.avail;
        w.last_at = now;
        auto headroom = static_cast<std::uint64_t>(w.fill_rate * kHeadroomMs);
        v.low = v.avail <= v.reserve + headroom;
        if (v.avail <= 4 * v.reserve) due = kNearIntervalMs;
        if (::bpf_map_update_elem(fd_, &w.dev, &v, BPF_ANY) != 0) {
            if (!w.warned)
                watcher_log("warning: cannot publish the free space of " + w.path + ": " + std::strerror(errno));
            w.warned = true;
        }
    }
    return due;
}

}  // namespace liveguard
