#pragma once
// What a session may hold at once ([sessions] max_tasks), so that a fork
// storm in a test leaves room for the services beside it. The kernel side
// counts each session's live tasks (lg_session_tasks) and refuses the fork
// past the limit; this side sets the limit and sweeps the counts of
// sessions that have ended.
#include <cstddef>
#include <cstdint>

namespace liveguard {

// Sets the limit (0: none); throws with the cause.
void set_session_limits(int limits_fd, std::uint32_t max_tasks);

// Deletes the counts of sessions no longer in lg_sessions; returns how
// many. Session ids are never reused, so a count deleted here is never
// one a live session still needs.
std::size_t sweep_session_tasks(int tasks_fd, int sessions_fd);

// Deletes an ended session's count through its pin (none there, or no
// pin, is no error): every way a session ends passes here, so counts of
// ended sessions do not wait for the next policy pass to be swept.
void forget_session_tasks(std::uint64_t session);

}  // namespace liveguard
