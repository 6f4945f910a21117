#pragma once
// The set of tagged cgroups. A task is a session member when its cgroup v2
// cgroup or any ancestor of it is tagged, so sub-cgroups a test creates
// stay inside its session.
#include <cstdint>
#include <string>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct TaggedCgroup {
    std::uint64_t id = 0;
    lg_session info{};
};

enum class TagOutcome { Tagged, AlreadyTagged };

class SessionRegistry {
public:
    SessionRegistry(int map_fd, int settings_fd) : fd_(map_fd), settings_fd_(settings_fd) {}

    // `dir` must be a non-root cgroup v2 directory under `mount`.
    TagOutcome tag(const std::string& mount, const std::string& dir, std::uint64_t* id = nullptr);

    // False when it was not tagged.
    bool untag(const std::string& dir);
    bool untag_id(std::uint64_t id);

    std::vector<TaggedCgroup> list() const;

private:
    // The kernel skips the session walk while the count is zero.
    void sync_count();

    int fd_;
    int settings_fd_;
};

}  // namespace liveguard
