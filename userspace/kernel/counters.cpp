#include "kernel/counters.h"

#include <bpf/bpf.h>

#include <cerrno>

#include "base/error.h"

namespace liveguard {

CounterValues read_counters(int map_fd) {
    CounterValues v{};
    for (std::uint32_t i = 0; i < LG_COUNTER_COUNT; ++i) {
        if (bpf_map_lookup_elem(map_fd, &i, &v[i]) != 0)
            throw_errno("cannot read counter " + std::to_string(i), errno);
    }
    return v;
}

}  // namespace liveguard
