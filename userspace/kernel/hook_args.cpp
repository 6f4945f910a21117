#include "kernel/hook_args.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <string_view>

#include "base/error.h"
#include "kernel/fmod_ret.h"
#include "kernel/kernel_btf.h"

namespace liveguard {
namespace {

constexpr std::string_view kStructPrefix = "lg_args_";
constexpr const char* kRet = "ret";

struct BtfDeleter {
    void operator()(struct btf* b) const { btf__free(b); }
};

// An argument's name as the hook's programs use it: newer kernels mark an
// argument that may be NULL for the verifier by a suffix (7.x:
// bpf_lsm_mmap_file's `file__nullable`), which names the same argument.
std::string param_name(const struct btf& btf, const struct btf_param& p) {
    const char* n = btf__name_by_offset(&btf, p.name_off);
    std::string name = n ? n : "";
    constexpr std::string_view kNullable = "__nullable";
    if (name.size() > kNullable.size() && name.ends_with(kNullable)) name.resize(name.size() - kNullable.size());
    return name;
}

// The argument names of `proto`, in order.
std::vector<std::string> param_names(const struct btf& btf, const struct btf_type* proto) {
    std::vector<std::string> out;
    const struct btf_param* p = btf_params(proto);
    for (int i = 0; i < btf_vlen(proto); ++i) out.push_back(param_name(btf, p[i]));
    return out;
}

void write_all(int fd, const void* data, std::size_t size) {
    auto* p = static_cast<const char*>(data);
    while (size) {
        ssize_t n = ::write(fd, p, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw_errno("cannot write the BTF the programs are relocated against", errno);
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

}  // namespace

std::vector<HookArgs> declared_hook_args(const struct bpf_object* obj) {
    std::vector<HookArgs> out;
    const struct btf* btf = bpf_object__btf(obj);
    if (!btf) return out;
    for (__u32 id = 1; id < btf__type_cnt(btf); ++id) {
        const struct btf_type* t = btf__type_by_id(btf, id);
        if (!btf_is_struct(t)) continue;
        std::string_view name = btf__name_by_offset(btf, t->name_off);
        if (name.substr(0, kStructPrefix.size()) != kStructPrefix) continue;
        HookArgs a;
        a.hook = std::string(name.substr(kStructPrefix.size()));
        const struct btf_member* m = btf_members(t);
        for (int i = 0; i < btf_vlen(t); ++i) {
            std::string member = btf__name_by_offset(btf, m[i].name_off);
            if (member == kRet)
                a.reads_ret = true;
            else
                a.names.push_back(std::move(member));
        }
        out.push_back(std::move(a));
    }
    return out;
}

std::string hook_function(std::string_view hook, Attach attach) {
    return attach == Attach::FmodRet ? security_function_of(hook) : "bpf_lsm_" + std::string(hook);
}

std::string unresolved_args(const struct btf& kernel, const HookArgs& args, const std::string& function) {
    const struct btf_type* proto = kernel_function_proto(kernel, function);
    if (!proto) return function + " is not in this kernel's BTF";
    auto have = param_names(kernel, proto);
    std::string missing;
    for (const auto& n : args.names)
        if (std::find(have.begin(), have.end(), n) == have.end()) missing += (missing.empty() ? "" : ", ") + n;
    if (missing.empty()) return {};
    std::string list;
    for (const auto& h : have) list += (list.empty() ? "" : ", ") + h;
    return function + " takes no argument named " + missing + " on this kernel (it takes " + list +
           "): the program does not know this form of the hook";
}

std::map<std::string, std::string> unresolved_hooks(const struct bpf_object* obj, Attach attach) {
    const struct btf& kernel = kernel_btf("reading the hooks' arguments");
    std::map<std::string, std::string> out;
    for (const auto& args : declared_hook_args(obj))
        if (auto why = unresolved_args(kernel, args, hook_function(args.hook, attach)); !why.empty())
            out[args.hook] = why;
    return out;
}

HookArgsBtf::HookArgsBtf(const struct bpf_object* obj, Attach attach) {
    const struct btf& kernel = kernel_btf("reading the hooks' arguments");
    // A copy: the kernel's stays as read, for the other form.
    std::unique_ptr<struct btf, BtfDeleter> out(btf__new_empty());
    if (!out) throw_errno("cannot make a BTF for the programs' arguments", errno);
    if (int err = btf__add_btf(out.get(), &kernel); err < 0)
        throw_errno("cannot copy the kernel's BTF", -err);
    int u64 = btf__add_int(out.get(), "unsigned long long", 8, 0);
    if (u64 < 0) throw_errno("cannot extend the kernel's BTF", -u64);
    for (const auto& args : declared_hook_args(obj)) {
        std::string function = hook_function(args.hook, attach);
        if (!unresolved_args(kernel, args, function).empty()) continue;
        const struct btf_type* proto = kernel_function_proto(kernel, function);
        auto names = param_names(kernel, proto);
        std::size_t slots = names.size() + (proto->type != 0 ? 1 : 0);
        int id = btf__add_struct(out.get(), (std::string(kStructPrefix) + args.hook).c_str(),
                                 static_cast<__u32>(8 * slots));
        if (id < 0) throw_errno("cannot extend the kernel's BTF", -id);
        for (std::size_t i = 0; i < names.size(); ++i)
            if (!names[i].empty())
                btf__add_field(out.get(), names[i].c_str(), u64, static_cast<__u32>(64 * i), 0);
        // A hook that returns a verdict passes the one so far after its
        // arguments.
        if (proto->type != 0) btf__add_field(out.get(), kRet, u64, static_cast<__u32>(64 * names.size()), 0);
    }
    __u32 size = 0;
    const void* raw = btf__raw_data(out.get(), &size);
    if (!raw) throw_errno("cannot write the BTF the programs are relocated against", errno);
    fd_.reset(::memfd_create("liveguard-hook-args", MFD_CLOEXEC));
    if (!fd_) throw_errno("cannot create a file for the programs' BTF (memfd_create)", errno);
    write_all(fd_.get(), raw, size);
    path_ = "/proc/self/fd/" + std::to_string(fd_.get());
}

}  // namespace liveguard
