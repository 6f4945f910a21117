// SPDX-License-Identifier: GPL-2.0
/* Self-protection: a member may not switch the guard off. Liveguard's
 * maps, programs and links are out of its reach, and so are the bpffs
 * pins that keep them alive after the loader exits. */
#include "lib/gate.h"
#include "lib/inodes.h"

static __always_inline bool ours(const char *name)
{
	char n[3] = {};

	bpf_probe_read_kernel(n, sizeof(n), name);
	return n[0] == 'l' && n[1] == 'g' && n[2] == '_';
}

/* A member may read liveguard's maps (discovery is harmless) but get no
 * writable fd to them, and no fd to its programs. */
SEC("lsm/bpf_map")
int BPF_PROG(lg_bpf_map, struct bpf_map *map, fmode_t fmode, int ret)
{
	if (ret)
		return ret;
	if (!(fmode & FMODE_WRITE) || !sessions_exist())
		return 0;
	if (!ours(map->name))
		return 0;
	return member_act_on_object(LG_HOOK_BPF, 0, map->id, 0, 0);
}

SEC("lsm/bpf_prog")
int BPF_PROG(lg_bpf_prog, struct bpf_prog *prog, int ret)
{
	if (ret)
		return ret;
	if (!sessions_exist())
		return 0;
	if (!ours(prog->aux->name))
		return 0;
	return member_act_on_object(LG_HOOK_BPF, 0, prog->aux->id, 0, 0);
}

/* Links have no hook of their own: a member may not detach, replace or
 * look up any link by id. */
SEC("lsm/bpf")
int BPF_PROG(lg_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	if (ret)
		return ret;
	if (cmd != BPF_LINK_DETACH && cmd != BPF_LINK_UPDATE && cmd != BPF_LINK_GET_FD_BY_ID &&
	    cmd != BPF_PROG_DETACH)
		return 0;
	if (!sessions_exist())
		return 0;
	return member_act_on_object(LG_HOOK_BPF, 0, 0, cmd, 0);
}

static __always_inline bool is_pin_dir(struct inode *inode)
{
	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != BPF_FS_MAGIC)
		return false;
	struct lg_guarded_inode *g = guarded_inode(inode);

	return g && g->kind == LG_INODE_PIN_DIR;
}

/* An entry of the pin directory, or the directory itself, changed. */
static __always_inline int pin_change(struct inode *dir, struct dentry *d)
{
	if (!sessions_exist())
		return 0;
	if (!is_pin_dir(dir) && !is_pin_dir(BPF_CORE_READ(d, d_inode)))
		return 0;
	return member_act_on_object(LG_HOOK_PINS, d, BPF_CORE_READ(dir, i_ino), 0, 0);
}

SEC("lsm/inode_unlink")
int BPF_PROG(lg_inode_unlink, struct inode *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : pin_change(dir, dentry);
}

SEC("lsm/inode_rmdir")
int BPF_PROG(lg_inode_rmdir, struct inode *dir, struct dentry *dentry, int ret)
{
	return ret ? ret : pin_change(dir, dentry);
}

SEC("lsm/inode_create")
int BPF_PROG(lg_inode_create, struct inode *dir, struct dentry *dentry, umode_t mode, int ret)
{
	return ret ? ret : pin_change(dir, dentry);
}

/* security_inode_rename() passes the rename flags after the four
 * arguments the LSM hook has, so the return value so far sits one slot
 * later there. The other slot is never read in a mode: the verifier drops
 * the branch the read-only flag rules out. */
SEC("lsm/inode_rename")
int BPF_PROG(lg_inode_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry)
{
	int ret;

	if (lg_fmod_ret)
		ret = (int)LG_CTX_WORD(ctx, 40);
	else
		ret = (int)LG_CTX_WORD(ctx, 32);
	if (ret)
		return ret;
	int r = pin_change(old_dir, old_dentry);

	return r ? r : pin_change(new_dir, new_dentry);
}

/* Unmounting the last bpffs mount would drop the pins, and with them the
 * links. */
SEC("lsm/sb_umount")
int BPF_PROG(lg_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	if (!sessions_exist())
		return 0;
	if (BPF_CORE_READ(mnt, mnt_sb, s_magic) != BPF_FS_MAGIC)
		return 0;
	return member_act_on_object(LG_HOOK_PINS, BPF_CORE_READ(mnt, mnt_root), 0, 0, 0);
}

/* Mounting over bpffs hides the pins from `unload` and `status` (old or
 * new mount API alike). */
static __always_inline int mount_over(const struct path *target)
{
	if (!sessions_exist())
		return 0;
	if (BPF_CORE_READ(target, dentry, d_sb, s_magic) != BPF_FS_MAGIC)
		return 0;
	return member_act_on_object(LG_HOOK_PINS, BPF_CORE_READ(target, dentry), 0, 0, 0);
}

SEC("lsm/sb_mount")
int BPF_PROG(lg_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	return ret ? ret : mount_over(path);
}

SEC("lsm/move_mount")
int BPF_PROG(lg_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	return ret ? ret : mount_over(to_path);
}
