#pragma once
// The policy watcher as a process: keeps the kernel's protected set equal
// to what the policy names, event-driven (inotify), until told to stop.
// SIGHUP re-reads the policy; a bad new policy is rejected and the old one
// stays.
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "base/socket_owner.h"

namespace liveguard {

// Runs the watcher in this process until SIGTERM/SIGINT. `on_ready` is
// called once the policy has been applied the first time.
int run_watcher(const std::string& policy_path, const std::function<void()>& on_ready);

// Starts the watcher as a daemon and returns its pid once it has applied
// the policy; throws with the watcher's own error if it could not.
pid_t start_watcher_daemon(const std::string& policy_path);

// The running watcher: the process listening on its socket
// (paths::kRunSocket), as the kernel names it, with a pidfd to signal it
// through. Never the pid file: whoever can write that file could aim the
// signal at another process. Nothing when no watcher listens.
std::optional<SocketOwner> running_watcher();

// Asks the running watcher to re-read its policy (SIGHUP); the watcher
// (its pidfd tells when it exits), or nothing when none runs.
std::optional<SocketOwner> reload_watcher();

// Stops the running watcher and waits for it to exit; false when none was
// running.
bool stop_watcher();

}  // namespace liveguard
