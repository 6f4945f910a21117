#pragma once
// Identical refusals (same culprit, target, door, signal and verdict)
// within a second of the first are one event with a count: a test stuck
// in a retry loop gives one line saying how often it tried, not a
// flood that fills the ring buffer and hides what else happened.
// The first of them is journalled at once; how many followed is journalled
// when its second is over.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "liveguard/abi.h"

namespace liveguard {

struct Repeats {
    lg_event first{};                // the event that was journalled
    std::uint64_t count = 0;         // identical ones after it
    std::uint64_t last_boot_ns = 0;  // the last of them
};

class EventCoalescer {
public:
    static constexpr std::uint64_t kWindowNs = 1'000'000'000;
    // Seconds open at once, at most: a flood of refusals that all differ
    // closes its oldest seconds early rather than take the consumer's
    // memory (each holds its event, half a kilobyte).
    static constexpr std::size_t kMaxOpen = 65536;

    // True when `e` repeats an event journalled less than a second
    // before it (it is counted there); false when it is to be journalled.
    bool absorb(const lg_event& e);

    // The repeats of the events whose second ended before `now_boot_ns`
    // (all of them with `all`), once each: those with none are dropped
    // silently.
    std::vector<Repeats> close(std::uint64_t now_boot_ns, bool all = false);

    // Milliseconds until the earliest open second ends (at least 1); -1
    // when none is open.
    int next_close_ms(std::uint64_t now_boot_ns) const;

    // Events absorbed so far.
    std::uint64_t coalesced() const { return coalesced_; }

private:
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t,
                           std::uint64_t, std::int32_t, std::uint32_t>;
    static Key key_of(const lg_event& e);
    // Ends the oldest open second now (its repeats go to pending_).
    void close_oldest();

    std::map<Key, Repeats> open_;
    // When each open second began, oldest first (by arrival: the ring
    // buffer is nearly in time order), so closing looks only at the ones
    // due. An entry whose key began another second since is stale.
    std::deque<std::pair<std::uint64_t, Key>> order_;
    // Seconds with repeats that a later event of the same key closed.
    std::vector<Repeats> pending_;
    std::uint64_t coalesced_ = 0;
};

}  // namespace liveguard
