// The watcher's files under /run/liveguard: their formats, written and
// parsed here only.
#include "watcher/watcher_state.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "base/json.h"
#include "base/json_members.h"
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

bool parse_target(const nlohmann::json& obj, WatcherTarget& t) {
    json::Members m(obj);
    // A state written before instances and namespace pids were recorded
    // has none; the rest every watcher has written.
    for (const char* key : {"source", "line", "pids", "cgroups"})
        if (!m.has(key)) return false;
    t.kind = m.text("kind");
    t.pattern = m.text("pattern");
    t.description = m.text("description");
    t.source = m.number<std::uint32_t>("source");
    t.line = m.number<int>("line");
    t.instances = m.strings("instances");
    t.pids = m.numbers<pid_t>("pids");
    t.ns_pids = m.numbers<pid_t>("ns_pids");
    t.cgroups = m.strings("cgroups");
    return m.ok() && (t.ns_pids.empty() || t.ns_pids.size() == t.pids.size());
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
    auto obj = json::parse(*text);
    if (!obj) return std::nullopt;
    json::Members m(*obj);
    for (const char* key : {"pid", "count", "applied", "taken_ns"})
        if (!m.has(key)) return std::nullopt;
    ReloadOutcome o;
    o.pid = m.number<pid_t>("pid");
    o.count = m.number<std::uint64_t>("count");
    o.taken_ns = m.number<std::uint64_t>("taken_ns");
    o.applied = m.flag("applied");
    o.error = m.text("error");
    if (!m.ok()) return std::nullopt;
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
    auto obj = json::parse(json);
    if (!obj) return std::nullopt;
    json::Members m(*obj);
    // passes is absent from a state an older watcher wrote.
    for (const char* key : {"pid", "watched_dirs", "targets", "warnings"})
        if (!m.has(key)) return std::nullopt;
    WatcherState s;
    s.config = m.text("config");
    s.pid = m.number<pid_t>("pid");
    s.watched_dirs = m.number<std::size_t>("watched_dirs");
    s.passes = m.number<std::uint64_t>("passes");
    s.warnings = m.strings("warnings");
    if (const auto* targets = m.array("targets"))
        for (const auto& t : *targets)
            if (!parse_target(t, s.targets.emplace_back())) return std::nullopt;
    if (!m.ok()) return std::nullopt;
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
