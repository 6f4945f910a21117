#pragma once
// The sessions map: tagged cgroups, and sessions of a process and its
// descendants. A task is a session member when it carries a member mark:
// made at `tag` for what the cgroup and the cgroups below it hold, by the
// kernel for what arrives there later and at fork inside a session, and
// by the kernel or the watcher for a process session's root.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct TaggedCgroup {
    std::uint64_t id = 0;
    lg_session info{};

    bool is_process_session() const { return id & LG_SESSION_PROCESS_BIT; }
};

inline bool is_process_session_id(std::uint64_t id) { return id & LG_SESSION_PROCESS_BIT; }

enum class TagOutcome { Tagged, AlreadyTagged };

class SessionRegistry {
public:
    SessionRegistry(int map_fd, int settings_fd, int members_fd = -1)
        : fd_(map_fd), settings_fd_(settings_fd), members_fd_(members_fd) {}

    // `dir` must be a non-root cgroup v2 directory under `mount`. Every
    // process already in it or below it is marked a member; when one
    // cannot be, the tag is taken back and the error thrown.
    TagOutcome tag(const std::string& mount, const std::string& dir, std::uint64_t* id = nullptr);

    // False when it was not tagged.
    bool untag(const std::string& dir);
    bool untag_id(std::uint64_t id);

    std::vector<TaggedCgroup> list() const;

    // A new session whose root is the process `pidfd` refers to (`pid`):
    // recorded, then the root marked a member. `flags`: enum
    // lg_session_flags. Throws when either step fails, leaving nothing.
    std::uint64_t start_process_session(int pidfd, pid_t pid, std::uint32_t flags);

    // The session the process `pidfd` refers to is a member of by its mark
    // (0 when none, or when its session has ended).
    std::uint64_t marked_session_of(int members_fd, int pidfd) const;

    // Whether process `pid` is a session member by either rule above (its
    // mark, or its cgroup or an ancestor under `mount` tagged). A process
    // that is gone is no member.
    bool has_member(const std::string& mount, int members_fd, pid_t pid) const;

    // The shared session execs join when theirs cannot be recorded.
    void ensure_overflow_session();

    // Counts the entries again for the kernel's gate (after the kernel or
    // another process added or removed some).
    void recount() { sync_count(); }

private:
    void mark_members(const std::string& mount, const std::string& dir, std::uint64_t id);

    // The kernel skips the session walk while the count is zero.
    void sync_count();

    int fd_;
    int settings_fd_;
    int members_fd_;
};

}  // namespace liveguard
