#include "kernel/skipped_runs.h"

#include <bpf/bpf.h>
#include <dirent.h>

#include <memory>
#include <string_view>

#include "base/fd.h"
#include "kernel/pins.h"

namespace liveguard {

std::map<std::string, std::uint64_t> skipped_runs() {
    std::map<std::string, std::uint64_t> out;
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(pins::kDir), ::closedir);
    if (!dir) return out;
    constexpr std::string_view prefix = "link_";
    while (struct dirent* d = ::readdir(dir.get())) {
        std::string_view name = d->d_name;
        if (name.substr(0, prefix.size()) != prefix) continue;
        UniqueFd link(bpf_obj_get((std::string(pins::kDir) + "/" + d->d_name).c_str()));
        if (!link) continue;
        struct bpf_link_info li {};
        __u32 len = sizeof li;
        if (bpf_obj_get_info_by_fd(link.get(), &li, &len) != 0) continue;
        UniqueFd prog(bpf_prog_get_fd_by_id(li.prog_id));
        if (!prog) continue;
        struct bpf_prog_info pi {};
        len = sizeof pi;
        if (bpf_obj_get_info_by_fd(prog.get(), &pi, &len) != 0 || !pi.recursion_misses) continue;
        out[std::string(name.substr(prefix.size()))] = pi.recursion_misses;
    }
    return out;
}

}  // namespace liveguard
