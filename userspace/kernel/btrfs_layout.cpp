#include "kernel/btrfs_layout.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "kernel/kernel_btf.h"

namespace liveguard {
namespace {

struct BtfDeleter {
    void operator()(struct btf* b) const { btf__free(b); }
};

// The byte offset of `member` in the first struct `type` of `btf` that
// has it (a module's BTF may hold the same struct more than once).
std::optional<std::uint32_t> member_offset(const struct btf* btf, const char* type, const char* member) {
    for (__u32 id = 1; id < btf__type_cnt(btf); ++id) {
        const struct btf_type* t = btf__type_by_id(btf, id);
        if (!btf_is_struct(t) || std::strcmp(btf__name_by_offset(btf, t->name_off), type) != 0) continue;
        const struct btf_member* m = btf_members(t);
        for (int i = 0; i < btf_vlen(t); ++i)
            if (std::strcmp(btf__name_by_offset(btf, m[i].name_off), member) == 0 &&
                btf_member_bitfield_size(t, i) == 0)
                return btf_member_bit_offset(t, i) / 8;
    }
    return std::nullopt;
}

}  // namespace

std::optional<BtrfsLayout> btrfs_layout(std::string* why) {
    auto say = [&](std::string s) {
        if (why) *why = std::move(s);
        return std::nullopt;
    };
    const struct btf* kernel = nullptr;
    try {
        kernel = &kernel_btf("btrfs");
    } catch (const std::exception& e) {
        return say(e.what());
    }
    std::unique_ptr<struct btf, BtfDeleter> module;
    const struct btf* btf = kernel;
    if (!member_offset(kernel, "btrfs_root", "anon_dev")) {
        if (::access("/sys/kernel/btf/btrfs", R_OK) != 0) return say("btrfs is not loaded");
        module.reset(btf__load_module_btf("btrfs", const_cast<struct btf*>(kernel)));
        if (!module) return say(std::string("cannot read btrfs's BTF: ") + std::strerror(errno));
        btf = module.get();
    }
    auto vfs = member_offset(btf, "btrfs_inode", "vfs_inode");
    auto root = member_offset(btf, "btrfs_inode", "root");
    auto anon = member_offset(btf, "btrfs_root", "anon_dev");
    if (!vfs || !root || !anon) return say("btrfs's BTF has no btrfs_inode.vfs_inode, .root or btrfs_root.anon_dev");
    return BtrfsLayout{*vfs, *root, *anon};
}

}  // namespace liveguard
