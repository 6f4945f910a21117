#pragma once
// `run` without root: the policy watcher's run broker (service/run_broker.h)
// makes the command's process the root of a new session before it execs,
// so nothing of the command ever runs outside the session. The watcher
// ends the session when the root exits, reaps what it left and journals
// its summary, which `run` prints.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "events/journal_record.h"
#include "sessions/session_runner.h"

namespace liveguard {

// Runs opts.argv in a session the broker starts; returns its exit status
// as run_session does. Throws Error, running nothing, when no watcher
// answers on paths::kRunSocket or an option needs root (--user, --parent).
int run_brokered_session(const RunOptions& opts);

// The end of session `id` among journal lines, as the watcher records it.
std::optional<JournalSessionEnd> find_session_end(const std::vector<std::string>& journal_lines,
                                                  std::uint64_t id);

// The environment a session's command gets: the pytest plugin and its
// entry point on PYTHONPATH (and `-p liveguard` in PYTEST_ADDOPTS when
// PYTEST_DISABLE_PLUGIN_AUTOLOAD is set), where its test log goes (left as
// inherited when `test_log_dir` is empty) and the session's name.
void set_session_env(const std::string& plugin_dir, const std::string& test_log_dir,
                     const std::string& label);

// What stands in the way when the socket cannot be connected to
// (`connect_errno`): the guard is not loaded (`guard_absent`), or no
// watcher runs, or the watcher that runs (`watcher_pid`) does not answer.
Error no_broker_error(int connect_errno, bool guard_absent, std::optional<pid_t> watcher_pid);

}  // namespace liveguard
