#include "sessions/oom_rank.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/fd.h"

namespace liveguard {

OomRank rank_first_for_oom(pid_t pid, int pidfd) {
    std::string path = "/proc/" + (pid ? std::to_string(pid) : std::string("self")) + "/oom_score_adj";
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT || errno == ESRCH) return OomRank::Gone;
        throw_errno("cannot open " + path, errno);
    }
    // The number is the process's until it is reaped: still there after
    // the open, the file opened is its.
    if (pidfd >= 0 && ::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0) return OomRank::Gone;
    char buf[16] = {};
    ssize_t n = ::pread(fd.get(), buf, sizeof buf - 1, 0);
    if (n < 0) {
        if (errno == ESRCH) return OomRank::Gone;
        throw_errno("cannot read " + path, errno);
    }
    if (std::atoi(buf) == kMemberOomScoreAdj) return OomRank::Already;
    std::string value = std::to_string(kMemberOomScoreAdj) + "\n";
    if (::pwrite(fd.get(), value.data(), value.size(), 0) != static_cast<ssize_t>(value.size())) {
        if (errno == ESRCH) return OomRank::Gone;
        throw_errno("cannot write " + path, errno);
    }
    return OomRank::Ranked;
}

}  // namespace liveguard
