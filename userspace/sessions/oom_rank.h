#pragma once
// Session members go first when memory runs out. The OOM killer scores a
// process by its memory plus oom_score_adj in thousandths of the machine's
// (or the cgroup's) memory: at 1000, the most, any member with memory
// outscores every process at 0 or below, so a test that ate the memory, or
// spread it over many children each smaller than the service, is taken
// before the service. Written by root, the value is also the floor the
// process and its children may not write below without CAP_SYS_RESOURCE
// (oom_score_adj_min); a root member's writes are refused in the kernel
// (door `oom`). Children inherit it at fork.
#include <sys/types.h>

namespace liveguard {

// The oom_score_adj every member gets.
constexpr int kMemberOomScoreAdj = 1000;

enum class OomRank {
    Ranked,   // written now
    Already,  // it had the value already
    Gone,     // no such process (any more)
};

// Ranks process `pid` (0: the calling process) first for the OOM killer.
// With `pidfd`, the process it names: a number reused by another process
// between the caller's check and this write is not written (Gone), since
// root's write would also set that process's floor. Throws Error with the
// cause when /proc/<pid>/oom_score_adj cannot be read or written.
OomRank rank_first_for_oom(pid_t pid, int pidfd = -1);

}  // namespace liveguard
