#pragma once
// Owners of libbpf's objects: the skeleton (the BPF object embedded in
// this binary) and an attached link. Each is destroyed exactly once; a
// link destroyed without a pin detaches its program.
#include <memory>
#include <string>

#include "liveguard.skel.h"

namespace liveguard {

struct SkeletonDeleter {
    void operator()(struct liveguard_bpf* s) const { liveguard_bpf__destroy(s); }
};
using Skeleton = std::unique_ptr<struct liveguard_bpf, SkeletonDeleter>;

struct LinkDeleter {
    void operator()(struct bpf_link* l) const { bpf_link__destroy(l); }
};
using Link = std::unique_ptr<struct bpf_link, LinkDeleter>;

// Opens the embedded object (parses it; loads nothing into the kernel).
// `relocation_btf`: a BTF file CO-RE relocates against instead of the
// kernel's (kernel/hook_args.h).
Skeleton open_skeleton(const std::string& relocation_btf = {});

}  // namespace liveguard
