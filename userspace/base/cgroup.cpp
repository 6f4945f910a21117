#include "base/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/error.h"
#include "base/fd.h"
#include "base/proc.h"

namespace liveguard {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mount_field(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7' &&
            s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
                                            (s[i + 3] - '0')));
            i += 3;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

std::vector<std::string_view> split_spaces(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t pos = 0;
    while (pos < line.size()) {
        while (pos < line.size() && line[pos] == ' ') ++pos;
        std::size_t end = line.find(' ', pos);
        if (end == std::string_view::npos) end = line.size();
        if (end > pos) out.push_back(line.substr(pos, end - pos));
        pos = end;
    }
    return out;
}

struct KernfsHandle {
    struct file_handle fh;
    std::uint64_t id;
};

}  // namespace

std::optional<std::string> find_cgroup2_mount(std::string_view mountinfo) {
    std::optional<std::string> found;
    std::size_t pos = 0;
    while (pos < mountinfo.size()) {
        std::size_t end = mountinfo.find('\n', pos);
        if (end == std::string_view::npos) end = mountinfo.size();
        auto fields = split_spaces(mountinfo.substr(pos, end - pos));
        pos = end + 1;
        // id parent maj:min root mountpoint options [optional...] - fstype source super
        std::size_t sep = 0;
        for (std::size_t i = 6; i < fields.size(); ++i) {
            if (fields[i] == "-") {
                sep = i;
                break;
            }
        }
        if (sep == 0 || sep + 1 >= fields.size() || fields.size() < 5) continue;
        if (fields[sep + 1] != "cgroup2") continue;
        // A bind mount of a sub-cgroup (root != "/") cannot name arbitrary
        // cgroups, so prefer the mount of the hierarchy's root.
        if (fields[3] != "/") {
            if (!found) found = unescape_mount_field(fields[4]);
            continue;
        }
        return unescape_mount_field(fields[4]);
    }
    return found;
}

std::string cgroup2_mount() {
    auto info = read_small_file("/proc/self/mountinfo", 16 << 20);
    if (!info) throw_errno("cannot read /proc/self/mountinfo", errno);
    auto mount = find_cgroup2_mount(*info);
    if (!mount)
        throw Error("no cgroup v2 hierarchy is mounted",
                    "mount it: mount -t cgroup2 none /sys/fs/cgroup (or /sys/fs/cgroup/unified on "
                    "a hybrid host)");
    return *mount;
}

std::string normalize_path(const std::string& path) {
    std::filesystem::path p = std::filesystem::absolute(path).lexically_normal();
    std::string s = p.string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

void require_cgroup2_dir(const std::string& dir) {
    struct statfs sfs {};
    if (::statfs(dir.c_str(), &sfs) != 0)
        throw_errno("cannot use " + dir, errno, "give an existing cgroup v2 directory");
    if (sfs.f_type != CGROUP2_SUPER_MAGIC)
        throw Error(dir + " is not a cgroup v2 directory",
                    "give a directory under the cgroup v2 mount (see `liveguard-bpf doctor`)");
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error(dir + " is not a directory", "give a cgroup v2 directory");
}

std::optional<std::string> cgroup_dir_of(const std::string& mount, pid_t pid) {
    auto text = read_small_file("/proc/" + std::to_string(pid) + "/cgroup", 1 << 16);
    if (!text) return std::nullopt;
    // cgroup v2's line is "0::/path".
    std::size_t at = text->find("0::");
    if (at == std::string::npos) return std::nullopt;
    std::size_t end = text->find('\n', at);
    std::string rel = text->substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3);
    if (rel.empty() || rel[0] != '/') return std::nullopt;
    return rel == "/" ? mount : mount + rel;
}

std::uint64_t cgroup_id_of(const std::string& dir) {
    KernfsHandle h{};
    h.fh.handle_bytes = sizeof(h.id);
    int mount_id = 0;
    if (::name_to_handle_at(AT_FDCWD, dir.c_str(), &h.fh, &mount_id, 0) == 0 &&
        h.fh.handle_bytes == sizeof(std::uint64_t)) {
        std::uint64_t id;
        std::memcpy(&id, h.fh.f_handle, sizeof id);
        return id;
    }
    // Kernels without kernfs file handles: the inode number is the id.
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) throw_errno("cannot stat " + dir, errno);
    return st.st_ino;
}

int cgroup_level(const std::string& mount, const std::string& dir) {
    std::string m = normalize_path(mount), d = normalize_path(dir);
    if (d == m) return 0;
    if (d.compare(0, m.size(), m) != 0 || (m != "/" && d[m.size()] != '/'))
        throw Error(dir + " is not under the cgroup v2 mount " + m,
                    "give a directory under " + m);
    int level = 0;
    for (std::size_t i = m.size(); i < d.size(); ++i)
        if (d[i] == '/') ++level;
    return level;
}

std::optional<std::string> cgroup_path_of_id(const std::string& mount, std::uint64_t id) {
    UniqueFd mfd(::open(mount.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (mfd) {
        KernfsHandle h{};
        h.fh.handle_bytes = sizeof(h.id);
        h.fh.handle_type = 0xfe;  // FILEID_KERNFS
        std::memcpy(h.fh.f_handle, &id, sizeof id);
        UniqueFd cfd(::open_by_handle_at(mfd.get(), &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (cfd) {
            char buf[PATH_MAX];
            std::string link = "/proc/self/fd/" + std::to_string(cfd.get());
            ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
            if (n > 0) {
                std::string path(buf, static_cast<std::size_t>(n));
                // readlink is relative to our root, and the mount is too.
                return path;
            }
        } else if (errno == ESTALE || errno == ENOENT) {
            return std::nullopt;
        }
    }
    // Without CAP_DAC_READ_SEARCH, search the tree.
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(
             mount, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_directory(ec)) continue;
        struct stat st {};
        if (::stat(it->path().c_str(), &st) == 0 && st.st_ino == id) return it->path().string();
    }
    return std::nullopt;
}

std::size_t cgroup_member_count(const std::string& dir) {
    std::size_t count = 0;
    if (auto procs = read_small_file(dir + "/cgroup.procs", 64 << 20)) {
        for (char c : *procs)
            if (c == '\n') ++count;
    }
    std::error_code ec;
    for (const auto& ent : std::filesystem::directory_iterator(dir, ec)) {
        std::error_code ec2;
        if (ent.is_directory(ec2) && !ent.is_symlink(ec2))
            count += cgroup_member_count(ent.path().string());
    }
    return count;
}

}  // namespace liveguard
