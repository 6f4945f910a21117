// Ring buffer to journal: each event with its details, each loss once.
#include "events/event_collector.h"

#include <bpf/bpf.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "base/clock.h"
#include "base/paths.h"
#include "base/proc.h"
#include "events/event_coalescer.h"
#include "events/event_details.h"
#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/event_stream.h"
#include "events/journald_sink.h"
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

struct EventCollector::State {
    std::int64_t offset = 0;
    DetailsCache cache;
    EventCoalescer coalescer;
    std::string lines;  // journalled once per poll: one write for a batch

    void journal_repeats(bool all) {
        // The session's name as its first event was gathered with: the
        // cache keeps the info after the session ends and its file goes.
        for (const Repeats& r : coalescer.close(boottime_now_ns(), all)) {
            auto info = cache.session_info(r.first.session_cgroup_id);
            lines += format_repeats_json(r.first, r.count, r.last_boot_ns, offset, info ? info->name : "") + "\n";
        }
        write_lines();
    }
    // A failed append keeps the lines for the next attempt, up to a bound:
    // a journal that stays unwritable must not take the consumer's memory.
    void write_lines() {
        if (lines.empty()) return;
        if (lines.size() > (16u << 20)) {
            lines.clear();
            return;
        }
        std::string_view all = std::string_view(lines).substr(0, lines.size() - 1);
        journal_append(all);
        std::vector<std::string_view> each;
        for (std::size_t start = 0; start <= all.size();) {
            std::size_t nl = all.find('\n', start);
            if (nl == std::string_view::npos) nl = all.size();
            each.push_back(all.substr(start, nl - start));
            start = nl + 1;
        }
        send_to_journald(each);
        lines.clear();
    }
};

EventCollector::EventCollector(const PinnedMaps& maps, std::size_t batch)
    : EventCollector(maps.events.get(), maps.counters.get(), batch) {}

EventCollector::EventCollector(int events_fd, int counters_fd, std::size_t batch)
    : state_(std::make_shared<State>()) {
    state_->offset = boot_to_realtime_offset_ns();
    std::uint32_t id = map_id(counters_fd);
    std::weak_ptr<State> weak = state_;
    stream_ = std::make_unique<EventStream>(
        events_fd, counters_fd,
        [weak](const lg_event& e) {
            auto st = weak.lock();
            if (!st || st->coalescer.absorb(e)) return false;
            EventDetails d = gather_details(e, &st->cache);
            st->lines += format_event_json(e, st->offset, &d) + "\n";
            return true;
        },
        [id, weak](std::uint64_t total) {
            // The batch's events before the loss line that may follow them.
            if (auto st = weak.lock()) st->write_lines();
            std::uint64_t reported = lost_reported(id);
            if (total <= reported) return;
            JournalRecord loss{JournalLoss{total - reported, total}};
            journal_append(write_journal_record(loss));
            send_to_journald(loss);
            std::ofstream(paths::kLostReported, std::ios::trunc) << id << " " << total << "\n";
        });
    stream_->set_batch(batch);
}

EventCollector::~EventCollector() {
    try {
        flush();
    } catch (const std::exception&) {
        // nowhere left to journal them
    }
}

int EventCollector::fd() const { return stream_->fd(); }

void EventCollector::poll(int timeout_ms) {
    // Seconds that are over are closed whatever the read did, so that a
    // loop waking for them is not woken again at once.
    try {
        stream_->poll_once(timeout_ms);
    } catch (...) {
        state_->journal_repeats(false);
        throw;
    }
    state_->write_lines();
    state_->journal_repeats(false);
}

void EventCollector::flush() { state_->journal_repeats(true); }

int EventCollector::wakeup_ms() const { return state_->coalescer.next_close_ms(boottime_now_ns()); }

std::uint64_t EventCollector::coalesced() const { return state_->coalescer.coalesced(); }

}  // namespace liveguard
