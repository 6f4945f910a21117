#include "kernel/session_registry.h"

#include <bpf/bpf.h>

#include <cerrno>
#include <ctime>

#include "base/cgroup.h"
#include "base/clock.h"
#include "base/error.h"
#include "kernel/map_walk.h"

namespace liveguard {

TagOutcome SessionRegistry::tag(const std::string& mount, const std::string& dir,
                                std::uint64_t* id_out) {
    require_cgroup2_dir(dir);
    int level = cgroup_level(mount, dir);
    if (level == 0)
        throw Error("refusing to tag the root cgroup: every process would become a session member",
                    "create a cgroup for the session (mkdir " + mount + "/tests) and tag that");
    if (level >= LG_MAX_CGROUP_LEVEL)
        throw Error(dir + " is nested " + std::to_string(level) + " levels deep; the guard looks " +
                        std::to_string(LG_MAX_CGROUP_LEVEL - 1) + " levels up at most",
                    "tag a cgroup closer to the root");
    std::uint64_t id = cgroup_id_of(dir);
    if (id_out) *id_out = id;
    lg_session s{};
    s.tagged_realtime_ns = realtime_now_ns();
    if (bpf_map_update_elem(fd_, &id, &s, BPF_NOEXIST) != 0) {
        int e = errno;
        if (e == EEXIST) return TagOutcome::AlreadyTagged;
        if (e == E2BIG)
            throw Error("too many tagged cgroups (" + std::to_string(LG_MAX_SESSIONS) + ")",
                        "untag sessions that ended (see `liveguard-bpf status`)");
        throw_errno("cannot tag " + dir, e);
    }
    sync_count();
    return TagOutcome::Tagged;
}

bool SessionRegistry::untag(const std::string& dir) {
    require_cgroup2_dir(dir);
    return untag_id(cgroup_id_of(dir));
}

bool SessionRegistry::untag_id(std::uint64_t id) {
    if (bpf_map_delete_elem(fd_, &id) != 0) {
        if (errno == ENOENT) return false;
        throw_errno("cannot untag cgroup " + std::to_string(id), errno);
    }
    sync_count();
    return true;
}

std::vector<TaggedCgroup> SessionRegistry::list() const {
    std::vector<TaggedCgroup> out;
    for (const auto& [id, info] : list_u64_map<lg_session>(fd_, LG_MAX_SESSIONS)) out.push_back({id, info});
    return out;
}

void SessionRegistry::sync_count() { write_setting(settings_fd_, LG_SETTING_SESSIONS, list().size()); }

}  // namespace liveguard
