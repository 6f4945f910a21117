#pragma once
// Moves events from the kernel's ring buffer into the journal, with the
// details only userspace can read gathered at once (while the culprit may
// still be alive). Losses the kernel counted become journal lines too.
// Identical refusals within a second are one line and a count
// (events/event_coalescer.h): every refusal the kernel reported is an
// event line, a repeat counted in one, or counted lost.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace liveguard {

struct PinnedMaps;
class EventStream;

class EventCollector {
public:
    // `batch`: at most this many events per poll (0: all that wait).
    explicit EventCollector(const PinnedMaps& maps, std::size_t batch = 0);
    // The same over any ring buffer and counters map of the guard's layout
    // (fds the caller keeps open).
    EventCollector(int events_fd, int counters_fd, std::size_t batch = 0);
    ~EventCollector();
    EventCollector(const EventCollector&) = delete;
    EventCollector& operator=(const EventCollector&) = delete;

    // Waits up to `timeout_ms` for events; journals what arrived, and the
    // repeats of every second that is over.
    void poll(int timeout_ms);
    // Journals the repeats of every open second now (as the destructor
    // does).
    void flush();
    // How long a loop may sleep before a second's repeats are due (-1:
    // none open), for its poll timeout.
    int wakeup_ms() const;
    // Refusals counted as repeats so far.
    std::uint64_t coalesced() const;
    // Readable when events wait.
    int fd() const;

private:
    struct State;
    std::shared_ptr<State> state_;
    std::unique_ptr<EventStream> stream_;
};

}  // namespace liveguard
