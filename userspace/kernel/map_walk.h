#pragma once
// Shared walks over the hash maps keyed by cgroup id, and the recount the
// kernel's fast-path gates read.
#include <bpf/bpf.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace liveguard {

// Every (key, value) of a hash map keyed by u64. Bounded: a walk that
// restarts after a concurrent delete could otherwise loop.
template <class Value>
std::vector<std::pair<std::uint64_t, Value>> list_u64_map(int fd, int max_entries) {
    std::vector<std::pair<std::uint64_t, Value>> out;
    std::uint64_t key = 0, next = 0;
    const void* prev = nullptr;
    for (int i = 0; i < 2 * max_entries; ++i) {
        if (bpf_map_get_next_key(fd, prev, &next) != 0) break;
        Value v{};
        if (bpf_map_lookup_elem(fd, &next, &v) == 0) out.emplace_back(next, v);
        key = next;
        prev = &key;
    }
    return out;
}

// Stores `count` at `setting` (enum lg_setting) of the settings map.
void write_setting(int settings_fd, std::uint32_t setting, std::size_t count);
// The count at `setting`; 0 when it cannot be read.
std::uint32_t read_setting(int settings_fd, std::uint32_t setting);

}  // namespace liveguard
