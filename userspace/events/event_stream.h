#pragma once
// Consuming the pinned ring buffer. The ring buffer has one consumer
// position, shared by every reader: two `events` at once split the stream.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "liveguard/abi.h"

struct ring_buffer;  // libbpf

namespace liveguard {

class EventStream {
public:
    // Returns whether the event took work (was journalled): only those
    // count toward a batch, so a flood of repeats is drained at once.
    using Handler = std::function<bool(const lg_event&)>;
    // Called after every read with the kernel's count of events lost since
    // the load, while this reader still has its turn.
    using LostHandler = std::function<void(std::uint64_t total_lost)>;

    // `events_fd` and `counters_fd` are pinned-map fds kept open by the caller.
    EventStream(int events_fd, int counters_fd, Handler on_event, LostHandler on_lost);
    ~EventStream();
    EventStream(const EventStream&) = delete;
    EventStream& operator=(const EventStream&) = delete;

    // Waits up to `timeout_ms` for events and handles what arrived.
    void poll_once(int timeout_ms);
    // Readable when events wait (an epoll fd), for a caller's own poll loop.
    int fd() const;
    // At most `n` events per poll_once (0: no limit); the rest wait.
    void set_batch(std::size_t n) { batch_ = n; }

private:
    static int on_sample(void* ctx, void* data, std::size_t size);

    ::ring_buffer* rb_ = nullptr;
    int counters_fd_;
    Handler on_event_;
    LostHandler on_lost_;
    std::size_t batch_ = 0;
    std::size_t taken_ = 0;  // journalled this poll
    std::size_t seen_ = 0;   // journalled or repeats this poll
    static constexpr std::size_t kRepeatsPerEvent = 64;
    // What on_sample returns to end a batch; libbpf has consumed the event.
    static constexpr int kBatchFull = -ECANCELED;
};

}  // namespace liveguard
