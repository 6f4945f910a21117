#pragma once
// The oldest kernel that can load liveguard's programs, read from the BPF
// object embedded in this binary rather than kept as a constant: the
// newest helper its code calls, map type it creates or program kind it
// declares sets it. A constant went stale once already (doctor said 5.11
// while bpf_loop needs 5.17, so it passed kernels that `load` refuses,
// audit-only included).
#include <cstddef>
#include <compare>
#include <optional>
#include <string>
#include <vector>

namespace liveguard {

struct KernelVersion {
    int major = 0;
    int minor = 0;
    auto operator<=>(const KernelVersion&) const = default;
    std::string str() const;  // "5.17"
};

// "6.1.0-50-amd64" -> 6.1; 0.0 when unreadable.
KernelVersion parse_kernel_version(const std::string& release);

// One thing the object uses, and the first mainline release that has it.
struct KernelNeed {
    std::string what;  // "bpf_loop", "task storage maps", "lsm programs"
    KernelVersion since;
};

struct KernelFloor {
    KernelVersion version;  // the newest of `needs`
    std::string what;       // what needs it: "bpf_loop" (", "-joined on a tie)
    // Every distinct thing the table dates, newest first.
    std::vector<KernelNeed> needs;
    // What the table cannot date ("unknown helper 212", "kfunc bpf_x"): the
    // floor leaves it out, so the real one may be higher.
    std::vector<std::string> unknown;
    // Every helper id the code calls, ascending.
    std::vector<int> helper_ids;

    // "bpf_loop (5.17)".
    std::string reason() const;
    // Empty, or what the floor leaves out and why that matters.
    std::string warning() const;
};

// The floor of the BPF object `elf` (an ELF image, not loaded: nothing
// reaches the kernel). Throws Error when the image cannot be read.
KernelFloor kernel_floor_of(const void* elf, std::size_t size);

// The floor of the object embedded in this binary, read once.
const KernelFloor& kernel_floor();

// The table entry for helper `id`: its name and the release from which
// LSM and tracing programs can call it; nothing when the table lacks it.
std::optional<KernelNeed> helper_since(int id);

}  // namespace liveguard
