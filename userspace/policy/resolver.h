#pragma once
// Turning a policy target into what the kernel needs: the processes to
// mark and the cgroups to protect, plus the directories whose changes can
// change that answer. Reads the filesystem and /proc; changes nothing.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace liveguard {

struct ProcessToProtect {
    pid_t pid = 0;
    bool inherit = false;  // a supervisor: its children are protected at fork
    std::string why;       // e.g. "s6-supervise of /run/service/gateway-default"
    bool pipe_reader = false;  // reads a service's output: protected only outside sessions
    // The PID file it was found through, which anyone may have written: a
    // session member named there is the test's own process, not the
    // service, and its file is the test's too.
    std::string named_by_file;
    // Its pid in the PID namespace that named it (a container's), when
    // that is not the host's number.
    pid_t ns_pid = 0;
};

// Directories to watch, each with the names in it (glob patterns, as in
// the policy) whose creation, change or removal can change a resolution.
// A write to any other entry (the service's log, its database) wakes no
// pass: the directory of a PID file is often the service's busiest.
using WatchDirs = std::map<std::string, std::set<std::string>>;
inline constexpr const char* kAnyName = "*";
void watch(WatchDirs& dirs, const std::string& dir, const std::string& name);
// Whether a change to `name` in `dir` concerns the watch (fnmatch, and so
// never narrower than the glob expansion it guards).
bool watch_concerns(const WatchDirs& dirs, const std::string& dir, const std::string& name);
// The same for the name patterns of one directory.
bool names_concern(const std::set<std::string>& patterns, const std::string& name);

struct Resolution {
    // What the pattern matched, each once: the PID files, s6 service
    // directories, paths or cgroup directories of a glob (for a unit, its
    // cgroups), so that `status` names each instance, not only the glob.
    std::vector<std::string> instances;
    std::vector<ProcessToProtect> processes;
    std::vector<std::pair<std::uint64_t, std::string>> cgroups;  // id, path
    WatchDirs watch_dirs;
    // Side doors to the target: files guarded by identity (path, enum
    // lg_inode_kind) and the words naming it to service-control commands
    // (word, enum lg_word_flags).
    std::vector<std::pair<std::string, std::uint32_t>> guarded_files;
    // Symlinks guarded as themselves (LG_INODE_PROTECTED_FILE): an s6
    // scan-directory entry that links to its service directory, which a
    // rename would take out of the scan at the next rescan.
    std::vector<std::string> guarded_links;
    std::vector<std::pair<std::string, std::uint32_t>> exec_words;
    std::vector<std::string> warnings;  // each names the file it is about
    bool retry = false;                 // a torn read or a supervisor not up yet
};

// Expands a glob to existing paths (sorted); a pattern without wildcards
// yields itself when it exists.
std::vector<std::string> expand_glob(const std::string& pattern);

// Directories whose entries can change the expansion of `pattern`: every
// existing directory matched by each prefix of the pattern, starting at
// its last wildcard-free ancestor.
WatchDirs glob_watch_dirs(const std::string& pattern);

// Regular files below `dir` with more than one name, at most `max`: a
// name outside the tree reaches them without passing through it.
std::vector<std::string> hard_linked_files(const std::string& dir, std::size_t max, bool& truncated);

Resolution resolve(const ProtectTarget& t, const std::string& cgroup_mount);

// Reads a PID file, retrying torn reads; validates start_time.
// Reads of a file that is not a regular file, or is too large, warn.
// The file's number is a pid in the PID namespace of `ns_member` when
// that is given (a container's process); otherwise the host's, or, for a
// record whose start_time no host process with that number has, the one
// process of some namespace with that number and start time.
struct PidFileOutcome {
    std::optional<pid_t> pid;  // the host's number
    pid_t ns_pid = 0;          // the file's, when another
    std::string warning;
    bool retry = false;
};
PidFileOutcome read_pid_file(const std::string& path, pid_t ns_member = 0);

}  // namespace liveguard
