#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "base/proc.h"

namespace liveguard {
namespace {

constexpr const char* kDescription =
    "liveguard-bpf: keep test suites from killing live services.\n"
    "BPF LSM programs refuse signals from processes in tagged test-session cgroups\n"
    "to protected processes, whatever language or tool sends them.\n\n"
    "Typical use:\n"
    "  sudo liveguard-bpf load\n"
    "  sudo liveguard-bpf protect --pid \"$(cat ~/.hermes/gateway.pid)\"   (bare-integer PID file)\n"
    "  sudo liveguard-bpf run --user \"$USER\" -- pytest tests/\n"
    "  sudo liveguard-bpf events\n";

}  // namespace

ParseResult parse_cli(int argc, const char* const* argv) {
    CLI::App app{kDescription, "liveguard-bpf"};
    app.require_subcommand(1);
    app.fallthrough();
    CliCommand cmd;
    std::string pid_text;

    app.add_flag("-v,--verbose", cmd.verbose, "Show libbpf's log");

    auto* load = app.add_subcommand(
        "load", "Load and attach the BPF programs and pin them under /sys/fs/bpf/liveguard "
                "(does nothing if already loaded); with a policy file (--config, or "
                "/etc/liveguard/liveguard.toml when it exists) apply it and start the watcher "
                "that keeps it applied");
    load->add_option("--config", cmd.config, "Policy file (TOML); see README");
    load->add_flag("--audit-only", cmd.audit_only,
                   "Report what would be refused, refuse nothing (tracepoints; for kernels that "
                   "will not run BPF LSM programs, which `load` falls back to on its own)");
    load->add_flag("--foreground", cmd.foreground,
                   "Run the watcher in this process (for systemd and s6 units)");
    auto* check = app.add_subcommand("check-config", "Validate a policy file without loading "
                                                     "anything; exit 2 with file:line when bad");
    check->add_option("FILE", cmd.config, "Policy file")->required();
    app.add_subcommand("reload", "Make the running watcher re-read its policy (SIGHUP); a bad "
                                 "policy is rejected and the old one stays");
    app.add_subcommand("unload", "Stop the watcher, detach the programs and remove every pin: "
                                 "enforcement stops");
    for (const char* name : {"protect", "unprotect"}) {
        auto* sc = app.add_subcommand(
            name, std::string(name) == "protect"
                      ? "Protect a process (all its threads) from signals sent by session members; "
                        "a later process reusing the PID is not protected"
                      : "Stop protecting a process");
        sc->add_option("--pid", pid_text, "Process id")->required();
    }
    for (const char* name : {"tag", "untag"}) {
        auto* sc = app.add_subcommand(
            name, std::string(name) == "tag"
                      ? "Make every process in a cgroup v2 directory (and its sub-cgroups) a "
                        "session member"
                      : "Stop treating a cgroup as a session");
        sc->add_option("CGROUP_DIR", cmd.cgroup_dir, "A cgroup v2 directory")->required();
    }
    auto* run = app.add_subcommand(
        "run", "Run CMD in a fresh tagged cgroup, wait, clean up, and exit with CMD's status "
               "(128+N when killed by signal N)");
    run->add_option("--user", cmd.run.user, "Run CMD as this user (name or uid), after joining");
    run->add_option("--name", cmd.run.name, "A name for the session, shown in events and the summary");
    run->add_flag("--fail-on-violation", cmd.run.fail_on_violation,
                  "Exit 3 when anything was refused (or, audit-only, seen) in the session, even "
                  "if CMD succeeded: CI turns a harmless-but-wrong test red");
    run->add_option("CMD", cmd.run.argv, "Command and arguments (put them after --)")->required();
    auto* status = app.add_subcommand("status", "Show whether the guard is loaded, protected "
                                                "processes, sessions and refusal counters");
    status->add_flag("--json", cmd.json, "One JSON object");
    auto* events = app.add_subcommand("events", "Print refusals from the ring buffer as they "
                                                "happen, until interrupted");
    events->add_flag("--json", cmd.json, "JSON lines");
    events->add_flag("--no-follow", cmd.no_follow, "Print the events already buffered, then exit");
    events->add_option("--session", cmd.session, "Only events of this session: its --name or cgroup id");
    events->add_option("--since", cmd.since,
                       "Also print earlier events from the journal, from this time: "
                       "2026-11-30T17:00:00Z, or 30s, 10m, 2h ago");
    auto* doctor = app.add_subcommand(
        "doctor", "Check every prerequisite of enforcement and say how to fix what is missing; "
                  "exits 1 when enforcement is impossible");
    doctor->add_flag("--json", cmd.json, "One JSON object");

    ParseResult r;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        std::ostringstream out, err;
        r.exit_code = app.exit(e, out, err);
        r.out = out.str();
        return r;
    } catch (const CLI::ParseError& e) {
        std::ostringstream out, err;
        app.exit(e, out, err);
        r.err = err.str();
        // Always end with usage: the message alone rarely says what fits.
        r.err += "\n" + app.help("", CLI::AppFormatMode::Normal);
        r.exit_code = 2;
        return r;
    }
    cmd.name = app.get_subcommands().front()->get_name();
    if (cmd.name == "protect" || cmd.name == "unprotect") {
        auto pid = parse_pid(pid_text);
        if (!pid) {
            r.err = "--pid: '" + pid_text + "' is not a process id (a positive decimal number)\n\n" +
                    app.get_subcommands().front()->help();
            r.exit_code = 2;
            return r;
        }
        cmd.pid = *pid;
    }
    r.command = cmd;
    return r;
}

}  // namespace liveguard
