// The pinned ring buffer through libbpf, and the kernel's loss counter.
#include "events/event_stream.h"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/fd.h"
#include "base/paths.h"
#include "kernel/counters.h"

namespace liveguard {

EventStream::EventStream(int events_fd, int counters_fd, Handler on_event, LostHandler on_lost)
    : counters_fd_(counters_fd), on_event_(std::move(on_event)), on_lost_(std::move(on_lost)) {
    rb_ = ring_buffer__new(events_fd, &EventStream::on_sample, this, nullptr);
    if (!rb_) throw_errno("cannot open the event ring buffer", errno);
}

EventStream::~EventStream() { ring_buffer__free(rb_); }

int EventStream::fd() const { return ring_buffer__epoll_fd(rb_); }

int EventStream::on_sample(void* ctx, void* data, std::size_t size) {
    auto* self = static_cast<EventStream*>(ctx);
    if (size < sizeof(lg_event)) return 0;
    lg_event e;
    std::memcpy(&e, data, sizeof e);
    bool work = self->on_event_(e);
    // A consumer with other work (the watcher) takes a bounded batch: a
    // test retrying a refused act in a loop must not keep it here. A
    // repeat costs a lookup: up to kRepeatsPerEvent of them count as one.
    if (self->batch_ && (++self->seen_ >= self->batch_ * kRepeatsPerEvent ||
                         (work && ++self->taken_ >= self->batch_)))
        return kBatchFull;
    return 0;
}

void EventStream::poll_once(int timeout_ms) {
    if (timeout_ms != 0) {
        struct pollfd p = {fd(), POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) < 0 && errno != EINTR) throw_errno("cannot wait for events", errno);
    }
    // The ring buffer has one consumer position for every reader: two
    // readers consuming at once can both take the same records (and
    // journal them twice). Readers take turns.
    ::mkdir(paths::kStateDir, 0755);
    UniqueFd lock(::open(paths::kEventsLock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (lock)
        while (::flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {}
    taken_ = 0;
    seen_ = 0;
    int n = ring_buffer__consume(rb_);
    if (n < 0 && n != -EINTR && n != kBatchFull) throw_errno("cannot read the event ring buffer", -n);
    on_lost_(read_counters(counters_fd_)[LG_COUNTER_EVENTS_LOST]);
}

}  // namespace liveguard
