// Ring buffer to journal: each event with its details, each loss once.
#include "events/event_collector.h"

#include <cstdlib>
#include <fstream>
#include <memory>

#include "base/clock.h"
#include "base/paths.h"
#include "base/proc.h"
#include "events/event_details.h"
#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/event_stream.h"
#include "events/journal_record.h"
#include "kernel/pinned_maps.h"

namespace liveguard {

EventCollector::EventCollector(const PinnedMaps& maps, std::size_t batch) {
    std::int64_t offset = boot_to_realtime_offset_ns();
    auto cache = std::make_shared<DetailsCache>();
    stream_ = std::make_unique<EventStream>(
        maps.events.get(), maps.counters.get(),
        [offset, cache](const lg_event& e) {
            EventDetails d = gather_details(e, cache.get());
            journal_append(format_event_json(e, offset, &d));
        },
        [](std::uint64_t lost, std::uint64_t total) {
            journal_append(write_journal_record({JournalLoss{lost, total}}));
            std::ofstream(paths::kLostReported, std::ios::trunc) << total << "\n";
        });
    // Losses are journalled once, by whichever consumer sees them first.
    std::uint64_t reported = 0;
    if (auto t = read_small_file(paths::kLostReported, 64)) reported = std::strtoull(t->c_str(), nullptr, 10);
    stream_->set_lost_reported(reported);
    stream_->set_batch(batch);
}

EventCollector::~EventCollector() = default;

int EventCollector::fd() const { return stream_->fd(); }

void EventCollector::poll(int timeout_ms) { stream_->poll_once(timeout_ms); }

}  // namespace liveguard
