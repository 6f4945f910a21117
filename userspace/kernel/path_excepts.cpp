#include "kernel/path_excepts.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <set>

#include "base/error.h"
#include "kernel/exec_words.h"
#include "kernel/map_walk.h"
#include "policy/policy.h"

namespace liveguard {

std::map<std::uint64_t, lg_path_except> path_except_keys(const std::vector<ProtectTarget>& targets) {
    std::map<std::uint64_t, lg_path_except> keys;
    for (const auto& t : targets) {
        if (t.source < 1 || t.source > LG_MAX_EXCEPT_SOURCES) continue;
        std::uint64_t bit = 1ull << (t.source - 1);
        // An s6 service directory is protected whole but for event/, where
        // s6-svwait and s6-svlisten make their FIFOs to wait on a service.
        if (t.kind == TargetKind::S6) keys[fnv1a("event")].exact_sources |= bit;
        if (t.kind != TargetKind::Path) continue;
        for (const auto& name : t.except) {
            if (name[0] == '*') keys[fnv1a(name.substr(1))].suffix_sources |= bit;
            else keys[fnv1a(name)].exact_sources |= bit;
        }
    }
    return keys;
}

void PathExcepts::set(const std::vector<ProtectTarget>& targets) {
    auto want = path_except_keys(targets);
    if (want.size() > LG_MAX_PATH_EXCEPTS)
        throw Error("the policy's `except` lists name " + std::to_string(want.size()) +
                        " distinct names; the kernel holds " + std::to_string(LG_MAX_PATH_EXCEPTS),
                    "list fewer names");
    // New entries first: a name never stops being writable in between.
    for (const auto& [key, value] : want)
        if (bpf_map_update_elem(fd_, &key, &value, BPF_ANY) != 0)
            throw_errno("cannot record the names `except` keeps writable", errno);
    for (const auto& [key, value] : list_u64_map<lg_path_except>(fd_, LG_MAX_PATH_EXCEPTS))
        if (!want.count(key)) bpf_map_delete_elem(fd_, &key);
}

}  // namespace liveguard
