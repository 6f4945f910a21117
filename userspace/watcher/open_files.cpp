#include "watcher/open_files.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <string_view>

#include "base/fd.h"
#include "base/proc.h"

namespace liveguard {
namespace {

bool on_kernel_filesystem(std::string_view target) {
    if (target.starts_with("/dev/shm/")) return false;  // a tmpfs like any other
    for (std::string_view prefix : {"/proc/", "/sys/", "/dev/"})
        if (target.starts_with(prefix)) return true;
    return false;
}

}  // namespace

std::vector<std::string> held_open_files(pid_t pid, std::size_t max) {
    std::vector<std::string> out;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return out;  // gone, or not ours to read
    while (struct dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        if (out.size() >= max) break;
        std::string path = dir + "/" + e->d_name;
        // Sockets, pipes, memfds and anonymous inodes read as "type:[n]"
        // or "/memfd:..."; a file unlinked since as "... (deleted)".
        char target[4096];
        ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
        if (n <= 0 || target[0] != '/') continue;
        std::string_view t(target, static_cast<std::size_t>(n));
        if (on_kernel_filesystem(t) || t.starts_with("/memfd:")) continue;
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || st.st_nlink == 0) continue;
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) out.push_back(std::move(path));
    }
    ::closedir(d);
    return out;
}

namespace {

void add_cgroup_processes(const std::string& path, std::size_t max, int depth, std::vector<pid_t>& out) {
    if (auto text = read_small_file(path + "/cgroup.procs")) {
        std::string_view rest = *text;
        while (!rest.empty() && out.size() < max) {
            auto nl = rest.find('\n');
            if (auto pid = parse_pid(rest.substr(0, nl))) out.push_back(*pid);
            if (nl == std::string_view::npos) break;
            rest.remove_prefix(nl + 1);
        }
    }
    if (depth == 0 || out.size() >= max) return;
    DIR* d = ::opendir(path.c_str());
    if (!d) return;
    while (struct dirent* e = ::readdir(d)) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        add_cgroup_processes(path + "/" + e->d_name, max, depth - 1, out);
        if (out.size() >= max) break;
    }
    ::closedir(d);
}

}  // namespace

std::vector<pid_t> cgroup_processes(const std::string& path, std::size_t max) {
    std::vector<pid_t> out;
    add_cgroup_processes(path, max, kCgroupDepth, out);
    return out;
}

}  // namespace liveguard
