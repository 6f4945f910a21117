#pragma once
// The watcher's log: one line per message, stamped with UTC time, on
// stderr (which the daemon points at its log file).
#include <string>

namespace liveguard {

void watcher_log(const std::string& what);

}  // namespace liveguard
