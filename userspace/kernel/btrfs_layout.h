#pragma once
// Where btrfs keeps a file's subvolume device, which stat() reports and
// the hooks must key files by (bpf/lib/inodes.h): the offsets of
// btrfs_inode.vfs_inode, btrfs_inode.root and btrfs_root.anon_dev in the
// running kernel, read from btrfs's BTF (the module's, or the kernel's own
// where btrfs is built in).
#include <cstdint>
#include <optional>
#include <string>

namespace liveguard {

struct BtrfsLayout {
    std::uint32_t inode_vfs_inode = 0;
    std::uint32_t inode_root = 0;
    std::uint32_t root_anon_dev = 0;
};

// Nothing when btrfs is not in this kernel now (not loaded) or its BTF
// lacks one of the members; `why` then says which.
std::optional<BtrfsLayout> btrfs_layout(std::string* why = nullptr);

}  // namespace liveguard
