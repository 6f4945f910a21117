#pragma once
// Kernel-side counters: refusals per hook and events the ring buffer had
// no room for.
#include <array>
#include <cstdint>

#include "liveguard/abi.h"

namespace liveguard {

using CounterValues = std::array<std::uint64_t, LG_COUNTER_COUNT>;

CounterValues read_counters(int map_fd);

}  // namespace liveguard
