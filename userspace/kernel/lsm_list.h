#pragma once
// The kernel's active LSM list (securityfs `lsm`): whether BPF LSM
// programs are ever called. Where `bpf` is built but not listed they
// attach without error and never run, so `load` asks before choosing how
// to attach.
#include <optional>
#include <string>

namespace liveguard {

inline constexpr const char* kSecurityfs = "/sys/kernel/security";

struct LsmList {
    std::string text;           // as the kernel lists it, without the newline
    bool mounted_here = false;  // read through a private securityfs mount
};

// The list; mounts securityfs privately when the host has not. Nothing
// when it cannot be read (not root, no securityfs).
std::optional<LsmList> read_lsm_list();

// Whether a comma-separated LSM list names "bpf".
bool lsm_list_has_bpf(const std::string& list);

}  // namespace liveguard
