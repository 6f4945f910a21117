#include "base/privileges.h"

#include <unistd.h>

#include "base/error.h"

namespace liveguard {

void require_root(const std::string& command) {
    if (::geteuid() != 0)
        throw Error("`" + command + "` needs root (BPF and cgroup changes)",
                    "run it with sudo: sudo liveguard-bpf " + command);
}

}  // namespace liveguard
