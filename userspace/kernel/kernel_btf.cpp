#include "kernel/kernel_btf.h"

#include <bpf/btf.h>

#include <cerrno>
#include <memory>

#include "base/error.h"

namespace liveguard {
namespace {

struct BtfDeleter {
    void operator()(struct btf* b) const { btf__free(b); }
};

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

const struct btf& kernel_btf(const std::string& needed_for) {
    const VmlinuxBtf& v = vmlinux_btf();
    if (!v.btf)
        throw_errno("cannot read the kernel's BTF (/sys/kernel/btf/vmlinux), which " + needed_for + " needs",
                    v.error, "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");
    return *v.btf;
}

const struct btf_type* kernel_function_proto(const struct btf& btf, const std::string& name) {
    int id = btf__find_by_name_kind(&btf, name.c_str(), BTF_KIND_FUNC);
    if (id < 0) return nullptr;
    const struct btf_type* func = btf__type_by_id(&btf, id);
    const struct btf_type* proto = func ? btf__type_by_id(&btf, func->type) : nullptr;
    return proto && btf_is_func_proto(proto) ? proto : nullptr;
}

std::set<std::string> kernel_functions_among(const std::vector<std::string>& names) {
    std::set<std::string> present;
    const struct btf* btf = vmlinux_btf().btf.get();
    if (!btf) return present;
    for (const auto& n : names)
        if (kernel_function_proto(*btf, n)) present.insert(n);
    return present;
}

}  // namespace liveguard
