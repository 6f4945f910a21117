#pragma once
// The policy file: what to protect, by what it is, and where sessions
// live. Validated completely before anything is applied, so a bad file
// changes nothing.
#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/auto_names.h"

namespace liveguard {

inline constexpr const char* kDefaultPolicyPath = "/etc/liveguard/liveguard.toml";

enum class TargetKind { Pid, PidFile, S6, SystemdUnit, Cgroup, Path, Container };

const char* kind_key(TargetKind k);  // the TOML key: "pid", "pidfile", ...

struct ProtectTarget {
    TargetKind kind = TargetKind::Pid;
    std::string pattern;  // path or glob; the number for pid
    pid_t pid = 0;
    int line = 0;              // in the policy file
    std::uint32_t source = 0;  // 1-based position among [[protect]] tables
    // path only: names that stay writable anywhere below it ("__pycache__",
    // or "*.pyc" for a suffix).
    std::vector<std::string> except;
    // Ports the service listens on, TCP and UDP in the machine's network
    // namespace, protected before it first listens (its listening sockets
    // are learned anyway).
    std::vector<std::uint16_t> ports;
    // pidfile, s6, path: the containers (a `container` pattern) whose
    // filesystem and PID namespace the pattern is written in; empty for
    // the host's.
    std::string container;

    std::string describe() const;  // e.g. pidfile "/home/dev/.hermes/gateway.pid"
};

// The at, batch and cron spools and job directories of the distributions
// liveguard runs on, and systemd's unit directories; globs allowed,
// missing ones skipped.
std::vector<std::string> default_handoff_paths();

inline constexpr std::uint32_t kDefaultSessionMaxTasks = 4096;

// [sessions] fs_reserve: a share of the filesystem's size, or bytes (at
// most a tenth of it: a small filesystem is not all reserve). The default,
// a gigabyte, outlasts a second of a fast writer past the last measure.
struct FsReserve {
    bool percent = false;
    std::uint64_t value = std::uint64_t{1} << 30;  // 0 turns the reserve off

    std::uint64_t bytes_of(std::uint64_t fs_size) const {
        return percent ? fs_size / 100 * value : std::min(value, fs_size / 10);
    }
    bool operator==(const FsReserve&) const = default;
};

// "5%", "512M", "2G", "1048576" (bytes), "0"; nothing when it is none.
std::optional<FsReserve> parse_fs_reserve(const std::string& text);


struct Policy {
    std::string path;
    std::vector<ProtectTarget> targets;
    std::optional<std::string> session_parent;  // [sessions] parent
    std::vector<std::string> session_tags;      // [sessions] tag
    // Opt-in: members may not connect to systemd's private sockets or the
    // D-Bus buses (some test suites need the bus, hence not the default).
    bool refuse_service_manager_sockets = false;
    // [sessions] auto: test runners whose exec starts a session, for any
    // user, with no wrapper. Empty: none (the key absent, or auto = []).
    std::vector<AutoEntry> auto_sessions;
    // [sessions] reap: what a session leaves running is killed when its
    // root exits.
    bool reap = true;
    // [sessions] allow: doors open to every session, one bit per enum
    // lg_hook (kernel/allowed_doors.h says which may be).
    std::uint64_t allowed_doors = 0;
    // [sessions] handoff: where a member could leave work for a runner
    // outside the session (spools, job directories, sockets, FIFOs):
    // default_handoff_paths() unless the key is given.
    std::vector<std::string> handoff = default_handoff_paths();
    // [sessions] max_tasks: the processes and threads a session may have
    // at once (0: no limit), so that a fork storm leaves room for the
    // protected services.
    std::uint32_t max_tasks = kDefaultSessionMaxTasks;
    // [sessions] fs_reserve: what a filesystem a protected service keeps
    // its files on keeps free of members' writes (watcher/fs_space.h).
    FsReserve fs_reserve;
    // [metrics] textfile_directory: where the watcher keeps its counters
    // for node_exporter's textfile collector (liveguard.prom), when that
    // directory exists. Debian's prometheus-node-exporter reads this one.
    std::string metrics_textfile_dir = "/var/lib/prometheus/node-exporter";
};

// "file:line: what is wrong".
class PolicyError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Why `name` cannot be an `except` entry, or nothing when it can: a plain
// name, or "*" followed by a suffix that starts with '.', without '/' or
// further wildcards, shorter than LG_EXCEPT_NAME_LEN.
std::optional<std::string> except_entry_problem(const std::string& name);

Policy parse_policy(std::string_view text, const std::string& filename);
Policy load_policy(const std::string& path);

}  // namespace liveguard
