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
    Attach attach = Attach::Lsm;
    std::size_t programs = 0;  // attached by this load
    // Why this attach form was chosen, when `load` chose it.
    std::string reason;
    // Hooks this kernel gives no place to attach to, each with why.
    std::vector<std::string> uncovered;
    // Each form tried before `attach` and refused by the kernel, with the
    // kernel's reason ("lsm: the kernel refused ...").
    std::vector<std::string> refused;
    // Set when enforcement was asked for, the kernel refused it, and the
    // guard fell back to audit-only: why.
    std::string fallback_reason;
};

// The attach forms `load` tries on this kernel when none is forced, in
// order, each with why: lsm where `bpf` is an active LSM, then fmod_ret
// (where bpf is not listed LSM programs would never run), then audit-only.
struct AttachChoice {
    Attach attach = Attach::Lsm;
    std::string reason;
};
std::vector<AttachChoice> attach_order();
// The first of them.
AttachChoice choose_attach();

// The hooks a load in `attach` form would leave unenforced on this kernel
// (no security_* function to attach to), each with why.
std::vector<std::string> uncovered_hooks(Attach attach);

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
    // Hooks the form leaves unenforced on this kernel, each with why.
    std::vector<std::string> uncovered;
};

class Guard {
public:
    // True when every program's link of either mode is pinned.
    static bool is_loaded();
    static std::optional<Attach> loaded_attach();

    // Loads, attaches and pins. Maps already pinned (for example by an
    // earlier load interrupted before it attached) are reused so that no
    // protection recorded in them is lost. Anything this call created is
    // removed again if a later step fails.
    // `forced`: that attach form or an error naming why not. Without it,
    // each of attach_order() until the kernel takes one: a kernel that
    // refuses both enforcing forms gets the audit-only mode, not an error.
    static LoadResult load(std::optional<Attach> forced = std::nullopt);

    // Removes every pin: links detach when their last reference goes.
    static UnloadReport unload();

    // Load and attach without pinning, then release everything.
    static TrialResult trial(Attach attach);
};

}  // namespace liveguard
