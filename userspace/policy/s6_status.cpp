#include "policy/s6_status.h"

#include <climits>
#include <cstdint>

namespace liveguard {

std::optional<S6Status> parse_s6_status(std::string_view b) {
    constexpr std::size_t kMinSize = 35;
    constexpr std::size_t kMaxSize = 64;
    if (b.size() < kMinSize || b.size() > kMaxSize) return std::nullopt;
    std::uint64_t pid = 0;
    for (std::size_t i = 24; i < 32; ++i) pid = (pid << 8) | static_cast<unsigned char>(b[i]);
    S6Status st;
    if (pid == 0 || pid == UINT64_MAX) return st;  // down
    if (pid > INT_MAX) return std::nullopt;
    st.pid = static_cast<pid_t>(pid);
    return st;
}

}  // namespace liveguard
