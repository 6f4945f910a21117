#include "kernel/exec_words.h"

#include <bpf/bpf.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <set>

#include "base/error.h"
#include "liveguard/abi.h"

namespace liveguard {

std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = LG_FNV_OFFSET;
    for (unsigned char c : s) {
        h ^= c;
        h *= LG_FNV_PRIME;
    }
    return h;
}

const std::vector<std::string>& mutating_systemctl_verbs() {
    static const std::vector<std::string> kVerbs = {
        "restart",   "start",         "stop",           "kill",
        "reload",    "reset-failed",  "enable",         "disable",
        "mask",      "unmask",        "daemon-reload",  "try-restart",
        "reload-or-restart", "try-reload-or-restart", "reload-or-try-restart",
        "condrestart", "condreload",  "condstop",       "force-reload",
        "reenable",  "clean",         "freeze",         "thaw",
        "set-property", "edit",       "revert",         "preset",
        "link",      "preset-all",    "bind",           "mount-image",
    };
    return kVerbs;
}

const std::vector<std::string>& global_systemctl_verbs() {
    static const std::vector<std::string> kVerbs = {
        "isolate", "poweroff", "reboot", "halt",  "kexec",       "rescue",
        "emergency", "default", "exit",  "switch-root", "soft-reboot",
    };
    return kVerbs;
}

std::vector<std::string> unit_words(const std::string& unit) {
    std::vector<std::string> out{unit};
    const std::string suffix = ".service";
    if (unit.size() > suffix.size() && unit.compare(unit.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(unit.substr(0, unit.size() - suffix.size()));
    else if (unit.find('.') == std::string::npos)
        out.push_back(unit + suffix);
    return out;
}

std::vector<std::string> path_words(const std::string& path, bool relative) {
    std::set<std::string> words;
    auto add_both = [&](std::string p) {
        while (p.size() > 1 && p.back() == '/') p.pop_back();
        if (p.empty()) return;
        words.insert(p);
        if (p != "/") words.insert(p + "/");
    };
    add_both(path);
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf)) add_both(buf);
    if (relative) {
        std::string p = path;
        while (p.size() > 1 && p.back() == '/') p.pop_back();
        auto slash = p.rfind('/');
        std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
        if (!base.empty() && base != "." && base != "..") {
            add_both(base);
            add_both("./" + base);
        }
    }
    return {words.begin(), words.end()};
}

void ExecWords::add(const std::string& word, std::uint32_t flags) {
    std::uint64_t key = fnv1a(word);
    std::uint32_t v = 0;
    bpf_map_lookup_elem(fd_, &key, &v);
    if ((v | flags) == v) return;
    v |= flags;
    if (bpf_map_update_elem(fd_, &key, &v, BPF_ANY) != 0)
        throw_errno("cannot add the exec-guard word `" + word + "`", errno);
}

void ExecWords::remove(const std::string& word, std::uint32_t flags) {
    std::uint64_t key = fnv1a(word);
    std::uint32_t v = 0;
    if (bpf_map_lookup_elem(fd_, &key, &v) != 0) return;
    v &= ~flags;
    int rc = v ? bpf_map_update_elem(fd_, &key, &v, BPF_ANY) : bpf_map_delete_elem(fd_, &key);
    if (rc != 0 && errno != ENOENT)
        throw_errno("cannot remove the exec-guard word `" + word + "`", errno);
}

}  // namespace liveguard
