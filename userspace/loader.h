#pragma once
// Lifecycle of the kernel side: load the skeleton, attach every LSM
// program, pin links and maps under bpffs; and the reverse.
#include <string>
#include <vector>

namespace liveguard {

enum class LoadOutcome { Loaded, AlreadyLoaded };

struct UnloadReport {
    bool was_loaded = false;
    std::vector<std::string> removed;  // pin paths
};

// Result of a load+attach attempt that pins nothing (doctor's last layer).
struct TrialResult {
    bool loaded = false;
    bool attached = false;
    int error = 0;            // errno of the failing step
    std::string detail;       // libbpf's last lines
};

class Guard {
public:
    // True when every program's link is pinned.
    static bool is_loaded();

    // Loads, attaches and pins. Maps already pinned (for example by an
    // earlier load interrupted before it attached) are reused so that no
    // protection recorded in them is lost. Anything this call created is
    // removed again if a later step fails.
    static LoadOutcome load();

    // Removes every pin: links detach when their last reference goes.
    static UnloadReport unload();

    // Load and attach without pinning, then release everything.
    static TrialResult trial();
};

// Throws unless bpffs is mounted at /sys/fs/bpf.
void require_bpffs();

// Throws unless running with the privileges BPF needs.
void require_root(const std::string& command);

}  // namespace liveguard
