#pragma once
// Attaching the LSM programs without the BPF LSM: where `bpf` is built but
// not in the active LSM list (Ubuntu, WSL2) the bpf_lsm_* hooks are never
// called, but the verifier accepts fmod_ret (BPF_MODIFY_RETURN) programs
// on every kernel function named security_*, and those are called on every
// kernel. Each LSM program is attached to the security_* function of its
// hook: as fmod_ret where the function returns an error code, as fentry
// where it returns nothing (a hook that only observes). Which functions
// this kernel has is read from its BTF, never assumed: one may be
// inlined; what they take is found by name (kernel/hook_args.h).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct bpf_object;  // libbpf

namespace liveguard {

struct FmodRetTarget {
    std::string program;   // lg_task_kill
    std::string hook;      // task_kill
    std::string function;  // security_task_kill
    bool observe = false;  // the function returns nothing: fentry
    // Why the program cannot attach here; empty when it can.
    std::string problem;
};

// One entry per LSM program of `obj` (sections lsm/...), judged against
// the running kernel's BTF. Throws when the kernel has no BTF.
std::vector<FmodRetTarget> plan_fmod_ret(const struct bpf_object* obj);

// The security_* function of an LSM hook: the same name but for the two
// hooks the kernel named differently.
std::string security_function_of(std::string_view hook);

// Sets each program of the plan up to attach as planned, before load; a
// program that cannot is not loaded.
void apply_fmod_ret(struct bpf_object* obj, const std::vector<FmodRetTarget>& plan);

}  // namespace liveguard
