#pragma once
// The process behind a unix socket, as the kernel knows it: connecting to
// a listening socket gives (SO_PEERCRED) the process that called listen()
// on it. A process found that way is found by what it serves, not by a
// number in a file that whoever can write the file could point elsewhere.
#include <sys/types.h>

#include <optional>
#include <string>

#include "base/fd.h"

namespace liveguard {

struct SocketOwner {
    pid_t pid = 0;
    uid_t uid = 0;
    // That very process: a signal sent through it reaches nobody else, and
    // it becomes readable when the process exits.
    UniqueFd pidfd;
};

// The process listening on the unix stream socket at `path`; nothing when
// there is no socket there or nobody listens on it (or the listener has
// exited). The connection sends nothing and is closed at once, which the
// server sees as a connection closed without a request.
//
// The pidfd is the listener's own where the kernel hands it out
// (SO_PEERPIDFD, Linux 6.5). Before that it is opened by pid, and the
// connection is then checked to be still open: that proves the pid was
// the listener's when the pidfd was opened, provided only the listener
// holds the listening socket (close-on-exec, never passed to a child).
//
// Throws Error with the cause for anything else (a socket that does not
// accept within a second, no permission, no pidfd).
std::optional<SocketOwner> socket_owner(const std::string& path);

}  // namespace liveguard
