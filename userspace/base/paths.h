#pragma once
// Every runtime path under /run/liveguard, in one place: the watcher's
// state files, what `run` records about its sessions; and the event
// journal, under /var/log/liveguard.
// The bpffs pin paths live with the kernel layer (kernel/pins.h).
namespace liveguard::paths {

inline constexpr const char* kStateDir = "/run/liveguard";

// The policy watcher's pid and start time (for people and messages: the
// watcher is found as the process listening on kRunSocket), its state as
// JSON (what `status --json` shows), one line per target for people, and
// its log.
inline constexpr const char* kWatcherPid = "/run/liveguard/watcher.pid";
inline constexpr const char* kWatcherState = "/run/liveguard/watcher.json";
inline constexpr const char* kWatcherTargets = "/run/liveguard/watcher.targets";
inline constexpr const char* kWatcherLog = "/run/liveguard/watcher.log";
// The outcome of the watcher's last policy re-read, which `reload` (and
// so `systemctl reload`) waits for and reports.
inline constexpr const char* kWatcherReload = "/run/liveguard/watcher.reload";

// The event journal every consumer appends to, with its rotated files
// beside it (events/journal_files.h): under /var/log, so that what a
// session was refused is still there after a reboot.
inline constexpr const char* kJournal = "/var/log/liveguard/events.jsonl";
// The ring-buffer loss total already journalled (so each loss is
// journalled once): the kernel's count, which a reboot starts again.
inline constexpr const char* kLostReported = "/run/liveguard/events.lost-reported";
// Held (flock) by whichever consumer is taking records off the ring buffer.
inline constexpr const char* kEventsLock = "/run/liveguard/events.lock";

// Per session: its name, path and root process (<cgroup id>.json).
inline constexpr const char* kSessionInfoDir = "/run/liveguard/sessions";
// Per session, per pytest process: "<boot ns>\t<test id>" lines the
// pytest plugin appends as tests start each phase.
inline constexpr const char* kTestLogDir = "/run/liveguard/tests";

// Per pytest process of an automatic session (no `run` to say where its
// log goes): "<pid>" files in this sticky, world-writable directory.
inline constexpr const char* kTestLogByPidDir = "/run/liveguard/tests/pid";

// Held (flock) while the sessions map is counted and the count written,
// so two writers never publish a count older than the map.
inline constexpr const char* kSessionsLock = "/run/liveguard/sessions.lock";

// The watcher's socket: an unprivileged `run` asks it to make the command
// a session member before it execs (peer checked with SO_PEERCRED). The
// process listening on it is the watcher: `reload`, `unload` and `status`
// find it so (base/socket_owner.h).
inline constexpr const char* kRunSocket = "/run/liveguard/run.sock";

}  // namespace liveguard::paths
