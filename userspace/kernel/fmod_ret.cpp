#include "kernel/fmod_ret.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <memory>
#include <string_view>

#include "base/error.h"

namespace liveguard {
namespace {

struct BtfDeleter {
    void operator()(struct btf* b) const { btf__free(b); }
};

// The security_* function of an LSM hook: the same name but for one hook
// the kernel named differently.
std::string function_of(std::string_view hook) {
    if (hook == "bprm_check_security") return "security_bprm_check";
    if (hook == "file_free_security") return "security_file_free";
    return "security_" + std::string(hook);
}

// Hooks whose security_* function takes arguments the LSM hook does not,
// and whose program reads its return value where that function puts it
// (bpf/self_protection.bpf.c). Any other difference is refused.
bool reads_ret_by_mode(std::string_view hook) { return hook == "inode_rename" || hook == "inode_setattr"; }

const struct btf_type* func_proto(const struct btf* btf, const std::string& name) {
    int id = btf__find_by_name_kind(btf, name.c_str(), BTF_KIND_FUNC);
    if (id < 0) return nullptr;
    const struct btf_type* func = btf__type_by_id(btf, id);
    const struct btf_type* proto = func ? btf__type_by_id(btf, func->type) : nullptr;
    return proto && btf_is_func_proto(proto) ? proto : nullptr;
}

// The running kernel's BTF, read once per process: the program selection
// asks it several questions (`status` up to eight), and each parse of its
// megabytes takes a third of a second under an emulator.
struct VmlinuxBtf {
    std::unique_ptr<struct btf, BtfDeleter> btf;
    int error = 0;
};

const VmlinuxBtf& vmlinux_btf() {
    static const VmlinuxBtf cached = [] {
        VmlinuxBtf v;
        v.btf.reset(btf__load_vmlinux_btf());
        if (!v.btf) v.error = errno;
        return v;
    }();
    return cached;
}

}  // namespace

std::optional<int> kernel_function_args(const std::string& name) {
    const struct btf* btf = vmlinux_btf().btf.get();
    if (!btf) return std::nullopt;
    const struct btf_type* proto = func_proto(btf, name);
    if (!proto) return std::nullopt;
    return static_cast<int>(btf_vlen(proto));
}

std::set<std::string> kernel_functions_among(const std::vector<std::string>& names) {
    std::set<std::string> present;
    const struct btf* btf = vmlinux_btf().btf.get();
    if (!btf) return present;
    for (const auto& n : names)
        if (func_proto(btf, n)) present.insert(n);
    return present;
}

std::vector<FmodRetTarget> plan_fmod_ret(const struct bpf_object* obj) {
    const struct btf* btf = vmlinux_btf().btf.get();
    if (!btf) throw_errno("cannot read the kernel's BTF (/sys/kernel/btf/vmlinux)", vmlinux_btf().error,
                          "fmod_ret needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
    std::vector<FmodRetTarget> plan;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, const_cast<struct bpf_object*>(obj)) {
        std::string_view section = bpf_program__section_name(prog);
        if (section.substr(0, 4) != "lsm/") continue;
        FmodRetTarget t;
        t.program = bpf_program__name(prog);
        t.hook = std::string(section.substr(4));
        t.function = function_of(t.hook);
        const struct btf_type* fn = func_proto(btf, t.function);
        const struct btf_type* hook = func_proto(btf, "bpf_lsm_" + t.hook);
        if (!fn) {
            t.problem = t.function + " is not in this kernel's BTF (inlined, or not built)";
        } else if (hook && btf_vlen(fn) != btf_vlen(hook) && !reads_ret_by_mode(t.hook)) {
            t.problem = t.function + " takes " + std::to_string(btf_vlen(fn)) +
                        " arguments where the hook takes " + std::to_string(btf_vlen(hook));
        } else {
            t.observe = fn->type == 0;  // returns void
        }
        plan.push_back(std::move(t));
    }
    return plan;
}

void apply_fmod_ret(struct bpf_object* obj, const std::vector<FmodRetTarget>& plan) {
    for (const auto& t : plan) {
        struct bpf_program* prog = bpf_object__find_program_by_name(obj, t.program.c_str());
        if (!prog) continue;
        if (!t.problem.empty()) {
            bpf_program__set_autoload(prog, false);
            continue;
        }
        int err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
        if (!err)
            err = bpf_program__set_expected_attach_type(prog, t.observe ? BPF_TRACE_FENTRY : BPF_MODIFY_RETURN);
        if (!err) err = bpf_program__set_attach_target(prog, 0, t.function.c_str());
        if (err) throw_errno("cannot set " + t.program + " up to attach to " + t.function, -err);
    }
}

}  // namespace liveguard
