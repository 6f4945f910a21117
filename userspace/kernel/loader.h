#pragma once
// Lifecycle of the kernel side: load the skeleton, attach every LSM
// program, pin links and maps under bpffs; and the reverse.
#include <optional>
#include <string>
#include <vector>

#include "kernel/programs.h"

namespace liveguard {

enum class LoadOutcome { Loaded, AlreadyLoaded };

struct LoadResult {
    LoadOutcome outcome = LoadOutcome::Loaded;
    Mode mode = Mode::Enforce;
    std::size_t programs = 0;  // attached by this load
    // Set when enforcement was asked for, the kernel refused it, and the
    // guard fell back to audit-only: why.
    std::string fallback_reason;
};

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
    // True when every program's link of either mode is pinned.
    static bool is_loaded();
    static std::optional<Mode> loaded_mode();

    // Loads, attaches and pins. Maps already pinned (for example by an
    // earlier load interrupted before it attached) are reused so that no
    // protection recorded in them is lost. Anything this call created is
    // removed again if a later step fails.
    // With `fallback`, a kernel that refuses the LSM programs gets the
    // audit-only mode instead of an error.
    static LoadResult load(Mode mode = Mode::Enforce, bool fallback = false);

    // Removes every pin: links detach when their last reference goes.
    static UnloadReport unload();

    // Load and attach without pinning, then release everything.
    static TrialResult trial();
};

}  // namespace liveguard
