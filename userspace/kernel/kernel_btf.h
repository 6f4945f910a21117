#pragma once
// The running kernel's BTF: which functions it has and what they take.
// Read once per process: the program selection asks it several questions,
// and each parse of its megabytes takes a third of a second under an
// emulator.
#include <optional>
#include <set>
#include <string>
#include <vector>

struct btf;             // libbpf
struct btf_type;

namespace liveguard {

// The kernel's BTF (/sys/kernel/btf/vmlinux); throws when it cannot be
// read, naming what needs it.
const struct btf& kernel_btf(const std::string& needed_for);

// The prototype of the kernel function `name`, or nullptr.
const struct btf_type* kernel_function_proto(const struct btf& btf, const std::string& name);

// Which of `names` are functions of the running kernel; none when it has
// no BTF.
std::set<std::string> kernel_functions_among(const std::vector<std::string>& names);

}  // namespace liveguard
