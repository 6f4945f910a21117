/* Files guarded by identity (device and inode, never by name, so a
 * symlink, a relative path or a bind mount reaches the same answer). */
#ifndef LG_BPF_INODES_H
#define LG_BPF_INODES_H

#include "maps.h"

#define BTRFS_SUPER_MAGIC 0x9123683E

/* The identity is the one stat() gives, which userspace keys files by.
 * That is the superblock's device, but for btrfs: there every subvolume
 * (a snapshot is one too) numbers its inodes anew, and stat() reports the
 * subvolume's anonymous device (btrfs_getattr(): BTRFS_I(inode)->root->
 * anon_dev). Its types live in the btrfs module's BTF, which CO-RE here
 * does not search, so the loader reads the three offsets from it and sets
 * them; lg_btrfs_known stays false where btrfs is not loaded when the
 * guard is, and the verifier then drops this path. */
const volatile bool lg_btrfs_known __weak = false;
const volatile __u32 lg_btrfs_inode_vfs_inode __weak = 0; /* struct btrfs_inode */
const volatile __u32 lg_btrfs_inode_root __weak = 0;
const volatile __u32 lg_btrfs_root_anon_dev __weak = 0;  /* struct btrfs_root */

/* Whether inodes of `sb` are keyed by their subvolume. */
static __always_inline bool by_subvolume(struct super_block *sb)
{
	return lg_btrfs_known && BPF_CORE_READ(sb, s_magic) == BTRFS_SUPER_MAGIC;
}

/* The anonymous device of the btrfs subvolume `inode` is in. */
static __noinline __u32 subvolume_dev(__u64 inode)
{
	__u64 root = 0;
	__u32 dev = 0;

	bpf_probe_read_kernel(&root, sizeof(root),
			      (void *)(inode - lg_btrfs_inode_vfs_inode + lg_btrfs_inode_root));
	bpf_probe_read_kernel(&dev, sizeof(dev), (void *)(root + lg_btrfs_root_anon_dev));
	return dev;
}

static __always_inline __u32 inode_dev(struct inode *inode)
{
	struct super_block *sb = BPF_CORE_READ(inode, i_sb);

	return by_subvolume(sb) ? subvolume_dev((__u64)inode) : BPF_CORE_READ(sb, s_dev);
}

static __always_inline struct lg_guarded_inode *guarded_inode(struct inode *inode)
{
	struct lg_inode_key key = {
		.dev = inode_dev(inode),
		.ino = BPF_CORE_READ(inode, i_ino),
	};

	return bpf_map_lookup_elem(&lg_guarded_inodes, &key);
}

#endif
