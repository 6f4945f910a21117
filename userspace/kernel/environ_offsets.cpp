#include "kernel/environ_offsets.h"

#include <bpf/bpf.h>

#include "base/live_environ.h"
#include "liveguard/abi.h"

namespace liveguard {

std::size_t publish_environ_offsets(int map_fd) {
    std::size_t listed = 0;
    for (const auto& path : python_interpreters()) {
        if (listed >= LG_MAX_ENVIRON_EXES) break;
        auto at = environ_in_executable(path);
        if (!at) continue;
        lg_exe_key key{at->ino, at->size};
        lg_environ_at value{at->from_start_code};
        if (bpf_map_update_elem(map_fd, &key, &value, BPF_ANY) == 0) ++listed;
    }
    return listed;
}

}  // namespace liveguard
