#include "events/event_coalescer.h"

#include <algorithm>

namespace liveguard {

EventCoalescer::Key EventCoalescer::key_of(const lg_event& e) {
    return {e.verdict, e.hook, e.pid, e.target_pid, e.object_id, e.session_cgroup_id, e.signal, e.detail};
}

bool EventCoalescer::absorb(const lg_event& e) {
    Key key = key_of(e);
    auto [it, fresh] = open_.try_emplace(key);
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
    order_.emplace_back(e.boot_ns, key);
    if (open_.size() > kMaxOpen) close_oldest();
    return false;
}

void EventCoalescer::close_oldest() {
    while (!order_.empty()) {
        auto [begun, key] = order_.front();
        order_.pop_front();
        auto it = open_.find(key);
        if (it == open_.end() || it->second.first.boot_ns != begun) continue;  // stale
        if (it->second.count) pending_.push_back(it->second);
        open_.erase(it);
        return;
    }
}

std::vector<Repeats> EventCoalescer::close(std::uint64_t now_boot_ns, bool all) {
    std::vector<Repeats> out = std::move(pending_);
    pending_.clear();
    while (!order_.empty()) {
        auto [begun, key] = order_.front();
        bool due = all || now_boot_ns < begun || now_boot_ns - begun >= kWindowNs;
        if (!due) break;
        order_.pop_front();
        auto it = open_.find(key);
        if (it == open_.end() || it->second.first.boot_ns != begun) continue;  // stale
        if (it->second.count) out.push_back(it->second);
        open_.erase(it);
    }
    return out;
}

int EventCoalescer::next_close_ms(std::uint64_t now_boot_ns) const {
    if (!pending_.empty()) return 1;
    if (order_.empty()) return -1;
    // A stale front only wakes the loop early.
    std::uint64_t end = order_.front().first + kWindowNs;
    if (now_boot_ns >= end) return 1;
    return static_cast<int>(std::max<std::uint64_t>(1, (end - now_boot_ns + 999'999) / 1'000'000));
}

}  // namespace liveguard
