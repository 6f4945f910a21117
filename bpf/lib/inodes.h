/* Files guarded by identity (device and inode, never by name, so a
 * symlink, a relative path or a bind mount reaches the same answer). */
#ifndef LG_BPF_INODES_H
#define LG_BPF_INODES_H

#include "maps.h"

static __always_inline struct lg_guarded_inode *guarded_inode(struct inode *inode)
{
	struct lg_inode_key key = {
		.dev = BPF_CORE_READ(inode, i_sb, s_dev),
		.ino = BPF_CORE_READ(inode, i_ino),
	};

	return bpf_map_lookup_elem(&lg_guarded_inodes, &key);
}

#endif
