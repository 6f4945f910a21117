#include "events/event_coalescer.h"

#include <algorithm>

namespace liveguard {

EventCoalescer::Key EventCoalescer::key_of(const lg_event& e) {
    return {e.verdict, e.hook, e.pid, e.target_pid, e.object_id, e.session_cgroup_id, e.signal, e.detail};
}

bool EventCoalescer::absorb(const lg_event& e) {
    auto [it, fresh] = open_.try_emplace(key_of(e));
    Repeats& r = it->second;
    if (!fresh && e.boot_ns >= r.first.boot_ns && e.boot_ns - r.first.boot_ns < kWindowNs) {
        ++r.count;
        r.last_boot_ns = e.boot_ns;
        ++coalesced_;
        return true;
    }
    // A later second starts with this event. The one before it, with any
    // repeats, is closed by the next close(): keep it apart until then.
    if (!fresh && r.count) pending_.push_back(r);
    r = Repeats{e, 0, e.boot_ns};
    return false;
}

std::vector<Repeats> EventCoalescer::close(std::uint64_t now_boot_ns, bool all) {
    std::vector<Repeats> out = std::move(pending_);
    pending_.clear();
    for (auto it = open_.begin(); it != open_.end();) {
        const Repeats& r = it->second;
        if (all || now_boot_ns < r.first.boot_ns || now_boot_ns - r.first.boot_ns >= kWindowNs) {
            if (r.count) out.push_back(r);
            it = open_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

int EventCoalescer::next_close_ms(std::uint64_t now_boot_ns) const {
    if (!pending_.empty()) return 1;
    if (open_.empty()) return -1;
    std::uint64_t earliest = UINT64_MAX;
    for (const auto& [k, r] : open_) earliest = std::min<std::uint64_t>(earliest, r.first.boot_ns);
    std::uint64_t end = earliest + kWindowNs;
    if (now_boot_ns >= end) return 1;
    return static_cast<int>(std::max<std::uint64_t>(1, (end - now_boot_ns + 999'999) / 1'000'000));
}

}  // namespace liveguard
