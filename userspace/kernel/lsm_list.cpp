#include "kernel/lsm_list.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdlib>

#include "base/proc.h"

namespace liveguard {
namespace {

bool is_securityfs(const char* path) {
    struct statfs sfs {};
    return ::statfs(path, &sfs) == 0 && static_cast<long>(sfs.f_type) == static_cast<long>(SECURITYFS_MAGIC);
}

std::optional<LsmList> read_from(const std::string& dir, bool mounted_here) {
    auto s = read_small_file(dir + "/lsm", 4096);
    if (!s) return std::nullopt;
    while (!s->empty() && (s->back() == '\n' || s->back() == '\0')) s->pop_back();
    return LsmList{*s, mounted_here};
}

}  // namespace

std::optional<LsmList> read_lsm_list() {
    if (is_securityfs(kSecurityfs)) return read_from(kSecurityfs, false);
    char tmpl[] = "/tmp/liveguard-securityfs.XXXXXX";
    if (!::mkdtemp(tmpl)) return std::nullopt;
    std::optional<LsmList> list;
    if (::mount("securityfs", tmpl, "securityfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                nullptr) == 0) {
        list = read_from(tmpl, true);
        ::umount2(tmpl, MNT_DETACH);
    }
    ::rmdir(tmpl);
    return list;
}

bool lsm_list_has_bpf(const std::string& list) {
    std::size_t pos = 0;
    while (pos <= list.size()) {
        auto end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        std::string item = list.substr(pos, end - pos);
        while (!item.empty() && (item.back() == '\n' || item.back() == ' ')) item.pop_back();
        if (item == "bpf") return true;
        pos = end + 1;
    }
    return false;
}

}  // namespace liveguard
