// The Prometheus text `metrics` prints and the watcher keeps for
// node_exporter: names, headers, escaping, one sample per series.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "events/event_format.h"
#include "service/metrics.h"

using namespace liveguard;

namespace {

struct Parsed {
    std::map<std::string, std::string> type;  // family -> type
    std::map<std::string, std::string> help;
    std::map<std::string, std::uint64_t> samples;  // "name{labels}" -> value
    std::vector<std::string> problems;
};

// A reader as strict as the format: every sample after its family's
// # HELP and # TYPE, every series once.
Parsed parse(const std::string& text) {
    Parsed p;
    static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? ([0-9]+)$)");
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("# HELP ", 0) == 0) {
            auto name = line.substr(7, line.find(' ', 7) - 7);
            if (p.help.count(name)) p.problems.push_back("second HELP for " + name);
            p.help[name] = line.substr(8 + name.size());
        } else if (line.rfind("# TYPE ", 0) == 0) {
            auto name = line.substr(7, line.find(' ', 7) - 7);
            if (!p.help.count(name)) p.problems.push_back("TYPE before HELP for " + name);
            p.type[name] = line.substr(8 + name.size());
        } else {
            std::smatch m;
            if (!std::regex_match(line, m, sample)) {
                p.problems.push_back("not a sample: " + line);
                continue;
            }
            std::string name = m[1];
            if (!p.type.count(name)) p.problems.push_back("sample before TYPE: " + line);
            std::string series = line.substr(0, line.rfind(' '));
            if (p.samples.count(series)) p.problems.push_back("series twice: " + series);
            p.samples[series] = std::stoull(line.substr(line.rfind(' ') + 1));
        }
    }
    return p;
}

MetricsSnapshot loaded_snapshot() {
    MetricsSnapshot m;
    m.loaded = true;
    m.attach = Attach::FmodRet;
    m.watcher_running = true;
    m.counters[LG_COUNTER_DENIED + LG_HOOK_TASK_KILL] = 7;
    m.counters[LG_COUNTER_EVENTS_LOST] = 3;
    m.counters[LG_COUNTER_PROTECTED_PIDS_FULL] = 2;
    m.skipped = {{"lg_task_kill", 1}, {"lg_file_open", 0}};
    m.protected_processes = 4;
    m.protected_cgroups = 1;
    m.sessions = {{"auto", 2}, {"run", 1}};
    return m;
}

}  // namespace

TEST(Metrics, EveryFamilyHasHelpAndTypeAndEverySeriesIsOneSample) {
    auto p = parse(format_metrics(loaded_snapshot()));
    EXPECT_TRUE(p.problems.empty()) << ::testing::PrintToString(p.problems);
    for (const auto& [name, type] : p.type) {
        // OpenMetrics: a counter's samples end in _total, a gauge's do not.
        bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
        EXPECT_EQ(type == "counter", total) << name << " " << type;
        EXPECT_TRUE(type == "counter" || type == "gauge") << name << " " << type;
        EXPECT_EQ(name.rfind("liveguard_", 0), 0u) << name;
    }
}

TEST(Metrics, RefusalsHaveOneSeriesPerDoorLabelledWithTheAttachForm) {
    auto p = parse(format_metrics(loaded_snapshot()));
    std::size_t doors = 0;
    for (const auto& [series, v] : p.samples)
        if (series.rfind("liveguard_refusals_total{", 0) == 0) {
            ++doors;
            EXPECT_NE(series.find(",attach=\"fmod_ret\"}"), std::string::npos) << series;
        }
    EXPECT_EQ(doors, static_cast<std::size_t>(LG_HOOK_COUNT));
    std::string kill = std::string("liveguard_refusals_total{door=\"") + hook_name(LG_HOOK_TASK_KILL) +
                       "\",attach=\"fmod_ret\"}";
    ASSERT_TRUE(p.samples.count(kill)) << kill;
    EXPECT_EQ(p.samples[kill], 7u);
    EXPECT_EQ(p.samples["liveguard_events_lost_total"], 3u);
    EXPECT_EQ(p.samples["liveguard_kernel_problems_total{problem=\"protected_pids_full\"}"], 2u);
    EXPECT_EQ(p.samples["liveguard_skipped_runs_total{program=\"lg_task_kill\"}"], 1u);
    EXPECT_EQ(p.samples["liveguard_protected_processes"], 4u);
    EXPECT_EQ(p.samples["liveguard_sessions{kind=\"auto\"}"], 2u);
    EXPECT_EQ(p.samples["liveguard_sessions{kind=\"cgroup\"}"], 0u);
    EXPECT_EQ(p.samples["liveguard_loaded{attach=\"fmod_ret\"}"], 1u);
    EXPECT_EQ(p.samples["liveguard_loaded{attach=\"lsm\"}"], 0u);
    EXPECT_EQ(p.samples["liveguard_watcher_up"], 1u);
}

TEST(Metrics, NotLoadedSaysSoAndNothingElse) {
    MetricsSnapshot m;
    auto p = parse(format_metrics(m));
    EXPECT_TRUE(p.problems.empty()) << ::testing::PrintToString(p.problems);
    EXPECT_EQ(p.samples.size(), 4u);  // loaded per form, watcher_up
    EXPECT_EQ(p.samples["liveguard_loaded{attach=\"lsm\"}"], 0u);
    EXPECT_EQ(p.samples["liveguard_watcher_up"], 0u);
}

TEST(Metrics, LabelValuesAreEscaped) {
    EXPECT_EQ(metrics_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    MetricsSnapshot m = loaded_snapshot();
    m.skipped = {{"odd\"name\\\n", 5}};
    auto p = parse(format_metrics(m));
    EXPECT_TRUE(p.problems.empty()) << ::testing::PrintToString(p.problems);
    EXPECT_EQ(p.samples["liveguard_skipped_runs_total{program=\"odd\\\"name\\\\\\n\"}"], 5u);
}

TEST(Metrics, TheTextfileIsReplacedWholeAndOnlyWhereTheDirectoryExists) {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("lg-metrics-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    EXPECT_FALSE(write_metrics_textfile(dir.string(), "x 1\n"));
    EXPECT_FALSE(fs::exists(dir));
    fs::create_directories(dir);
    ASSERT_TRUE(write_metrics_textfile(dir.string(), "liveguard_watcher_up 1\n"));
    ASSERT_TRUE(write_metrics_textfile(dir.string(), "liveguard_watcher_up 0\n"));
    std::ifstream f(metrics_textfile_path(dir.string()));
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(ss.str(), "liveguard_watcher_up 0\n");
    // Nothing but the file the collector reads is left.
    std::size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        ++files;
        EXPECT_EQ(e.path().extension(), ".prom") << e.path();
    }
    EXPECT_EQ(files, 1u);
    fs::remove_all(dir);
}

