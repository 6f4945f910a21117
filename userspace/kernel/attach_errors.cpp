#include "kernel/attach_errors.h"

#include <cerrno>
#include <cstring>

namespace liveguard {

std::string attach_error_name(int err) {
    if (err == kKernelEnotsupp) return "ENOTSUPP, operation not supported by the kernel";
    return std::strerror(err);
}

std::string attach_error_reason(int err) {
    if (err == EPERM || err == EACCES) return "this kernel does not permit BPF programs that need a trampoline";
    if (err != kKernelEnotsupp) return "";
#if defined(__aarch64__)
    // arm64 attaches trampolines through ftrace direct calls, which it
    // gained in 6.4: Debian 12's 6.1 loads the programs but attaches none,
    // Debian 13's 6.12 attaches both forms.
    return "this arm64 kernel cannot attach BPF trampolines (arm64 has them from Linux 6.4 on: "
           "Debian 13's 6.12 attaches, Debian 12's 6.1 does not)";
#else
    return "this kernel cannot attach BPF trampolines here";
#endif
}

}  // namespace liveguard
