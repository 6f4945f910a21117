#pragma once
// How often the kernel skipped one of liveguard's programs instead of
// running it: a tracing program (the fmod_ret form, and the tp_btf
// bookkeeping in every form) is not run while the same program is already
// running on that CPU, a preempted task's run included. In the fmod_ret
// form each hook has a twin that checks what its first program skipped
// (bpf/lib/twins.h); an act went unchecked only when both were skipped.
#include <cstdint>
#include <map>
#include <string>

namespace liveguard {

// Skips per attached program (by its pinned link's name), as the kernel
// counts them (bpf_prog_info.recursion_misses); programs never skipped
// are left out. Empty when nothing is loaded or the kernel counts none.
std::map<std::string, std::uint64_t> skipped_runs();

}  // namespace liveguard
