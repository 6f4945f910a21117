#pragma once
// Where each LSM program finds the arguments it reads on this kernel.
//
// A program names the hook's arguments it reads (bpf/lib/hook.h): the
// members of its `struct lg_args_<hook>`, plus `ret`. Here they are found
// by name in the running kernel's prototype of the function the program
// runs on in the chosen form (bpf_lsm_<hook>, or security_<hook> for
// fmod_ret), and a BTF is built for CO-RE to relocate against: the
// kernel's own, with each lg_args struct laid out as that prototype (a
// member at 8 bytes times its argument's position, `ret` after the
// last). libbpf then patches those offsets into the programs' loads.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "kernel/programs.h"

struct bpf_object;  // libbpf
struct btf;

namespace liveguard {

// What one program reads: the hook, and the argument names besides `ret`.
struct HookArgs {
    std::string hook;
    std::vector<std::string> names;
    bool reads_ret = false;
};

// Every lg_args struct of the object (from its own BTF), by hook.
std::vector<HookArgs> declared_hook_args(const struct bpf_object* obj);

// The kernel function a program on `hook` runs on in `attach` form.
std::string hook_function(std::string_view hook, Attach attach);

// Why `function` of `kernel` cannot give `args` what it reads (it is not
// there, or takes no argument of a name the program reads); empty when
// it can.
std::string unresolved_args(const struct btf& kernel, const HookArgs& args, const std::string& function);

// The hooks of the object whose arguments this kernel does not give in
// `attach` form, each with why: their programs cannot load in that form.
// Throws when the kernel has no BTF.
std::map<std::string, std::string> unresolved_hooks(const struct bpf_object* obj, Attach attach);

// The kernel's BTF with every resolvable lg_args struct added for
// `attach`, in an anonymous file that lives as long as this object.
class HookArgsBtf {
public:
    // Throws when the kernel has no BTF or the file cannot be written.
    HookArgsBtf(const struct bpf_object* obj, Attach attach);

    // For libbpf's btf_custom_path.
    const std::string& path() const { return path_; }

private:
    UniqueFd fd_;
    std::string path_;
};

}  // namespace liveguard
