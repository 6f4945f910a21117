#include <gtest/gtest.h>

#include <variant>
#include <vector>

#include "cli/cli.h"

using namespace liveguard;

namespace {

ParseResult parse(std::vector<const char*> args) {
    args.insert(args.begin(), "liveguard-bpf");
    return parse_cli(static_cast<int>(args.size()), args.data());
}

// The options of the subcommand the arguments name; throws when they name
// another.
template <class Options>
Options options_of(std::vector<const char*> args) {
    return std::get<Options>(parse(std::move(args)).command->options);
}

}  // namespace

TEST(Cli, EverySubcommandParses) {
    for (const char* name : {"load", "unload", "status", "events", "doctor"}) {
        auto r = parse({name});
        ASSERT_TRUE(r.command) << name << ": " << r.err;
        EXPECT_EQ(r.command->name, name);
    }
}

TEST(Cli, ProtectTakesAPid) {
    auto r = parse({"protect", "--pid", "1234"});
    ASSERT_TRUE(r.command) << r.err;
    EXPECT_EQ(r.command->name, "protect");
    EXPECT_EQ(std::get<ProtectOptions>(r.command->options).pid, 1234);
}

TEST(Cli, BadPidIsAUsageError) {
    for (const char* bad : {"abc", "-5", "0", "12x", "", "99999999999"}) {
        auto r = parse({"unprotect", "--pid", bad});
        EXPECT_FALSE(r.command) << bad;
        EXPECT_EQ(r.exit_code, 2) << bad;
        EXPECT_FALSE(r.err.empty()) << bad;
    }
}

TEST(Cli, MissingPidIsAUsageError) {
    auto r = parse({"protect"});
    EXPECT_FALSE(r.command);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--pid"), std::string::npos);
}

TEST(Cli, UnknownSubcommandPrintsUsageAndExits2) {
    auto r = parse({"frobnicate"});
    EXPECT_FALSE(r.command);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("Usage"), std::string::npos);
}

TEST(Cli, NoSubcommandIsAUsageError) {
    auto r = parse({});
    EXPECT_FALSE(r.command);
    EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, HelpGoesToStdoutAndExits0) {
    auto r = parse({"--help"});
    EXPECT_FALSE(r.command);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("run"), std::string::npos);
    EXPECT_TRUE(r.err.empty());
}

TEST(Cli, SubcommandHelpDescribesIt) {
    auto r = parse({"run", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("--user"), std::string::npos);
}

TEST(Cli, TagTakesADirectory) {
    auto r = parse({"tag", "/sys/fs/cgroup/tests"});
    ASSERT_TRUE(r.command) << r.err;
    EXPECT_EQ(std::get<TagOptions>(r.command->options).cgroup_dir, "/sys/fs/cgroup/tests");
    EXPECT_EQ(parse({"untag"}).exit_code, 2);
}

TEST(Cli, RunKeepsCommandOptionsAfterDoubleDash) {
    auto r = parse({"run", "--user", "dev", "--", "pytest", "-x", "--maxfail=1", "tests/"});
    ASSERT_TRUE(r.command) << r.err;
    const auto& run = std::get<RunOptions>(r.command->options);
    EXPECT_EQ(run.user.value_or(""), "dev");
    std::vector<std::string> want{"pytest", "-x", "--maxfail=1", "tests/"};
    EXPECT_EQ(run.argv, want);
}

TEST(Cli, RunWithoutCommandIsAUsageError) {
    EXPECT_EQ(parse({"run"}).exit_code, 2);
    EXPECT_EQ(parse({"run", "--"}).exit_code, 2);
}

TEST(Cli, JsonFlags) {
    EXPECT_TRUE(options_of<StatusOptions>({"status", "--json"}).json);
    EXPECT_TRUE(options_of<EventsOptions>({"events", "--json"}).json);
    EXPECT_TRUE(options_of<DoctorOptions>({"doctor", "--json"}).json);
    EXPECT_FALSE(options_of<StatusOptions>({"status"}).json);
    EXPECT_EQ(parse({"load", "--json"}).exit_code, 2);
}

TEST(Cli, EventsLinesCountsEarlierEvents) {
    EXPECT_FALSE(options_of<EventsOptions>({"events"}).lines) << "unset: 10, or all since --since";
    EXPECT_EQ(options_of<EventsOptions>({"events", "-n", "5"}).lines, 5u);
    EXPECT_EQ(options_of<EventsOptions>({"events", "--lines", "0", "--no-follow"}).lines, 0u);
    EXPECT_EQ(options_of<EventsOptions>({"events", "--lines=250", "--since", "10m"}).lines, 250u);
}

TEST(Cli, EventsBadLinesIsAUsageErrorThatSaysWhatFits) {
    for (std::vector<const char*> args : {std::vector<const char*>{"events", "-n", "-1"},
                                          {"events", "--lines=-3"},
                                          {"events", "-n", "ten"},
                                          {"events", "-n", "1.5"},
                                          {"events", "--lines", ""},
                                          {"events", "-n", "99999999999"},
                                          {"events", "-n"}}) {
        std::string typed = args.back();
        auto r = parse(args);
        EXPECT_FALSE(r.command) << typed;
        EXPECT_EQ(r.exit_code, 2) << typed;
        EXPECT_NE(r.err.find("--lines"), std::string::npos) << typed << ": " << r.err;
    }
    auto r = parse({"events", "-n", "ten"});
    EXPECT_NE(r.err.find("'ten' is not a count of events"), std::string::npos) << r.err;
}

TEST(Cli, VerboseAnywhere) {
    EXPECT_TRUE(parse({"-v", "load"}).command->verbose);
    EXPECT_TRUE(parse({"load", "--verbose"}).command->verbose);
}
