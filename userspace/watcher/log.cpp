// The watcher's log line format.
#include "watcher/log.h"

#include <cstdio>

#include "base/clock.h"

namespace liveguard {

void watcher_log(const std::string& what) {
    std::string t = format_utc(realtime_now_ns());
    std::fprintf(stderr, "%s liveguard-bpf watcher: %s\n", t.c_str(), what.c_str());
    std::fflush(stderr);
}

}  // namespace liveguard
