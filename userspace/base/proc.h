#pragma once
// Reading process facts from /proc. Processes come and go while we read,
// so every reader returns std::nullopt for "gone" instead of throwing.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liveguard {

struct ProcStat {
    pid_t pid = 0;
    std::string comm;
    char state = '?';
    pid_t ppid = 0;
    std::uint64_t start_ticks = 0;  // field 22: clock ticks after boot
};

// Parses one /proc/<pid>/stat line. The comm field may itself contain
// spaces and ')' so the last ')' ends it.
std::optional<ProcStat> parse_proc_stat(std::string_view line);

std::optional<ProcStat> read_proc_stat(pid_t pid);

// Thread-group id of a task id (a thread's process), if it exists.
std::optional<pid_t> read_tgid(pid_t tid);

// Every numeric entry of /proc, i.e. every process visible to us.
std::vector<pid_t> list_pids();

// Strict decimal PID parser for user input: no sign, no junk, > 0.
std::optional<pid_t> parse_pid(std::string_view text);

// The whole content of a small file, or nullopt if it cannot be read.
std::optional<std::string> read_small_file(const std::string& path, std::size_t max = 1 << 20);
// The same relative to a directory fd: a file of /proc/<pid>/ opened
// through that directory is that process's, or fails once it has exited,
// even if the pid is someone else's by then.
std::optional<std::string> read_small_file_at(int dirfd, const std::string& path, std::size_t max = 1 << 20);

// The same for a file some user may have placed (a test log in a shared
// directory): only a regular file, never through a symbolic link, never
// blocking on a FIFO or device; at most `max` bytes.
std::optional<std::string> read_untrusted_file(const std::string& path, std::size_t max = 1 << 20);

// Removes a directory a user could write to and the files in it, without
// following links and without descending into directories placed there.
void remove_untrusted_dir(const std::string& path);

}  // namespace liveguard
