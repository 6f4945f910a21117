#include "sessions/oom_rank.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/fd.h"

namespace liveguard {

OomRank rank_first_for_oom(pid_t pid) {
    std::string path = "/proc/" + std::to_string(pid) + "/oom_score_adj";
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT || errno == ESRCH) return OomRank::Gone;
        throw_errno("cannot open " + path, errno);
    }
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
