#include "kernel/skeleton.h"

#include <cerrno>

#include "base/error.h"

namespace liveguard {

Skeleton open_skeleton(const std::string& relocation_btf) {
    LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = relocation_btf.empty() ? nullptr
                                                                                        : relocation_btf.c_str());
    Skeleton skel(liveguard_bpf__open_opts(&opts));
    if (!skel) throw_errno("cannot open the BPF object embedded in liveguard-bpf", errno);
    return skel;
}

}  // namespace liveguard
