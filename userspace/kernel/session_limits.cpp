#include "kernel/session_limits.h"

#include <bpf/bpf.h>

#include <cerrno>

#include "base/error.h"
#include "base/fd.h"
#include "kernel/map_walk.h"
#include "kernel/pins.h"
#include "liveguard/abi.h"

namespace liveguard {

void set_session_limits(int limits_fd, std::uint32_t max_tasks) {
    std::uint32_t key = 0;
    lg_session_limits l{};
    l.max_tasks = max_tasks;
    if (::bpf_map_update_elem(limits_fd, &key, &l, BPF_ANY) != 0)
        throw_errno("cannot set the sessions' task limit (lg_session_limits)", errno);
}

std::size_t sweep_session_tasks(int tasks_fd, int sessions_fd) {
    std::size_t n = 0;
    for (const auto& [id, count] : list_u64_map<lg_session_tasks>(tasks_fd, 2 * LG_MAX_SESSIONS)) {
        lg_session s{};
        if (::bpf_map_lookup_elem(sessions_fd, &id, &s) == 0) continue;
        if (errno != ENOENT) continue;
        if (::bpf_map_delete_elem(tasks_fd, &id) == 0) ++n;
    }
    return n;
}

void forget_session_tasks(std::uint64_t session) {
    UniqueFd fd(::bpf_obj_get(pins::map(pins::kSessionTasks).c_str()));
    if (fd) ::bpf_map_delete_elem(fd.get(), &session);
}

}  // namespace liveguard
