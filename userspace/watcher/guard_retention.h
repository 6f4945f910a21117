#pragma once
// Which guarded inodes keep their guard after a pass no longer resolves
// to them. A guarded inode keeps its guard while it lives: renaming
// supervise/control aside and letting s6 make a new one must not free the
// old FIFO, which still reaches the same s6-supervise.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace liveguard {

using InodeId = std::pair<std::uint64_t, std::uint64_t>;  // (dev, ino)

struct HeldGuard {
    std::string owner;        // the target, or built-in set, that wanted it
    std::uint64_t links = 0;  // names it has left; 0 once unlinked
};

// The guards in `held` to release: not wanted by this pass, and either
// unlinked or wanted by an owner that is no longer in `owners`.
std::set<InodeId> guards_to_release(const std::map<InodeId, HeldGuard>& held,
                                    const std::set<InodeId>& wanted,
                                    const std::set<std::string>& owners);

}  // namespace liveguard
