#include "kernel/allowed_doors.h"

#include <bpf/bpf.h>

#include <cerrno>

#include "base/error.h"
#include "liveguard/abi.h"

namespace liveguard {

namespace {

struct Door {
    const char* name;
    std::uint32_t hook;
};

constexpr Door kAllowable[] = {
#define LG_ALLOWABLE(name, value, text, what) {text, value},
    LG_HOOKS(LG_ALLOWABLE)
#undef LG_ALLOWABLE
};

bool allowable(std::uint32_t hook) {
    switch (hook) {
        case LG_HOOK_REBOOT:
        case LG_HOOK_MODULE:
        case LG_HOOK_CLOCK:
        case LG_HOOK_RAW_IO:
        case LG_HOOK_POWER:
        case LG_HOOK_SECURITYFS:
        case LG_HOOK_NETWORK:
        case LG_HOOK_HOSTNAME:
        case LG_HOOK_SWAP:
        case LG_HOOK_OOM:
        case LG_HOOK_USER_COUNTS:
        case LG_HOOK_FS_SPACE:
        case LG_HOOK_SERVICE_BUS: return true;
        default: return false;
    }
}

}  // namespace

static_assert(LG_HOOK_COUNT <= 64, "lg_allowed_doors has one bit per door");

std::optional<std::uint64_t> allowable_door_bit(std::string_view name) {
    for (const auto& d : kAllowable)
        if (name == d.name && allowable(d.hook)) return std::uint64_t{1} << d.hook;
    return std::nullopt;
}

std::string allowable_door_names() {
    std::string out;
    for (const auto& d : kAllowable)
        if (allowable(d.hook)) out += (out.empty() ? "" : ", ") + std::string(d.name);
    return out;
}

void set_allowed_doors(int map_fd, std::uint64_t mask) {
    std::uint32_t key = 0;
    if (::bpf_map_update_elem(map_fd, &key, &mask, BPF_ANY) != 0)
        throw_errno("cannot set the doors the policy opens to sessions (lg_allowed_doors)", errno);
}

}  // namespace liveguard
