#include "watcher/guard_retention.h"

namespace liveguard {

std::set<InodeId> guards_to_release(const std::map<InodeId, HeldGuard>& held,
                                    const std::set<InodeId>& wanted,
                                    const std::set<std::string>& owners) {
    std::set<InodeId> release;
    for (const auto& [id, guard] : held) {
        if (wanted.count(id)) continue;
        if (guard.links == 0 || !owners.count(guard.owner)) release.insert(id);
    }
    return release;
}

}  // namespace liveguard
