/* The one header the kernel side takes architecture facts from: each
 * architecture liveguard builds for has its own beside this one, with the
 * same names (syscall wrappers, argument registers, call numbers of the
 * native and the 32-bit compat entry). The Makefile defines
 * __TARGET_ARCH_<arch> for libbpf's own register macros too. */
#ifndef LG_BPF_ARCH_H
#define LG_BPF_ARCH_H

#if defined(__TARGET_ARCH_x86)
#include "x86_64.h"
#elif defined(__TARGET_ARCH_arm64)
#include "aarch64.h"
#else
#error "no bpf/arch header for this target: build with __TARGET_ARCH_x86 or __TARGET_ARCH_arm64"
#endif

#endif
