// `run`: a session under --parent, else the default policy's [sessions]
// parent (as root; without root the policy watcher makes the session and no
// cgroup is made).
#include <unistd.h>

#include <cstdio>

#include "base/cgroup.h"
#include "base/error.h"
#include "cli/commands.h"
#include "policy/policy.h"

namespace liveguard {

int run_command(const RunOptions& o) {
    RunOptions opts = o;
    if (opts.parent) {
        // Checked before anything is made: a directory created outside the
        // hierarchy would be left behind when tagging it fails.
        std::string mount = cgroup2_mount();
        if (opts.parent->rfind(mount + "/", 0) != 0)
            throw Error("--parent " + *opts.parent + ": not a directory of the cgroup v2 hierarchy at " + mount,
                        "name one below it, e.g. " + mount + "/tests (created when missing)");
    }
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
