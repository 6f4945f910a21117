#pragma once
// Moves events from the kernel's ring buffer into the journal, with the
// details only userspace can read gathered at once (while the culprit may
// still be alive). Losses the kernel counted become journal lines too.
#include <cstddef>
#include <memory>

namespace liveguard {

struct PinnedMaps;
class EventStream;

class EventCollector {
public:
    // `batch`: at most this many events per poll (0: all that wait).
    explicit EventCollector(const PinnedMaps& maps, std::size_t batch = 0);
    ~EventCollector();
    EventCollector(const EventCollector&) = delete;
    EventCollector& operator=(const EventCollector&) = delete;

    // Waits up to `timeout_ms` for events; journals what arrived.
    void poll(int timeout_ms);
    // Readable when events wait.
    int fd() const;

private:
    std::unique_ptr<EventStream> stream_;
};

}  // namespace liveguard
