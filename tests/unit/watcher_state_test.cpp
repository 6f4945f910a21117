// The watcher's state as `status` reads it: each instance a glob target
// matched, in the JSON and in the text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/status_report.h"
#include "policy/resolver.h"
#include "temp_dir.h"
#include "watcher/watcher_state.h"

using namespace liveguard;
namespace fs = std::filesystem;

namespace {

const char* kState = R"({"pid":42,"config":"/etc/liveguard/liveguard.toml","targets":[)"
                     R"({"source":1,"kind":"s6","pattern":"/run/service/gateway-*","line":3,)"
                     R"("instances":["/run/service/gateway-default","/run/service/gateway-work"],)"
                     R"("pids":[100,200],"cgroups":[],"description":"s6 \"/run/service/gateway-*\""},)"
                     R"({"source":2,"kind":"pidfile","pattern":"/home/*/.hermes/gateway.pid","line":6,)"
                     R"("instances":[],"pids":[],"cgroups":[],)"
                     R"("description":"pidfile \"/home/*/.hermes/gateway.pid\""},)"
                     R"({"source":3,"kind":"pidfile","pattern":"/run/gw.pid","line":9,)"
                     R"("instances":["/run/gw.pid"],"pids":[300],"cgroups":[],)"
                     R"("description":"pidfile \"/run/gw.pid\""}],)"
                     R"("warnings":[],"watched_dirs":4,"passes":7})";

}  // namespace

TEST(WatcherState, KeepsWhatEachGlobMatched) {
    auto s = parse_watcher_state(kState);
    ASSERT_TRUE(s);
    ASSERT_EQ(s->targets.size(), 3u);
    EXPECT_EQ(s->targets[0].instances,
              (std::vector<std::string>{"/run/service/gateway-default", "/run/service/gateway-work"}));
    EXPECT_TRUE(s->targets[1].instances.empty());
    EXPECT_EQ(s->targets[0].pids, (std::vector<pid_t>{100, 200}));
}

TEST(WatcherState, AStateFromBeforeInstancesStillParses) {
    std::string old = kState;
    for (std::size_t at; (at = old.find(R"("instances":)")) != std::string::npos;)
        old.erase(at, old.find(']', at) + 2 - at);
    auto s = parse_watcher_state(old);
    ASSERT_TRUE(s) << old;
    EXPECT_EQ(s->targets.size(), 3u);
    EXPECT_TRUE(s->targets[0].instances.empty());
}

TEST(WatcherState, StatusNamesEachInstanceOfAGlob) {
    StatusReport r;
    r.loaded = true;
    r.watcher = 42;
    r.watcher_json = kState;
    r.watcher_state = parse_watcher_state(kState);
    std::string text = format_status_text(r);
    EXPECT_NE(text.find("matched: /run/service/gateway-default\n"), std::string::npos) << text;
    EXPECT_NE(text.find("matched: /run/service/gateway-work\n"), std::string::npos) << text;
    EXPECT_NE(text.find("matches nothing yet"), std::string::npos) << text;
    // A target without a glob is its own instance: not repeated.
    EXPECT_EQ(text.find("matched: /run/gw.pid"), std::string::npos) << text;
    std::string json = format_status_json(r);
    EXPECT_NE(json.find(R"("instances":["/run/service/gateway-default","/run/service/gateway-work"])"),
              std::string::npos)
        << json;
}

TEST(WatcherState, AGlobResolvesToEachMatchingPidFileAndServiceDirectory) {
    TempDir tmp;
    for (const char* name : {"gateway-default", "gateway-work"}) {
        fs::create_directories(tmp.path + "/service/" + std::string(name));
        std::ofstream(tmp.path + "/" + name + ".pid") << "999999999\n";
    }
    fs::create_directories(tmp.path + "/service/other");
    // What the glob `pattern` of a `kind` target matched.
    auto matched = [](TargetKind kind, const std::string& pattern) {
        ProtectTarget t;
        t.kind = kind;
        t.pattern = pattern;
        t.source = 1;
        return resolve(t, "/sys/fs/cgroup").instances;
    };
    EXPECT_EQ(matched(TargetKind::S6, tmp.path + "/service/gateway-*"),
              (std::vector<std::string>{tmp.path + "/service/gateway-default", tmp.path + "/service/gateway-work"}));
    EXPECT_EQ(matched(TargetKind::PidFile, tmp.path + "/gateway-*.pid"),
              (std::vector<std::string>{tmp.path + "/gateway-default.pid", tmp.path + "/gateway-work.pid"}));
}
