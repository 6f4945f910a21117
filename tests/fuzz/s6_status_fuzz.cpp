// parse_s6_status reads s6-supervise's binary supervise/status file, which
// may be torn, truncated or from an s6 version with another layout.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "policy/s6_status.h"

using namespace liveguard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto st = parse_s6_status(in);

    // Sizes outside the known layouts must not be guessed at.
    if ((size < 35 || size > 64) && st) __builtin_trap();
    if (!st) return 0;

    // The PID is the big-endian 64-bit number at offset 24; decoded here
    // separately so a wrong offset or byte order in the parser shows.
    std::uint64_t raw = 0;
    for (std::size_t i = 24; i < 32; ++i) raw = (raw << 8) | data[i];
    if (raw == 0 || raw == UINT64_MAX) {
        if (st->pid) __builtin_trap();  // down, not "pid 0" or "pid -1"
    } else {
        // Anything the watcher would mark must be a real PID.
        if (!st->pid || *st->pid <= 0 || static_cast<std::uint64_t>(*st->pid) != raw) __builtin_trap();
    }
    return 0;
}
