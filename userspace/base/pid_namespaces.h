#pragma once
// Pids as other PID namespaces number them. A service in a container
// writes its own pid (the one its namespace gives it) into PID files and
// s6 status files the host reads; the host knows the same process by
// another number, and the number it read may be an unrelated host
// process. /proc/<pid>/status lists a process's pid in each namespace it
// is visible in, outermost first (NSpid:).
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace liveguard {

// The pids of the NSpid: line of a /proc/<pid>/status text, outermost
// (the reader's) first; nothing when the line is missing or malformed.
std::optional<std::vector<pid_t>> parse_nspid(std::string_view status);

// A PID namespace, as the inode of /proc/<pid>/ns/pid.
using PidNs = std::uint64_t;

std::optional<PidNs> pid_ns_of(pid_t pid);
// The namespace this process's numbers are in.
std::optional<PidNs> own_pid_ns();

struct NsProcess {
    pid_t host_pid = 0;  // in this process's namespace
    pid_t ns_pid = 0;    // in the namespace asked about
};

// The process numbered `ns_pid` in namespace `ns` (the one `ns_member` is
// in), by the number this process knows it by.
std::optional<NsProcess> find_in_pid_ns(pid_t ns_member, pid_t ns_pid);

// Every process numbered `ns_pid` in some namespace below this one that
// started at `start_ticks`: a PID file's record names its process by both.
std::vector<NsProcess> find_by_ns_pid_and_start(pid_t ns_pid, std::uint64_t start_ticks);

// The pid of `host_pid` in its own (innermost) namespace, when that is
// another than this process's.
std::optional<pid_t> inner_pid(pid_t host_pid);

}  // namespace liveguard
