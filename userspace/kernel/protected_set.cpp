#include "kernel/protected_set.h"

#include <bpf/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fd.h"
#include "base/proc.h"
#include "kernel/guarded_cgroups.h"
#include "kernel/pinned_maps.h"

namespace liveguard {
namespace {

// A pidfd is the key of task-local storage from userspace.
UniqueFd open_pidfd(pid_t pid) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) {
        int e = errno;
        if (e == ESRCH) throw Error("no such process: " + std::to_string(pid),
                                     "check the PID (ps -p " + std::to_string(pid) + ")");
        throw_errno("cannot open a pidfd for " + std::to_string(pid), e);
    }
    return UniqueFd(fd);
}

pid_t process_of(pid_t pid) {
    auto tgid = read_tgid(pid);
    if (!tgid)
        throw Error("no such process: " + std::to_string(pid),
                    "check the PID (ps -p " + std::to_string(pid) + ")");
    return *tgid;
}

}  // namespace

ProtectedSet::ProtectedSet(const PinnedMaps& maps)
    : fd_(maps.protected_tasks.get()),
      pids_fd_(maps.protected_pids.get()),
      guarded_cgroups_fd_(maps.guarded_cgroups.get()) {}

void ProtectedSet::record_side_doors(pid_t tgid) {
    if (pids_fd_ >= 0) {
        if (auto st = read_proc_stat(tgid)) {
            __u32 key = static_cast<__u32>(tgid);
            __u64 ticks = st->start_ticks;
            if (bpf_map_update_elem(pids_fd_, &key, &ticks, BPF_ANY) != 0)
                throw_errno("cannot record pid " + std::to_string(tgid), errno);
        }
    }
    if (guarded_cgroups_fd_ >= 0) GuardedCgroups(guarded_cgroups_fd_, cgroup2_mount()).add_chain_of(tgid);
}

AddOutcome ProtectedSet::add(pid_t pid, std::uint32_t source, pid_t* resolved,
                             std::uint32_t flags) {
    pid_t tgid = process_of(pid);
    if (resolved) *resolved = tgid;
    UniqueFd pidfd = open_pidfd(tgid);
    int key = pidfd.get();
    lg_protected mark{};
    if (bpf_map_lookup_elem(fd_, &key, &mark) == 0) {
        // Widening to inherit is an upgrade worth making; the original
        // source and time stay.
        if ((flags & LG_PROTECT_INHERIT) && !(mark.flags & LG_PROTECT_INHERIT)) {
            mark.flags |= LG_PROTECT_INHERIT;
            if (bpf_map_update_elem(fd_, &key, &mark, BPF_EXIST) != 0)
                throw_errno("cannot update protection of " + std::to_string(tgid), errno);
        }
        record_side_doors(tgid);
        return AddOutcome::AlreadyProtected;
    }
    mark.since_boot_ns = boottime_now_ns();
    mark.source = source;
    mark.flags = flags;
    if (bpf_map_update_elem(fd_, &key, &mark, BPF_NOEXIST) != 0) {
        int e = errno;
        if (e == EEXIST) return AddOutcome::AlreadyProtected;
        if (e == ESRCH || e == EBADF)
            throw Error("process " + std::to_string(tgid) + " exited before it could be protected");
        throw_errno("cannot protect " + std::to_string(tgid), e);
    }
    record_side_doors(tgid);
    // Signal 0 delivers nothing, but the kernel side sees the process at
    // its kill hook and protects the parent if the process asked to die
    // with it (PR_SET_PDEATHSIG) before it was protected.
    ::syscall(SYS_pidfd_send_signal, key, 0, nullptr, 0);
    return AddOutcome::Added;
}

bool ProtectedSet::remove(pid_t pid) {
    pid_t tgid = process_of(pid);
    UniqueFd pidfd = open_pidfd(tgid);
    int key = pidfd.get();
    if (bpf_map_delete_elem(fd_, &key) != 0) {
        if (errno == ENOENT) return false;
        throw_errno("cannot unprotect " + std::to_string(tgid), errno);
    }
    if (pids_fd_ >= 0) {
        __u32 k = static_cast<__u32>(tgid);
        bpf_map_delete_elem(pids_fd_, &k);
    }
    return true;
}

std::optional<lg_protected> ProtectedSet::lookup(pid_t pid) const {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) return std::nullopt;
    UniqueFd pidfd(fd);
    int key = pidfd.get();
    lg_protected mark{};
    if (bpf_map_lookup_elem(fd_, &key, &mark) != 0) return std::nullopt;
    return mark;
}

std::vector<ProtectedProcess> ProtectedSet::list() const {
    std::vector<ProtectedProcess> out;
    for (pid_t pid : list_pids()) {
        auto mark = lookup(pid);
        if (!mark) continue;
        ProtectedProcess p;
        p.pid = pid;
        p.mark = *mark;
        if (auto st = read_proc_stat(pid)) {
            p.comm = st->comm;
            p.alive = st->state != 'Z' && st->state != 'X';
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace liveguard
