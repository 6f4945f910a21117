// `events`: the journal's last events, then the journal printed as it
// grows, collecting from the ring buffer meanwhile, until interrupted.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "base/clock.h"
#include "base/error.h"
#include "base/paths.h"
#include "base/privileges.h"
#include "cli/commands.h"
#include "events/event_collector.h"
#include "events/event_format.h"
#include "events/event_journal.h"
#include "events/journal_tail.h"
#include "events/session_info.h"
#include "kernel/pinned_maps.h"

namespace liveguard {
namespace {

// As tail and journalctl show.
constexpr std::size_t kDefaultLines = 10;

std::atomic<bool> g_stop{false};

void request_stop(int) { g_stop.store(true); }

// "--since" as the ISO 8601 form events carry, which orders as text.
std::string since_as_iso(const std::string& since) {
    if (since.size() >= 2 && std::isdigit(static_cast<unsigned char>(since[0])) &&
        since.find('T') == std::string::npos) {
        char unit = since.back();
        std::uint64_t n = std::strtoull(since.c_str(), nullptr, 10);
        std::uint64_t mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : 0;
        if (mult && since.find_first_not_of("0123456789") == since.size() - 1) {
            std::uint64_t now = realtime_now_ns();
            std::uint64_t back = n * mult * 1000000000ull;
            return format_utc(back < now ? now - back : 0);
        }
    }
    if (since.size() >= 20 && since[4] == '-' && since[10] == 'T' && since.back() == 'Z') return since;
    throw Error("--since " + since + ": not a time",
                "give an ISO 8601 UTC time (2026-11-30T17:00:00Z) or an age (30s, 10m, 2h, 1d)", 2);
}

}  // namespace

int run_command(const EventsOptions& o) {
    require_root("events");
    std::optional<std::string> since;
    if (o.since) since = since_as_iso(*o.since);
    PinnedMaps maps = PinnedMaps::open();
    bool colour = !o.json && ::isatty(STDOUT_FILENO);
    JournalFilter filter{since, o.session, {}};
    // Events journalled before their session had a name match it by the
    // name its info gives (a process session's is "pytest[12345]").
    std::map<std::uint64_t, std::string> names;
    if (o.session)
        filter.session_name = [&names](std::uint64_t id) -> std::string {
            if (auto it = names.find(id); it != names.end()) return it->second;
            auto info = read_session_info(id);
            if (!info || info->name.empty()) return "";  // not yet, or gone: ask again next time
            if (names.size() > 4096) names.clear();
            return names[id] = info->name;
        };
    // Journal lines are the output: lines other consumers (a `run` ending)
    // wrote are shown as well as the ones this one collects. The earlier
    // ones are found before collecting, so what the ring buffer still held
    // is printed after them, as new. They are counted as printed, after
    // the filter: -n 5 --session ci is ci's last 5.
    auto shown = [&](std::string_view line) {
        return render_journal_line(line, filter, o.json, colour).has_value();
    };
    JournalReader reader =
        since && !o.lines
            ? JournalReader(true)
            : JournalReader(read_journal_tail(paths::kJournal, o.lines.value_or(kDefaultLines), shown));
    EventCollector collector(maps);
    buffer_by_batch(stdout);
    auto show = [&] { print_new_journal_lines(reader, filter, o.json, colour, stdout); };
    struct sigaction sa {};
    sa.sa_handler = request_stop;
    // Also a closed terminal and a reader that went away (`events | head`):
    // the counts of repeats still open are journalled before exiting.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::sigaction(sig, &sa, nullptr);
    // Following, the earlier events show at once, not a poll later.
    if (!o.no_follow) {
        show();
        while (!g_stop.load()) {
            collector.poll(200);
            show();
        }
    }
    collector.poll(0);
    collector.flush();
    show();
    return 0;
}

}  // namespace liveguard
