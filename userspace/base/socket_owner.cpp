// Finding the process that listens on a unix socket.
#include "base/socket_owner.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5
#endif

namespace liveguard {

std::optional<SocketOwner> socket_owner(const std::string& path) {
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        throw Error("socket path too long (" + std::to_string(path.size()) + " bytes, at most " +
                    std::to_string(sizeof addr.sun_path - 1) + "): " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

    UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!sock) throw_errno("cannot create a unix socket", errno);
    // A unix connect waits this long when the listener's backlog is full:
    // a listener that stopped accepting must not hang the caller.
    struct timeval timeout {1, 0};
    ::setsockopt(sock.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    if (::connect(sock.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0) {
        int e = errno;
        // No socket there, a socket nobody listens on, or a plain file.
        if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR) return std::nullopt;
        if (e == EAGAIN || e == EINPROGRESS)
            throw Error("the process listening on " + path + " accepts no connections (none within a second)");
        throw_errno("cannot connect to " + path, e);
    }

    struct ucred cred {};
    socklen_t len = sizeof cred;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        throw_errno("cannot read who listens on " + path + " (SO_PEERCRED)", errno);
    if (cred.pid <= 0)
        throw Error("the process listening on " + path + " is outside this pid namespace");
    SocketOwner owner{cred.pid, cred.uid, {}};

    int fd = -1;
    len = sizeof fd;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0 && fd >= 0) {
        owner.pidfd.reset(fd);
        return owner;
    }
    // Any failure but an unknown option means the listener has exited
    // (its pid may already name another process).
    if (errno != ENOPROTOOPT) return std::nullopt;
    fd = static_cast<int>(::syscall(SYS_pidfd_open, cred.pid, 0));
    if (fd < 0) {
        if (errno == ESRCH) return std::nullopt;
        throw_errno("cannot open a pidfd for pid " + std::to_string(cred.pid) + ", which listens on " + path,
                    errno);
    }
    owner.pidfd.reset(fd);
    // The listening socket goes when its process exits, before its pid can
    // be reused, and hangs up this connection as it goes.
    struct pollfd p {sock.get(), POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return std::nullopt;
    return owner;
}

}  // namespace liveguard
