#include "kernel/map_walk.h"

#include <cerrno>

#include "base/error.h"
#include "liveguard/abi.h"

namespace liveguard {

void write_setting(int settings_fd, std::uint32_t setting, std::size_t count) {
    lg_settings s{};
    s.count = static_cast<std::uint32_t>(count);
    if (bpf_map_update_elem(settings_fd, &setting, &s, BPF_ANY) != 0)
        throw_errno("cannot update liveguard's settings map", errno);
}

std::uint32_t read_setting(int settings_fd, std::uint32_t setting) {
    lg_settings s{};
    return bpf_map_lookup_elem(settings_fd, &setting, &s) == 0 ? s.count : 0;
}

}  // namespace liveguard
