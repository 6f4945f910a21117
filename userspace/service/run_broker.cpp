// The run broker: the watcher's socket for unprivileged `run`.
#include "service/run_broker.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <variant>

#include "base/error.h"
#include "base/json.h"
#include "base/paths.h"
#include "base/proc.h"
#include "events/session_info.h"
#include "kernel/pinned_maps.h"
#include "kernel/session_registry.h"
#include "liveguard/abi.h"
#include "sessions/run_protocol.h"
#include "watcher/log.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5
#endif

namespace liveguard {
namespace {

using Clock = std::chrono::steady_clock;

// How long one connection may take to send its request (a real client
// sends it as it connects), and how long one on_readable() call goes on
// taking connections: the same loop keeps the protected set right, so
// idle or slow clients may hold it only briefly.
constexpr auto kRequestTimeout = std::chrono::milliseconds(250);
constexpr auto kBatchBudget = std::chrono::milliseconds(250);

// A refusal: replied to the requester and logged.
struct Refusal {
    std::string why;
};

struct Peer {
    pid_t pid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
};

std::string describe(const Peer& p) {
    return "pid " + std::to_string(p.pid) + " (uid " + std::to_string(p.uid) + ")";
}

// One line from the connection within `timeout`. Nothing when the peer
// closed without sending a byte (a probe: `run` checks the socket that
// way, and `reload`, `unload` and `status` find the watcher so); a Refusal
// when it sent something else than a line in time.
std::optional<std::string> read_request(int conn, Clock::duration timeout) {
    auto deadline = Clock::now() + timeout;
    std::string got;
    char buf[512];
    for (;;) {
        if (auto nl = got.find('\n'); nl != std::string::npos) return got.substr(0, nl);
        if (got.size() > kRunMessageMax) throw Refusal{"the request is too long"};
        ssize_t n = ::recv(conn, buf, sizeof buf, 0);
        if (n > 0) {
            got.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0) {
            if (got.empty()) return std::nullopt;
            throw Refusal{"the request ends without a newline"};
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) throw Refusal{errno_message("cannot read the request", errno)};
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) throw Refusal{"no request within a second"};
        struct pollfd p {conn, POLLIN, 0};
        ::poll(&p, 1, static_cast<int>(left));
    }
}

void send_line(int conn, std::string line) {
    line += "\n";
    // The reply is small and the socket's buffer empty: one send does it.
    (void)::send(conn, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void send_reply(int conn, const RunReply& reply) { send_line(conn, format_run_reply(reply)); }

// A pidfd for the very process that connected when the kernel can give
// one (SO_PEERPIDFD), else for whichever process has its pid now, which
// the caller checks is still the peer.
UniqueFd peer_pidfd(int conn, const Peer& peer) {
    int fd = -1;
    socklen_t len = sizeof fd;
    if (::getsockopt(conn, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0 && fd >= 0) return UniqueFd(fd);
    fd = static_cast<int>(::syscall(SYS_pidfd_open, peer.pid, 0));
    if (fd < 0) throw Refusal{errno_message("the requesting process is gone (pidfd_open)", errno)};
    return UniqueFd(fd);
}

// The effective uid on the "Uid:" line of /proc/<pid>/status.
std::optional<uid_t> effective_uid(pid_t pid) {
    auto text = read_small_file("/proc/" + std::to_string(pid) + "/status", 1 << 16);
    if (!text) return std::nullopt;
    auto at = text->find("\nUid:");
    if (at == std::string::npos) return std::nullopt;
    unsigned long real = 0, effective = 0;
    if (std::sscanf(text->c_str() + at + 5, "%lu %lu", &real, &effective) != 2) return std::nullopt;
    return static_cast<uid_t>(effective);
}

// Makes sure `pidfd` is the process that connected and still waits for
// the answer: it runs as the peer's uid, it was alive after that was read
// (so the pid was not reused meanwhile), and the connection is not hung up
// (a peer that died, and whose pid another process took, leaves a hung-up
// socket).
void check_peer(int conn, int pidfd, const Peer& peer) {
    auto uid = effective_uid(peer.pid);
    if (::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0)
        throw Refusal{"the requesting process is gone"};
    if (!uid || *uid != peer.uid)
        throw Refusal{"process " + std::to_string(peer.pid) + " does not run as uid " +
                      std::to_string(peer.uid) + ", which connected"};
    struct pollfd p {conn, POLLRDHUP, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
        throw Refusal{"the requesting process hung up"};
}

// The session's test log: a directory only the requester may write.
std::string make_test_log_dir(std::uint64_t id, const Peer& peer) {
    ::mkdir(paths::kTestLogDir, 0755);
    std::string dir = std::string(paths::kTestLogDir) + "/" + std::to_string(id);
    if (::mkdir(dir.c_str(), 0700) != 0) {
        int e = errno;
        std::error_code ec;
        if (e != EEXIST || (std::filesystem::remove_all(dir, ec), ::mkdir(dir.c_str(), 0700) != 0))
            throw Refusal{errno_message("cannot create " + dir, e == EEXIST ? errno : e)};
    }
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd || ::fchown(fd.get(), peer.uid, peer.gid) != 0 || ::fchmod(fd.get(), 0700) != 0)
        throw Refusal{errno_message("cannot give " + dir + " to uid " + std::to_string(peer.uid), errno)};
    return dir;
}

}  // namespace

RunBroker::RunBroker(const PinnedMaps& maps, std::function<void(const BrokeredSession&)> on_started)
    : maps_(maps), on_started_(std::move(on_started)) {
    const std::string path = paths::kRunSocket;
    try {
        ::mkdir(paths::kStateDir, 0755);
        struct sockaddr_un addr {};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, paths::kRunSocket, sizeof addr.sun_path - 1);
        struct stat st {};
        if (::lstat(paths::kRunSocket, &st) == 0) {
            if (!S_ISSOCK(st.st_mode)) throw Error(path + " exists and is not a socket");
            // One that answers belongs to a watcher that still runs.
            UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
            if (probe && ::connect(probe.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0)
                throw Error("another process serves " + path);
            if (::unlink(paths::kRunSocket) != 0 && errno != ENOENT)
                throw_errno("cannot remove the stale " + path, errno);
        }
        UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!fd) throw_errno("cannot create a unix socket", errno);
        if (::bind(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0)
            throw_errno("cannot bind " + path, errno);
        // Anyone may ask; what they can ask for only restricts themselves.
        if (::chmod(paths::kRunSocket, 0666) != 0 || ::stat(paths::kRunSocket, &st) != 0 ||
            ::listen(fd.get(), 64) != 0) {
            int e = errno;
            ::unlink(paths::kRunSocket);
            throw_errno("cannot set up " + path, e);
        }
        socket_ino_ = st.st_ino;
        listen_ = std::move(fd);
    } catch (const std::exception& e) {
        throw Error(std::string("the watcher cannot listen on its socket: ") + e.what(),
                    "if another policy watcher runs (liveguard-bpf status), stop it first: sudo "
                    "liveguard-bpf unload; if " + path + " is not a socket, remove it");
    }
}

RunBroker::~RunBroker() {
    if (!listen_) return;
    struct stat st {};
    if (::stat(paths::kRunSocket, &st) == 0 && st.st_ino == socket_ino_) ::unlink(paths::kRunSocket);
}

void RunBroker::on_readable() {
    if (!listen_) return;
    auto stop = Clock::now() + kBatchBudget;
    while (Clock::now() < stop) {
        UniqueFd conn(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!conn) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                watcher_log(errno_message("error: run broker: cannot accept a connection", errno));
            return;
        }
        try {
            serve(conn.get());
        } catch (const std::exception& e) {
            watcher_log(std::string("error: run broker: ") + e.what());
        } catch (...) {
            watcher_log("error: run broker: unknown failure");
        }
    }
}

void RunBroker::serve(int conn) {
    Peer peer;
    {
        struct ucred cred {};
        socklen_t len = sizeof cred;
        if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) {
            watcher_log(errno_message("run broker: a connection without credentials", errno));
            return;
        }
        peer = Peer{cred.pid, cred.uid, cred.gid};
    }
    std::optional<RunRequest> request;
    auto refuse = [&](const std::string& why) {
        send_reply(conn, RunReply{false, why, 0, false, ""});
        watcher_log("run broker: refused " + describe(peer) +
                    (request ? " (" + request->name + ")" : std::string()) + ": " + why);
    };
    try {
        auto line = read_request(conn, kRequestTimeout);
        if (!line) return;  // a probe
        auto parsed = parse_run_request(*line);
        if (auto* why = std::get_if<std::string>(&parsed)) throw Refusal{*why};
        request = std::get<RunRequest>(std::move(parsed));
        if (request->op == RunOp::Sync) {
            if (on_sync_) on_sync_();
            send_line(conn, json::ObjectWriter().boolean("ok", true).done());
            return;
        }

        UniqueFd pidfd = peer_pidfd(conn, peer);
        check_peer(conn, pidfd.get(), peer);
        lg_protected mark{};
        int key = pidfd.get();
        if (bpf_map_lookup_elem(maps_.protected_tasks.get(), &key, &mark) == 0)
            throw Refusal{"a protected process may not become a test session"};

        SessionRegistry registry(maps_.sessions.get(), maps_.settings.get(), maps_.members.get());
        if (std::uint64_t existing = registry.marked_session_of(maps_.members.get(), pidfd.get())) {
            RunReply reply{true, "", existing, true, ""};
            std::string dir = std::string(paths::kTestLogDir) + "/" + std::to_string(existing);
            struct stat st {};
            if (::stat(dir.c_str(), &st) == 0 && st.st_uid == peer.uid) reply.test_log_dir = dir;
            send_reply(conn, reply);
            watcher_log("run broker: " + describe(peer) + " (" + request->name +
                        ") stays in session " + std::to_string(existing) + ", which it is a member of");
            return;
        }

        std::uint64_t id = 0;
        try {
            id = registry.start_process_session(pidfd.get(), peer.pid, LG_SESSION_RUN);
        } catch (const std::exception& e) {
            throw Refusal{e.what()};
        }
        // Nobody would track a session that fails from here on: undo it
        // whole, so the mark is of no session.
        auto undo = [&] {
            bpf_map_delete_elem(maps_.members.get(), &key);
            try {
                registry.untag_id(id);
            } catch (const std::exception& e) {
                watcher_log(std::string("error: run broker: ") + e.what());
            }
            remove_session_info(id);
        };
        RunReply reply{true, "", id, false, ""};
        try {
            reply.test_log_dir = make_test_log_dir(id, peer);
            write_session_info(id, SessionInfo{request->name, "", peer.pid});
            on_started_(BrokeredSession{id, peer.pid, peer.uid, request->name});
        } catch (const Refusal&) {
            undo();
            throw;
        } catch (const std::exception& e) {
            undo();
            throw Refusal{e.what()};
        }
        send_reply(conn, reply);
        watcher_log("run broker: started session " + std::to_string(id) + " (" + request->name +
                    ") for " + describe(peer));
    } catch (const Refusal& r) {
        refuse(r.why);
    } catch (const std::exception& e) {
        refuse(e.what());
    }
}

}  // namespace liveguard
