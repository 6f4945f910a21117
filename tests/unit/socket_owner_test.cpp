// Finding a process by the unix socket it listens on: what `reload`,
// `unload` and `status` rely on to address the watcher without trusting a
// pid file.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "base/fd.h"
#include "base/socket_owner.h"

using namespace liveguard;

namespace {

class SocketOwnerTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/lg-socket-owner-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        path_ = dir_ + "/test.sock";
    }
    void TearDown() override {
        ::unlink(path_.c_str());
        ::rmdir(dir_.c_str());
    }

    UniqueFd bind_socket() {
        UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        struct sockaddr_un addr {};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
        EXPECT_EQ(::bind(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr), 0);
        return fd;
    }

    std::string dir_, path_;
};

}  // namespace

TEST_F(SocketOwnerTest, NoSocketIsNobody) {
    EXPECT_FALSE(socket_owner(path_));
    EXPECT_FALSE(socket_owner(dir_ + "/missing/test.sock"));
}

TEST_F(SocketOwnerTest, PlainFileIsNobody) {
    std::ofstream(path_) << getpid() << "\n";  // a pid file where the socket should be
    EXPECT_FALSE(socket_owner(path_));
}

TEST_F(SocketOwnerTest, BoundButNotListeningIsNobody) {
    UniqueFd fd = bind_socket();
    EXPECT_FALSE(socket_owner(path_));
}

TEST_F(SocketOwnerTest, ClosedListenerIsNobody) {
    {
        UniqueFd fd = bind_socket();
        ASSERT_EQ(::listen(fd.get(), 4), 0);
    }
    EXPECT_FALSE(socket_owner(path_));
}

TEST_F(SocketOwnerTest, ListenerIsThisProcessWithItsPidfd) {
    UniqueFd fd = bind_socket();
    ASSERT_EQ(::listen(fd.get(), 4), 0);
    auto owner = socket_owner(path_);
    ASSERT_TRUE(owner);
    EXPECT_EQ(owner->pid, ::getpid());
    EXPECT_EQ(owner->uid, ::getuid());
    ASSERT_TRUE(owner->pidfd);
    // The pidfd names this process: signal 0 reaches it, and it has not exited.
    EXPECT_EQ(::syscall(SYS_pidfd_send_signal, owner->pidfd.get(), 0, nullptr, 0), 0);
    struct pollfd p {owner->pidfd.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 0), 0);
    // Asking again works: the lookup left nothing pending that matters.
    EXPECT_TRUE(socket_owner(path_));
}

TEST_F(SocketOwnerTest, ListenerInAChildIsTheChild) {
    int ready[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    UniqueFd rd(ready[0]), wr(ready[1]);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        UniqueFd fd = bind_socket();
        if (::listen(fd.get(), 4) != 0) ::_exit(1);
        (void)!::write(wr.get(), "x", 1);
        ::pause();
        ::_exit(0);
    }
    wr.reset();
    char c;
    ASSERT_EQ(::read(rd.get(), &c, 1), 1);
    auto owner = socket_owner(path_);
    ASSERT_TRUE(owner);
    EXPECT_EQ(owner->pid, child);
    // Signalled through its pidfd, it exits, and the pidfd says so.
    ASSERT_EQ(::syscall(SYS_pidfd_send_signal, owner->pidfd.get(), SIGKILL, nullptr, 0), 0);
    struct pollfd p {owner->pidfd.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 5000), 1);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status));
    // Its socket file is left behind, but nobody listens on it.
    EXPECT_FALSE(socket_owner(path_));
}

TEST_F(SocketOwnerTest, TooLongAPathIsAnError) {
    EXPECT_THROW(socket_owner("/" + std::string(200, 'x')), std::exception);
}
