#include "kernel/pins.h"

#include <linux/magic.h>
#include <sys/statfs.h>

#include "base/error.h"

namespace liveguard::pins {

void require_bpffs() {
    struct statfs sfs {};
    if (::statfs(kBpffs, &sfs) != 0 || sfs.f_type != BPF_FS_MAGIC)
        throw Error(std::string("bpffs is not mounted at ") + kBpffs,
                    std::string("mount it: mount -t bpf bpf ") + kBpffs);
}

}  // namespace liveguard::pins
