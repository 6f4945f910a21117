#pragma once
// The policy watcher as a process: keeps the kernel's protected set equal
// to what the policy names, event-driven (inotify), until told to stop.
// SIGHUP re-reads the policy; a bad new policy is rejected and the old one
// stays.
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace liveguard {

// Runs the watcher in this process until SIGTERM/SIGINT. `on_ready` is
// called once the policy has been applied the first time.
int run_watcher(const std::string& policy_path, const std::function<void()>& on_ready);

// Starts the watcher as a daemon and returns its pid once it has applied
// the policy; throws with the watcher's own error if it could not.
pid_t start_watcher_daemon(const std::string& policy_path);

// The running watcher's pid, verified against its recorded start time.
std::optional<pid_t> running_watcher();

// Stops the running watcher; false when none was running.
bool stop_watcher();

}  // namespace liveguard
