#include "kernel/fmod_ret.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <memory>
#include <string_view>

#include "base/error.h"
#include "kernel/kernel_btf.h"

namespace liveguard {

std::string security_function_of(std::string_view hook) {
    if (hook == "bprm_check_security") return "security_bprm_check";
    if (hook == "file_free_security") return "security_file_free";
    if (hook == "sk_free_security") return "security_sk_free";
    return "security_" + std::string(hook);
}

std::vector<FmodRetTarget> plan_fmod_ret(const struct bpf_object* obj) {
    const struct btf& btf = kernel_btf("the fmod_ret form");
    std::vector<FmodRetTarget> plan;
    struct bpf_program* prog;
    bpf_object__for_each_program(prog, const_cast<struct bpf_object*>(obj)) {
        std::string_view section = bpf_program__section_name(prog);
        if (section.substr(0, 4) != "lsm/") continue;
        FmodRetTarget t;
        t.program = bpf_program__name(prog);
        t.hook = std::string(section.substr(4));
        t.function = security_function_of(t.hook);
        const struct btf_type* fn = kernel_function_proto(btf, t.function);
        if (!fn)
            t.problem = t.function + " is not in this kernel's BTF (inlined, or not built)";
        else
            t.observe = fn->type == 0;  // returns void
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
