// The watcher's files under /run/liveguard: their formats, written and
// parsed here only.
#include "watcher/watcher_state.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <fstream>

#include "base/json.h"
#include "base/paths.h"
#include "base/proc.h"

namespace liveguard {
namespace {

void write_atomically(const std::string& path, const std::string& text) {
    std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::trunc);
        f << text;
        if (!f) return;
    }
    ::rename(tmp.c_str(), path.c_str());
}

std::string read_start_ticks(pid_t pid) {
    auto st = read_proc_stat(pid);
    return st ? std::to_string(st->start_ticks) : "";
}

template <class T>
bool parse_number(const std::string& text, T& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

std::string comma_list(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ",") + item;
    return out.empty() ? "-" : out;
}

std::string target_json(const WatcherTarget& t) {
    json::ArrayWriter instances, pids, ns_pids, cgroups;
    for (const auto& i : t.instances) instances.str(i);
    for (pid_t p : t.pids) pids.num(p);
    for (pid_t p : t.ns_pids) ns_pids.num(p);
    for (const auto& c : t.cgroups) cgroups.str(c);
    return json::ObjectWriter()
        .num("source", t.source)
        .str("kind", t.kind)
        .str("pattern", t.pattern)
        .num("line", t.line)
        .raw("instances", instances.done())
        .raw("pids", pids.done())
        .raw("ns_pids", ns_pids.done())
        .raw("cgroups", cgroups.done())
        .str("description", t.description)
        .done();
}

// Each element of a JSON array through `parse_one`; false when the array
// or any element does not parse.
template <class T, class Parse>
bool parse_elements(const std::string& array, std::vector<T>& out, Parse parse_one) {
    auto items = json::parse_array(array);
    if (!items) return false;
    for (const auto& item : *items)
        if (!parse_one(item, out.emplace_back())) return false;
    return true;
}

bool copy_string(const std::string& text, std::string& out) {
    out = text;
    return true;
}

bool parse_target(const std::string& text, WatcherTarget& t) {
    auto obj = json::parse_object(text);
    if (!obj) return false;
    t.kind = (*obj)["kind"];
    t.pattern = (*obj)["pattern"];
    t.description = (*obj)["description"];
    // A state written before instances were recorded has none.
    const std::string& instances = (*obj)["instances"];
    const std::string& ns_pids = (*obj)["ns_pids"];
    return parse_number((*obj)["source"], t.source) && parse_number((*obj)["line"], t.line) &&
           (instances.empty() || parse_elements(instances, t.instances, copy_string)) &&
           parse_elements((*obj)["pids"], t.pids, parse_number<pid_t>) &&
           (ns_pids.empty() || parse_elements(ns_pids, t.ns_pids, parse_number<pid_t>)) &&
           (t.ns_pids.empty() || t.ns_pids.size() == t.pids.size()) &&
           parse_elements((*obj)["cgroups"], t.cgroups, copy_string);
}

}  // namespace

void write_watcher_pid_file(pid_t pid) {
    write_atomically(paths::kWatcherPid, std::to_string(pid) + " " + read_start_ticks(pid) + "\n");
}

void write_watcher_state(const WatcherState& state) {
    json::ArrayWriter targets, warnings;
    std::string table;
    for (const auto& t : state.targets) {
        targets.raw(target_json(t));
        auto row = watcher_target_row(t);
        table += row[0] + "\t" + row[1] + "\t" + row[2] + "\t" + row[3] + "\n";
    }
    for (const auto& w : state.warnings) warnings.str(w);
    write_atomically(paths::kWatcherState, json::ObjectWriter()
                                               .num("pid", state.pid)
                                               .str("config", state.config)
                                               .raw("targets", targets.done())
                                               .raw("warnings", warnings.done())
                                               .unum("watched_dirs", state.watched_dirs)
                                               .unum("passes", state.passes)
                                               .done() +
                                               "\n");
    write_atomically(paths::kWatcherTargets, table);
}

void write_reload_outcome(const ReloadOutcome& o) {
    write_atomically(paths::kWatcherReload, json::ObjectWriter()
                                                .num("pid", o.pid)
                                                .unum("count", o.count)
                                                .unum("taken_ns", o.taken_ns)
                                                .boolean("applied", o.applied)
                                                .str("error", o.error)
                                                .done() +
                                                "\n");
}

std::optional<ReloadOutcome> read_reload_outcome() {
    auto text = read_small_file(paths::kWatcherReload, 8192);
    if (!text) return std::nullopt;
    auto m = json::parse_object(*text);
    if (!m || !m->count("pid") || !m->count("count") || !m->count("applied")) return std::nullopt;
    ReloadOutcome o;
    if (!parse_number((*m)["pid"], o.pid) || !parse_number((*m)["count"], o.count) ||
        !parse_number((*m)["taken_ns"], o.taken_ns))
        return std::nullopt;
    o.applied = (*m)["applied"] == "true";
    o.error = (*m)["error"];
    return o;
}

void remove_watcher_files() {
    ::unlink(paths::kWatcherReload);
    ::unlink(paths::kWatcherPid);
    ::unlink(paths::kWatcherState);
    ::unlink(paths::kWatcherTargets);
}

std::optional<pid_t> read_running_watcher_pid() {
    auto text = read_small_file(paths::kWatcherPid, 128);
    if (!text) return std::nullopt;
    auto space = text->find(' ');
    auto pid = parse_pid(text->substr(0, space));
    if (!pid || space == std::string::npos) return std::nullopt;
    std::string ticks = text->substr(space + 1);
    while (!ticks.empty() && ticks.back() == '\n') ticks.pop_back();
    if (read_start_ticks(*pid) != ticks) return std::nullopt;  // stale file, reused PID
    return pid;
}

std::optional<std::string> read_watcher_state_json() {
    auto text = read_small_file(paths::kWatcherState);
    if (!text) return std::nullopt;
    while (!text->empty() && text->back() == '\n') text->pop_back();
    if (text->empty()) return std::nullopt;
    return text;
}

std::optional<WatcherState> parse_watcher_state(std::string_view json) {
    auto obj = json::parse_object(json);
    if (!obj) return std::nullopt;
    WatcherState s;
    s.config = (*obj)["config"];
    if (!parse_number((*obj)["pid"], s.pid) || !parse_number((*obj)["watched_dirs"], s.watched_dirs) ||
        !parse_elements((*obj)["targets"], s.targets, parse_target) ||
        !parse_elements((*obj)["warnings"], s.warnings, copy_string))
        return std::nullopt;
    // Absent from a state an older watcher wrote.
    if (!(*obj)["passes"].empty() && !parse_number((*obj)["passes"], s.passes)) return std::nullopt;
    return s;
}

std::optional<WatcherState> read_watcher_state() {
    auto text = read_watcher_state_json();
    return text ? parse_watcher_state(*text) : std::nullopt;
}

std::array<std::string, 4> watcher_target_row(const WatcherTarget& t) {
    std::vector<std::string> pids(t.pids.size());
    for (std::size_t i = 0; i < pids.size(); ++i) {
        pids[i] = std::to_string(t.pids[i]);
        if (i < t.ns_pids.size() && t.ns_pids[i] > 0)
            pids[i] += " (" + std::to_string(t.ns_pids[i]) + " in its namespace)";
    }
    return {"#" + std::to_string(t.source), t.description, comma_list(pids), comma_list(t.cgroups)};
}

}  // namespace liveguard
