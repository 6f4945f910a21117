#include "base/clock.h"

#include <cstdio>
#include <ctime>

namespace liveguard {
namespace {

std::int64_t ns_of(const timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000000000ll + t.tv_nsec; }

}  // namespace

std::string format_utc(std::uint64_t ns) {
    time_t secs = static_cast<time_t>(ns / 1000000000ull);
    unsigned ms = static_cast<unsigned>((ns / 1000000ull) % 1000);
    struct tm tm {};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    return buf;
}

std::int64_t boot_to_realtime_offset_ns() {
    struct timespec rt {}, bt {};
    ::clock_gettime(CLOCK_REALTIME, &rt);
    ::clock_gettime(CLOCK_BOOTTIME, &bt);
    return ns_of(rt) - ns_of(bt);
}

std::uint64_t realtime_now_ns() {
    struct timespec ts {};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ns_of(ts));
}

std::uint64_t boottime_now_ns() {
    struct timespec ts {};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<std::uint64_t>(ns_of(ts));
}

}  // namespace liveguard
