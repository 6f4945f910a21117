// Who reads a service's output pipe, on this machine's /proc: a forked
// "service" writes into a pipe, a forked reader holds its other end.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "policy/pipe_readers.h"
#include "policy/resolver.h"

using namespace liveguard;

namespace {

// A child that runs `body` and is killed and reaped at scope end.
struct Child {
    pid_t pid;
    template <class F>
    explicit Child(F body) : pid(::fork()) {
        if (pid == 0) {
            body();
            ::_exit(0);
        }
    }
    ~Child() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

void sleep_forever() {
    for (;;) ::pause();
}

// The test's own output may be a pipe (under `tee`): a child gets
// /dev/null on both before it takes the pipe under test.
void quiet_outputs() {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::close(null);
}

// A reader child holding a pipe's read end and a service child writing
// into it as its fd `service_fd`; each says "ready" on `sync` once its
// descriptors are set, so the lookup sees them settled. The test keeps
// the write end when asked: a writer is not a reader.
struct PipedPair {
    int p[2];
    int sync[2];
    std::optional<Child> reader, service;
    PipedPair(int service_fd, bool keep_write_end) {
        if (::pipe(p) != 0 || ::pipe(sync) != 0) throw std::runtime_error("pipe failed");
        auto ready = [&] {
            char c = 1;
            (void)!::write(sync[1], &c, 1);
            ::close(sync[1]);
            ::close(sync[0]);
        };
        reader.emplace([&] {
            quiet_outputs();
            ::close(p[1]);
            ready();
            sleep_forever();
        });
        service.emplace([&] {
            quiet_outputs();
            ::dup2(p[1], service_fd);
            ::close(p[0]);
            ::close(p[1]);
            ready();
            sleep_forever();
        });
        ::close(p[0]);
        kept = keep_write_end;
        if (!kept) ::close(p[1]);
        ::close(sync[1]);
        char c;
        for (int i = 0; i < 2; ++i)
            if (::read(sync[0], &c, 1) != 1) throw std::runtime_error("a child did not start");
        ::close(sync[0]);
    }
    ~PipedPair() {
        if (kept) ::close(p[1]);
    }
    bool kept = false;
};

}  // namespace

TEST(PipeReaders, TheReaderOfAServicesStdoutIsFound) {
    PipedPair pair(1, true);
    auto readers = output_pipe_readers({pair.service->pid});
    ASSERT_EQ(readers.size(), 1u);
    EXPECT_EQ(readers[0].pid, pair.reader->pid);
    EXPECT_EQ(readers[0].service, pair.service->pid);
    EXPECT_EQ(readers[0].service_fd, 1);
}

TEST(PipeReaders, StderrCountsAndAProcessWithoutPipesHasNone) {
    PipedPair pair(2, false);
    auto readers = output_pipe_readers({pair.service->pid});
    ASSERT_EQ(readers.size(), 1u);
    EXPECT_EQ(readers[0].pid, pair.reader->pid);
    EXPECT_EQ(readers[0].service_fd, 2);
    EXPECT_TRUE(output_pipe_readers({pair.reader->pid}).empty());
    EXPECT_TRUE(output_pipe_readers({999999999}).empty());
}

TEST(PipeReaders, APidTargetProtectsTheReaderOfItsOutput) {
    PipedPair pair(1, false);
    ProtectTarget t;
    t.kind = TargetKind::Pid;
    t.pid = pair.service->pid;
    Resolution r = resolve(t, "/sys/fs/cgroup");
    ASSERT_EQ(r.processes.size(), 2u);
    EXPECT_EQ(r.processes[0].pid, pair.service->pid);
    EXPECT_EQ(r.processes[1].pid, pair.reader->pid);
    EXPECT_FALSE(r.processes[1].inherit);
    EXPECT_NE(r.processes[1].why.find("stdout"), std::string::npos) << r.processes[1].why;
}
