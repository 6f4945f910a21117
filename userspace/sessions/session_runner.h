#pragma once
// `run`: a command inside a fresh, tagged cgroup that is torn down after.
#include <optional>
#include <string>
#include <vector>

namespace liveguard {

struct RunOptions {
    std::vector<std::string> argv;
    std::optional<std::string> user;    // drop to this user after joining
    std::optional<std::string> parent;  // cgroup under which the session is made
    std::optional<std::string> name;    // shown in events and the summary
    bool fail_on_violation = false;     // exit non-zero when anything was refused
};

// Runs the command and returns its exit status (128+N when killed by
// signal N). As root: processes it left behind in the session are killed,
// then the cgroup is removed and untagged. Without root: the policy
// watcher makes and ends the session (run_brokered_session, brokered_run.h).
int run_session(const RunOptions& opts);

// Exit status in the shell's convention for a waitpid() status.
int shell_status(int wait_status);

}  // namespace liveguard
