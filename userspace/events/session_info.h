#pragma once
// What `run` records about its session, for the events that name it: one
// file per session, /run/liveguard/sessions/<cgroup id>.json, written when
// the command starts and removed when the session ends. Events read it;
// sessions write it.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace liveguard {

struct SessionInfo {
    std::string name;
    std::string path;
    pid_t root_pid = 0;
};

// Replaces the file whole (through a rename), so a reader never sees half.
void write_session_info(std::uint64_t id, const SessionInfo& info);
// Nothing when the session has no file (not started by `run`, or ended).
std::optional<SessionInfo> read_session_info(std::uint64_t id);
// Removes the file and the session's test logs.
void remove_session_info(std::uint64_t id);

}  // namespace liveguard
