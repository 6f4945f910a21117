// The man page, the bash completion and --help name the same subcommands,
// and each subcommand the same options: a flag added to the grammar
// without its page entry or completion (or the reverse) fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

using namespace liveguard;

namespace {

std::string help_of(std::vector<const char*> args) {
    args.insert(args.begin(), "liveguard-bpf");
    args.push_back("--help");
    return parse_cli(static_cast<int>(args.size()), args.data()).out;
}

// The options a help text lists, one per line ("  -v,--verbose ...",
// "  --json ..."), not those its descriptions mention.
std::set<std::string> options_in_help(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    std::string line;
    static const std::regex option(R"(^  (?:-[a-zA-Z],)?(--[a-z][a-z-]*)\b.*)");
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, option)) out.insert(m[1]);
    }
    out.erase("--help");
    return out;
}

// The options a man page entry gives a paragraph of their own: the tag
// line after a .TP (".B --json", ".BI --config \" FILE\"", ".BR -v \", \" --verbose").
std::set<std::string> options_in_page(const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    std::string line;
    bool after_tp = false;
    static const std::regex tag(R"(^\.B[IR]? (?:-[a-zA-Z] ", " )?(--[a-z][a-z-]*)\b.*)");
    while (std::getline(in, line)) {
        std::smatch m;
        if (after_tp && std::regex_match(line, m, tag)) out.insert(m[1]);
        after_tp = line == ".TP";
    }
    out.erase("--help");
    return out;
}

// The subcommands the top-level help lists, in its order.
std::vector<std::string> subcommands_in_help() {
    std::istringstream in(help_of({}));
    std::vector<std::string> out;
    std::string line;
    bool listing = false;
    while (std::getline(in, line)) {
        if (line == "Subcommands:") listing = true;
        else if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ')
            out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
    return out;
}

// The man page with roff's escaped hyphens plain.
std::string man_page() {
    std::ifstream in(LIVEGUARD_SOURCE_DIR "/dist/man/liveguard-bpf.8");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    for (std::size_t at; (at = s.find("\\-")) != std::string::npos;) s.replace(at, 2, "-");
    return s;
}

// The text of one section (.SH NAME up to the next .SH).
std::string section(const std::string& page, const std::string& name) {
    auto at = page.find("\n.SH " + name + "\n");
    if (at == std::string::npos) return {};
    at += 5 + name.size() + 1;
    return page.substr(at, page.find("\n.SH ", at) - at);
}

// COMMANDS entries: each is a ".TP" at the top level (outside .RS/.RE,
// where the options are) whose tag line is ".B <subcommand> ...".
std::map<std::string, std::string> command_entries(const std::string& commands) {
    std::map<std::string, std::string> out;
    std::istringstream in(commands);
    std::string line, current;
    static const std::regex head(R"(^\.B ([a-z][a-z-]*)( .*)?$)");
    int depth = 0;
    bool after_tp = false;
    while (std::getline(in, line)) {
        std::smatch m;
        if (line == ".RS") ++depth;
        if (line == ".RE") --depth;
        if (depth == 0 && after_tp && std::regex_match(line, m, head)) current = m[1];
        after_tp = line == ".TP";
        if (!current.empty()) out[current] += line + "\n";
    }
    return out;
}

}  // namespace

TEST(ManPage, ListsEverySubcommandOfHelpAndNoOther) {
    std::string page = man_page();
    ASSERT_FALSE(page.empty()) << "dist/man/liveguard-bpf.8 is missing";
    auto entries = command_entries(section(page, "COMMANDS"));
    auto help = subcommands_in_help();
    ASSERT_GE(help.size(), 10u) << help_of({});
    std::set<std::string> from_help(help.begin(), help.end()), from_page;
    for (const auto& [name, text] : entries) from_page.insert(name);
    EXPECT_EQ(from_page, from_help);
}

TEST(ManPage, GivesEachSubcommandTheOptionsItsHelpLists) {
    std::string page = man_page();
    auto entries = command_entries(section(page, "COMMANDS"));
    for (const std::string& name : subcommands_in_help()) {
        SCOPED_TRACE(name);
        std::string help = help_of({name.c_str()});
        ASSERT_NE(help.find("Usage:"), std::string::npos) << help;
        EXPECT_EQ(options_in_page(entries[name]), options_in_help(help)) << "man page entry:\n" << entries[name] << "help:\n" << help;
    }
}

TEST(ManPage, GivesTheGlobalOptions) {
    std::string options = section(man_page(), "OPTIONS");
    std::string help = help_of({});
    EXPECT_EQ(options_in_page(options), options_in_help(help.substr(0, help.find("Subcommands:"))));
    EXPECT_EQ(options_in_page(options), std::set<std::string>{"--verbose"});
}

TEST(ManPage, HasTheSectionsAnAdministratorLooksFor) {
    std::string page = man_page();
    for (const char* s : {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "POLICY FILE", "EXIT STATUS",
                          "FILES", "KERNELS", "SEE ALSO"})
        EXPECT_FALSE(section(page, s).empty()) << s;
}

namespace {

std::string completion_script() {
    std::ifstream in(LIVEGUARD_SOURCE_DIR "/dist/bash-completion/liveguard-bpf");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::set<std::string> words(const std::string& list) {
    std::set<std::string> out;
    std::istringstream in(list);
    for (std::string w; in >> w;) out.insert(w);
    return out;
}

}  // namespace

TEST(BashCompletion, OffersEverySubcommandOfHelp) {
    std::string script = completion_script();
    std::smatch m;
    ASSERT_TRUE(std::regex_search(script, m, std::regex(R"re(local subcommands="([^"]*)")re"))) << "no subcommand list";
    auto help = subcommands_in_help();
    EXPECT_EQ(words(m[1]), std::set<std::string>(help.begin(), help.end()));
}

TEST(BashCompletion, OffersEachSubcommandTheOptionsItsHelpLists) {
    std::string script = completion_script();
    // `    load) opts="--config ..." ;;` or `    protect | unprotect) opts="--pid" ;;`
    std::map<std::string, std::set<std::string>> offered;
    static const std::regex line(R"re(\n\s+([a-z| -]+)\) opts="([^"]*)")re");
    for (std::sregex_iterator it(script.begin(), script.end(), line), end; it != end; ++it) {
        auto opts = words((*it)[2]);
        opts.erase("--");
        for (const auto& name : words(std::regex_replace((*it)[1].str(), std::regex("\\|"), " ")))
            offered[name] = opts;
    }
    for (const std::string& name : subcommands_in_help()) {
        SCOPED_TRACE(name);
        EXPECT_EQ(offered[name], options_in_help(help_of({name.c_str()})));
    }
}
