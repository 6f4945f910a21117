#pragma once
// Command-line grammar. Parsing is separate from running so that the
// grammar is tested without root or a kernel.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "sessions/session_runner.h"

namespace liveguard {

struct CliCommand {
    std::string name;  // load, unload, protect, unprotect, tag, untag, run, status, events, doctor
    bool json = false;
    bool verbose = false;
    bool no_follow = false;  // events: print what is buffered, then exit
    pid_t pid = 0;           // protect/unprotect
    std::string cgroup_dir;  // tag/untag
    RunOptions run;
    std::optional<std::string> config;  // load: policy file; check-config: the file
    bool foreground = false;            // load: run the watcher in this process
    bool audit_only = false;            // load: report, never refuse
    std::optional<std::string> session; // events: only this session (name or cgroup id)
    std::optional<std::string> since;   // events: from this time (ISO 8601 UTC, or 30s/10m/2h ago)
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
