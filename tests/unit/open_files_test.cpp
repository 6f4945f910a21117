#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "watcher/open_files.h"

using namespace liveguard;

namespace {

struct OpenFd {
    int fd;
    explicit OpenFd(int f) : fd(f) {}
    ~OpenFd() {
        if (fd >= 0) ::close(fd);
    }
};

// Whether one of `paths` (each a /proc/<pid>/fd/<n>) reaches the file `fd` has open.
bool lists(const std::vector<std::string>& paths, int fd) {
    struct stat want {};
    if (::fstat(fd, &want) != 0) return false;
    for (const auto& p : paths) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino) return true;
    }
    return false;
}

}  // namespace

TEST(OpenFiles, RegularFilesAndDirectoriesWithANameOnRealFilesystems) {
    char tmpl[] = "/tmp/lg-open-files-XXXXXX";
    OpenFd file(::mkstemp(tmpl));
    ASSERT_GE(file.fd, 0);
    OpenFd dir(::open("/tmp", O_RDONLY | O_DIRECTORY));
    OpenFd proc(::open("/proc/self/status", O_RDONLY));
    char gone_tmpl[] = "/tmp/lg-open-files-gone-XXXXXX";
    OpenFd gone(::mkstemp(gone_tmpl));
    ASSERT_GE(gone.fd, 0);
    ::unlink(gone_tmpl);
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    OpenFd r(pipefd[0]), w(pipefd[1]);

    auto paths = held_open_files(::getpid(), 4096);
    ::unlink(tmpl);
    EXPECT_TRUE(lists(paths, file.fd));
    EXPECT_TRUE(lists(paths, dir.fd));
    EXPECT_FALSE(lists(paths, proc.fd)) << "a /proc file is no lock file";
    EXPECT_FALSE(lists(paths, gone.fd)) << "an unlinked file has no name to guard";
    EXPECT_FALSE(lists(paths, r.fd)) << "a pipe";
}

TEST(OpenFiles, AtMostMaxAndNothingForAProcessThatIsGone) {
    OpenFd a(::open("/tmp", O_RDONLY | O_DIRECTORY)), b(::open("/tmp", O_RDONLY | O_DIRECTORY));
    EXPECT_LE(held_open_files(::getpid(), 1).size(), 1u);
    EXPECT_TRUE(held_open_files(0x3ffffff0, 10).empty());
}

TEST(OpenFiles, ACgroupThatIsGoneHasNoProcesses) {
    EXPECT_TRUE(cgroup_processes("/nonexistent/cgroup", 10).empty());
}
