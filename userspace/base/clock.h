#pragma once
// Times as the tool shows them. The kernel stamps events with the boot
// clock (it keeps counting through suspend and never jumps); people read
// UTC wall time.
#include <cstdint>
#include <string>

namespace liveguard {

// ISO 8601 UTC with milliseconds: 2026-11-30T14:00:00.123Z
std::string format_utc(std::uint64_t realtime_ns);

// Wall clock minus boot clock, now.
std::int64_t boot_to_realtime_offset_ns();

// Wall clock and boot clock, now, in nanoseconds.
std::uint64_t realtime_now_ns();
std::uint64_t boottime_now_ns();

}  // namespace liveguard
