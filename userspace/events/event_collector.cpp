// Ring buffer to journal: each event with its details, each loss once.
#include "events/event_collector.h"

#include <bpf/bpf.h>

#include <cstdio>
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

namespace {

// The pinned counters map's id: the loss count restarts with every load,
// and a mark of what was reported belongs to the load it counted.
std::uint32_t map_id(int fd) {
    struct bpf_map_info info {};
    std::uint32_t len = sizeof info;
    return bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0;
}

// Losses are journalled once, by whichever consumer sees them first: the
// count reported so far is kept in a file, as "<map id> <count>", read and
// written only by the reader whose turn it is.
std::uint64_t lost_reported(std::uint32_t id) {
    auto text = read_small_file(paths::kLostReported, 64);
    if (!text) return 0;
    unsigned long long file_id = 0, count = 0;
    if (std::sscanf(text->c_str(), "%llu %llu", &file_id, &count) != 2 || file_id != id) return 0;
    return count;
}

}  // namespace

EventCollector::EventCollector(const PinnedMaps& maps, std::size_t batch) {
    std::int64_t offset = boot_to_realtime_offset_ns();
    auto cache = std::make_shared<DetailsCache>();
    std::uint32_t id = map_id(maps.counters.get());
    stream_ = std::make_unique<EventStream>(
        maps.events.get(), maps.counters.get(),
        [offset, cache](const lg_event& e) {
            EventDetails d = gather_details(e, cache.get());
            journal_append(format_event_json(e, offset, &d));
        },
        [id](std::uint64_t total) {
            std::uint64_t reported = lost_reported(id);
            if (total <= reported) return;
            journal_append(write_journal_record({JournalLoss{total - reported, total}}));
            std::ofstream(paths::kLostReported, std::ios::trunc) << id << " " << total << "\n";
        });
    stream_->set_batch(batch);
}

EventCollector::~EventCollector() = default;

int EventCollector::fd() const { return stream_->fd(); }

void EventCollector::poll(int timeout_ms) { stream_->poll_once(timeout_ms); }

}  // namespace liveguard
