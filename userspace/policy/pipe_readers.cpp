#include "policy/pipe_readers.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <map>
#include <set>
#include <optional>
#include <string>

#include "base/proc.h"

namespace liveguard {
namespace {

std::optional<std::string> link_of(const std::string& path) {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
}

// fdinfo's "flags:" line, in octal: whether the descriptor may read.
bool opened_for_reading(const std::string& fdinfo) {
    auto text = read_small_file(fdinfo, 4096);
    if (!text) return false;
    auto at = text->find("flags:");
    if (at == std::string::npos) return false;
    long flags = std::strtol(text->c_str() + at + 6, nullptr, 8);
    if (flags & O_PATH) return false;  // its access bits read as O_RDONLY, yet it reads nothing
    int mode = static_cast<int>(flags) & O_ACCMODE;
    return mode == O_RDONLY || mode == O_RDWR;
}

}  // namespace

std::vector<PipeReader> output_pipe_readers(const std::vector<pid_t>& services) {
    struct End {
        pid_t service;
        int fd;
    };
    std::multimap<std::string, End> pipes;  // "pipe:[inode]" -> whose output
    for (pid_t pid : services)
        for (int fd : {1, 2}) {
            auto target = link_of("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd));
            if (target && target->rfind("pipe:[", 0) == 0) pipes.emplace(*target, End{pid, fd});
        }
    std::vector<PipeReader> out;
    if (pipes.empty()) return out;
    for (pid_t other : list_pids()) {
        std::string base = "/proc/" + std::to_string(other);
        DIR* d = ::opendir((base + "/fd").c_str());
        if (!d) continue;  // exited, or a kernel thread
        std::set<std::pair<pid_t, int>> found;  // (service, fd) this process reads
        while (auto* e = ::readdir(d)) {
            if (e->d_name[0] == '.') continue;
            auto target = link_of(base + "/fd/" + e->d_name);
            if (!target) continue;
            auto [lo, hi] = pipes.equal_range(*target);
            if (lo == hi || !opened_for_reading(base + "/fdinfo/" + e->d_name)) continue;
            for (auto it = lo; it != hi; ++it)
                if (it->second.service != other) found.insert({it->second.service, it->second.fd});
        }
        ::closedir(d);
        for (const auto& [service, fd] : found) out.push_back({other, service, fd});
    }
    return out;
}

}  // namespace liveguard
