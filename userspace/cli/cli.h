#pragma once
// Command-line grammar. Parsing is separate from running so that the
// grammar is tested without root or a kernel.
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <variant>

#include "sessions/session_runner.h"

namespace liveguard {

struct LoadOptions {
    std::optional<std::string> config;  // the policy file
    bool foreground = false;            // run the watcher in this process
    bool audit_only = false;            // report, never refuse (= --attach audit-only)
    std::optional<std::string> attach;  // lsm, fmod_ret, audit-only; none: load chooses
};

struct CheckConfigOptions {
    std::string file;
};

struct ReloadOptions {};
struct UnloadOptions {};

struct ProtectOptions {
    pid_t pid = 0;
    bool add = true;  // protect; false: unprotect
};

struct TagOptions {
    std::string cgroup_dir;
    bool add = true;  // tag; false: untag
};

struct StatusOptions {
    bool json = false;
};

struct EventsOptions {
    bool json = false;
    bool no_follow = false;              // print the journal's last events and what is buffered, then exit
    std::optional<std::string> session;  // only this session (name or cgroup id)
    std::optional<std::string> since;    // from this time (ISO 8601 UTC, or 30s/10m/2h ago)
    // How many of the journal's earlier events first, as `tail -n`; none:
    // 10, or with `since` all from then.
    std::optional<std::size_t> lines;
};

struct DoctorOptions {
    bool json = false;
};

struct MetricsOptions {};

using CommandOptions =
    std::variant<LoadOptions, CheckConfigOptions, ReloadOptions, UnloadOptions, ProtectOptions,
                 TagOptions, RunOptions, StatusOptions, EventsOptions, DoctorOptions, MetricsOptions>;

struct CliCommand {
    std::string name;  // the subcommand as typed
    bool verbose = false;
    CommandOptions options;
};

struct ParseResult {
    std::optional<CliCommand> command;  // set when there is something to run
    int exit_code = 0;                  // otherwise: exit with this
    std::string out;                    // and print these
    std::string err;
};

ParseResult parse_cli(int argc, const char* const* argv);

// Runs a parsed command; returns the process exit status.
int execute(const CliCommand& cmd);

}  // namespace liveguard
