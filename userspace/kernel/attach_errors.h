#pragma once
// What an attach error of the kernel's says about the machine. Attaching a
// trampoline program can fail with the kernel's internal ENOTSUPP (524),
// which has no name in userspace: strerror() says "Unknown error 524",
// which tells a user nothing.
#include <string>

namespace liveguard {

// The kernel's ENOTSUPP, as it reaches userspace.
constexpr int kKernelEnotsupp = 524;

// strerror(err), with a name for the kernel's own codes.
std::string attach_error_name(int err);

// Why the kernel cannot run liveguard's programs when attaching failed
// with err, or "" when err says nothing particular: on arm64, ENOTSUPP
// means a kernel without BPF trampolines (before 6.4), whichever form.
std::string attach_error_reason(int err);

}  // namespace liveguard
