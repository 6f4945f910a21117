#include "kernel/skeleton.h"

#include <cerrno>

#include "base/error.h"

namespace liveguard {

Skeleton open_skeleton() {
    Skeleton skel(liveguard_bpf__open());
    if (!skel) throw_errno("cannot open the BPF object embedded in liveguard-bpf", errno);
    return skel;
}

}  // namespace liveguard
