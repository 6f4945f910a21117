// `run`: a session under --parent, else the default policy's [sessions]
// parent (as root; without root the policy watcher makes the session and no
// cgroup is made).
#include <unistd.h>

#include <cstdio>

#include "cli/commands.h"
#include "policy/policy.h"

namespace liveguard {

int run_command(const RunOptions& o) {
    RunOptions opts = o;
    if (!opts.parent && ::geteuid() == 0 && ::access(kDefaultPolicyPath, F_OK) == 0) {
        try {
            opts.parent = load_policy(kDefaultPolicyPath).session_parent;
        } catch (const PolicyError& e) {
            std::fprintf(stderr, "liveguard-bpf: warning: ignoring [sessions] of %s: %s\n",
                         kDefaultPolicyPath, e.what());
        }
    }
    return run_session(opts);
}

}  // namespace liveguard
