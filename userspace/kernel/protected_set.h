#pragma once
// The set of protected processes: a mark in task-local storage on each
// protected thread-group leader. The kernel frees the mark with the task,
// so identity is pinned to the process, never to a reusable PID number.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct ProtectedProcess {
    pid_t pid = 0;
    std::string comm;
    bool alive = false;  // false for a zombie not yet reaped
    lg_protected mark{};
};

enum class AddOutcome { Added, AlreadyProtected };

struct PinnedMaps;

class ProtectedSet {
public:
    // Marks only (lookups, or a caller that needs nothing else).
    explicit ProtectedSet(int map_fd) : fd_(map_fd) {}
    // Also records what the side doors need: the process's number and
    // start time (for /proc/<pid> files) and its cgroups (for cgroup files).
    explicit ProtectedSet(const PinnedMaps& maps);

    // Protects the process that `pid` names (a thread id protects its
    // whole process). `resolved` receives the thread-group id.
    // `flags`: LG_PROTECT_INHERIT protects every child it forks from then on.
    AddOutcome add(pid_t pid, std::uint32_t source, pid_t* resolved = nullptr,
                   std::uint32_t flags = 0);

    // False when the process was not protected.
    bool remove(pid_t pid);

    std::optional<lg_protected> lookup(pid_t pid) const;

    // Every protected process, found by asking about each one in /proc.
    std::vector<ProtectedProcess> list() const;

private:
    void record_side_doors(pid_t tgid);

    int fd_;
    int pids_fd_ = -1;
    int guarded_cgroups_fd_ = -1;
};

}  // namespace liveguard
