// The command line: each subcommand's options, and running the one given.
#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "base/proc.h"
#include "cli/commands.h"
#include "kernel/libbpf_log.h"

namespace liveguard {
namespace {

constexpr const char* kDescription =
    "liveguard-bpf: keep test suites from killing live services.\n"
    "BPF LSM programs refuse signals from processes in tagged test-session cgroups\n"
    "to protected processes, whatever language or tool sends them.\n\n"
    "Typical use:\n"
    "  sudo liveguard-bpf load\n"
    "  sudo liveguard-bpf protect --pid \"$(cat ~/.hermes/gateway.pid)\"   (bare-integer PID file)\n"
    "  liveguard-bpf run -- pytest tests/   (no sudo while the policy watcher runs)\n"
    "  sudo liveguard-bpf events\n";

}  // namespace

ParseResult parse_cli(int argc, const char* const* argv) {
    CLI::App app{kDescription, "liveguard-bpf"};
    app.require_subcommand(1);
    app.fallthrough();
    CliCommand cmd;

    app.add_flag("-v,--verbose", cmd.verbose, "Show libbpf's log");

    // Each subcommand binds its own options; its callback, run once the
    // whole command line parsed, makes them the command's.
    LoadOptions load;
    {
        auto* sc = app.add_subcommand(
            "load", "Load and attach the BPF programs and pin them under /sys/fs/bpf/liveguard "
                    "(does nothing if already loaded); with a policy file (--config, or "
                    "/etc/liveguard/liveguard.toml when it exists) apply it and start the watcher "
                    "that keeps it applied");
        sc->add_option("--config", load.config, "Policy file (TOML); see README");
        sc->add_option("--attach", load.attach,
                       "How to attach: lsm (BPF LSM programs; needs bpf among the active LSMs), "
                       "fmod_ret (the same programs on the kernel's security_* functions; for "
                       "kernels that build the BPF LSM without listing it), audit-only. Default: "
                       "lsm where bpf is listed, else fmod_ret, else audit-only")
            ->check(CLI::IsMember({"lsm", "fmod_ret", "audit-only"}));
        sc->add_flag("--audit-only", load.audit_only,
                     "Report what would be refused, refuse nothing (tracepoints; for kernels that "
                     "will not run BPF LSM programs, which `load` falls back to on its own); the "
                     "same as --attach audit-only");
        sc->add_flag("--foreground", load.foreground,
                     "Run the watcher in this process (for systemd and s6 units)");
        sc->callback([&] { cmd.options = load; });
    }
    CheckConfigOptions check;
    {
        auto* sc = app.add_subcommand("check-config", "Validate a policy file without loading "
                                                      "anything; exit 2 with file:line when bad");
        sc->add_option("FILE", check.file, "Policy file")->required();
        sc->callback([&] { cmd.options = check; });
    }
    app.add_subcommand("reload", "Make the running watcher re-read its policy (SIGHUP) and wait "
                                 "for its answer; a bad policy is rejected (exit 1, with why) and "
                                 "the old one stays")
        ->callback([&] { cmd.options = ReloadOptions{}; });
    app.add_subcommand("unload", "Stop the watcher, detach the programs and remove every pin: "
                                 "enforcement stops")
        ->callback([&] { cmd.options = UnloadOptions{}; });
    // Checked once parsed, for an error that says what a PID must be.
    std::string pid_text;
    for (bool add : {true, false}) {
        auto* sc = app.add_subcommand(
            add ? "protect" : "unprotect",
            add ? "Protect a process (all its threads) from signals sent by session members; "
                  "a later process reusing the PID is not protected"
                : "Stop protecting a process");
        sc->add_option("--pid", pid_text, "Process id")->required();
        sc->callback([&cmd, add] { cmd.options = ProtectOptions{0, add}; });
    }
    std::string cgroup_dir;
    for (bool add : {true, false}) {
        auto* sc = app.add_subcommand(
            add ? "tag" : "untag",
            add ? "Make every process in a cgroup v2 directory (and its sub-cgroups) a "
                  "session member"
                : "Stop treating a cgroup as a session");
        sc->add_option("CGROUP_DIR", cgroup_dir, "A cgroup v2 directory")->required();
        sc->callback([&cmd, &cgroup_dir, add] { cmd.options = TagOptions{cgroup_dir, add}; });
    }
    RunOptions run;
    {
        auto* sc = app.add_subcommand(
            "run", "Run CMD as a test session, wait, print what the session was refused, and exit "
                   "with CMD's status (128+N when killed by signal N). As root: CMD runs in a fresh "
                   "tagged cgroup, which is cleaned up after it. As any other user (no sudo): the "
                   "policy watcher (the liveguard-bpf service, or `load --config`) makes CMD's "
                   "process a session before it execs, ends the session when CMD exits (killing "
                   "what it left, unless the policy says [sessions] reap = false), and records the "
                   "summary that run prints; without a watcher nothing runs");
        sc->add_option("--user", run.user,
                       "Run CMD as this user (a name, then a uid; looked up in /etc/passwd and "
                       "/etc/group, then the system's user database), with its groups, after joining "
                       "(root only)");
        sc->add_option("--name", run.name,
                       "A name for the session, shown in events and the summary (default: CMD's "
                       "file name; as root, the cgroup id). Without root: at most 64 printable "
                       "ASCII characters");
        sc->add_option("--parent", run.parent,
                       "Create the session's cgroup under this cgroup v2 directory (root only; "
                       "default: [sessions] parent of the default policy, else <cgroup2 mount>/liveguard)");
        sc->add_flag("--fail-on-violation", run.fail_on_violation,
                     "Exit 3 when anything was refused (or, audit-only, seen) in the session, even "
                     "if CMD succeeded: CI turns a harmless-but-wrong test red");
        sc->add_option("CMD", run.argv, "Command and arguments (put them after --)")->required();
        sc->callback([&] { cmd.options = run; });
    }
    StatusOptions status;
    {
        auto* sc = app.add_subcommand("status", "Show whether the guard is loaded, protected "
                                                "processes, sessions and refusal counters");
        sc->add_flag("--json", status.json, "One JSON object");
        sc->callback([&] { cmd.options = status; });
    }
    app.add_subcommand("metrics", "Print the counters status shows (refusals per door, sessions, events "
                                  "lost) in the Prometheus text format, for a scrape or node_exporter's "
                                  "textfile collector")
        ->callback([&] { cmd.options = MetricsOptions{}; });
    EventsOptions events;
    {
        auto* sc = app.add_subcommand(
            "events", "Print refusals as tail -f prints a file: the last 10 events of the journal, then "
                      "each new one as it happens (collected from the kernel's ring buffer), until "
                      "interrupted; identical refusals within a second are one event and a count");
        sc->add_flag("--json", events.json, "JSON lines");
        sc->add_option("-n,--lines", events.lines,
                       "How many earlier events to print first: the journal's last N of those "
                       "--session and --since let through (0: only new events). Default: 10; "
                       "with --since, all of them")
            ->type_name("N")
            ->check(CLI::Validator(
                [](std::string& text) -> std::string {
                    bool count = !text.empty() && text.size() <= 9 &&
                                 text.find_first_not_of("0123456789") == std::string::npos;
                    if (count) return {};
                    return "'" + text + "' is not a count of events: give a whole number from 0 to 999999999 "
                           "(0: only new events)";
                },
                ""));
        sc->add_flag("--no-follow", events.no_follow,
                     "Print the earlier events (see --lines) and those still buffered in the kernel, then "
                     "exit instead of following");
        sc->add_option("--session", events.session, "Only events of this session: its --name or cgroup id");
        sc->add_option("--since", events.since,
                       "Print earlier events from this time on (all of them, unless --lines says how many "
                       "of the last): 2026-11-30T17:00:00Z, or 30s, 10m, 2h, 1d ago");
        sc->callback([&] { cmd.options = events; });
    }
    DoctorOptions doctor;
    {
        auto* sc = app.add_subcommand(
            "doctor", "Check every prerequisite of enforcement and say how to fix what is missing; "
                      "exits 1 when enforcement is impossible");
        sc->add_flag("--json", doctor.json, "One JSON object");
        sc->callback([&] { cmd.options = doctor; });
    }

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
    if (auto* protect = std::get_if<ProtectOptions>(&cmd.options)) {
        auto pid = parse_pid(pid_text);
        if (!pid) {
            r.err = "--pid: '" + pid_text + "' is not a process id (a positive decimal number)\n\n" +
                    app.get_subcommands().front()->help();
            r.exit_code = 2;
            return r;
        }
        protect->pid = *pid;
    }
    r.command = cmd;
    return r;
}

int execute(const CliCommand& c) {
    LibbpfLogCapture::set_verbose(c.verbose);
    return std::visit([](const auto& options) { return run_command(options); }, c.options);
}

}  // namespace liveguard
