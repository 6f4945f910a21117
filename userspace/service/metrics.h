#pragma once
// The guard's counters for the monitoring a team already runs: the
// Prometheus text exposition format (OpenMetrics names: counters end in
// _total; # HELP and # TYPE before each family; one sample per labelled
// series), printed by `liveguard-bpf metrics` and kept by the watcher in
// node_exporter's textfile-collector directory.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kernel/counters.h"
#include "kernel/programs.h"

namespace liveguard {

struct MetricsSnapshot {
    bool loaded = false;  // when false, nothing below was read
    Attach attach = Attach::Lsm;
    CounterValues counters{};
    std::map<std::string, std::uint64_t> skipped;  // per program
    std::size_t protected_processes = 0;
    std::size_t protected_cgroups = 0;
    std::map<std::string, std::size_t> sessions;  // per kind: cgroup, auto, run, overflow
    bool watcher_running = false;
};

// Read from the pinned maps; `watcher_running` as the caller knows it.
MetricsSnapshot gather_metrics(bool watcher_running);

std::string format_metrics(const MetricsSnapshot& m);

// A label value as the text format quotes it (backslash, double quote
// and newline escaped).
std::string metrics_label_value(std::string_view v);

// The file node_exporter's textfile collector reads in `dir`.
std::string metrics_textfile_path(const std::string& dir);

// Writes `text` there atomically: a temporary name the collector skips
// (not *.prom), then a rename, so a scrape never reads half a file.
// False when `dir` does not exist (no collector here); throws on another
// failure.
bool write_metrics_textfile(const std::string& dir, const std::string& text);

}  // namespace liveguard
