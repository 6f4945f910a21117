// SPDX-License-Identifier: GPL-2.0
/* Self-protection: a member may not switch the guard off. Liveguard's
 * maps, programs and links are out of its reach, and so are the bpffs
 * pins that keep them alive after the loader exits. The directory-entry
 * hooks here also keep control FIFOs where the watcher found them and
 * protected trees as they are (lib/trees.h). */
#include "lib/hook.h"
#include "lib/gate.h"
#include "lib/inodes.h"
#include "lib/trees.h"

static __always_inline bool ours(const char *name)
{
	char n[3] = {};

	bpf_probe_read_kernel(n, sizeof(n), name);
	return n[0] == 'l' && n[1] == 'g' && n[2] == '_';
}

/* A member may read liveguard's maps (discovery is harmless) but get no
 * writable fd to them, and no fd to its programs. */
LG_HOOK(bpf_map, lg_bpf_map, struct bpf_map *, map, fmode_t, fmode)
{
	if (ret)
		return ret;
	if (!(fmode & FMODE_WRITE) || !member_session())
		return 0;
	if (!ours(map->name))
		return 0;
	return member_act_on_object(LG_HOOK_BPF, 0, map->id, 0, 0);
}

LG_HOOK(bpf_prog, lg_bpf_prog, struct bpf_prog *, prog)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	if (!ours(prog->aux->name))
		return 0;
	return member_act_on_object(LG_HOOK_BPF, 0, prog->aux->id, 0, 0);
}

/* Links have no hook of their own: a member may not detach, replace or
 * look up any link by id. Nor may it load a program at all: one could
 * call bpf_send_signal on a service, or write liveguard's maps through an
 * fd obtained read-only (the verifier does not honour the fd's mode). */
LG_HOOK(bpf, lg_bpf, int, cmd)
{
	if (ret)
		return ret;
	if (cmd == BPF_PROG_LOAD) {
		if (!member_session())
			return 0;
		return member_act_on_object(LG_HOOK_BPF_LOAD, 0, 0, cmd, 0);
	}
	if (cmd != BPF_LINK_DETACH && cmd != BPF_LINK_UPDATE && cmd != BPF_LINK_GET_FD_BY_ID &&
	    cmd != BPF_PROG_DETACH)
		return 0;
	if (!member_session())
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

/* A supervisor's control FIFO, renamed or removed, is re-resolved by the
 * watcher under its new name; a member may not move it about. */
static __always_inline bool is_control_fifo(struct inode *inode)
{
	if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFIFO)
		return false;
	struct lg_guarded_inode *g = guarded_inode(inode);

	return g && (g->kind == LG_INODE_SUPERVISE_CONTROL || g->kind == LG_INODE_SVSCAN_CONTROL);
}

/* An entry of the pin directory, or the directory itself, changed; or a
 * control FIFO renamed, linked or removed; by a member of `session`. */
static __always_inline int pin_change(__u64 session, struct inode *dir, struct dentry *d)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	if (is_pin_dir(dir) || is_pin_dir(inode))
		return refuse_object_act(session, LG_HOOK_PINS, d, BPF_CORE_READ(dir, i_ino), 0, 0);
	if (is_control_fifo(inode))
		return refuse_object_act(session, LG_HOOK_CONTROL_FIFO, d, BPF_CORE_READ(inode, i_ino),
					 LG_DETAIL_RENAME, 0);
	return 0;
}

static __noinline int candidate_name_change(struct task_struct *leader, struct inode *dir,
					    struct dentry *d, __u32 op)
{
	__u64 session = session_of_candidate(leader);

	if (!session)
		return 0;
	int r = pin_change(session, dir, d);

	return r ? r : tree_change(session, d, op);
}

/* Any change to a directory's entries: liveguard's pins and control FIFOs
 * first, then protected trees and files. */
static __always_inline int name_change(struct inode *dir, struct dentry *d, __u32 op)
{
	struct task_struct *leader = member_candidate();

	return leader ? candidate_name_change(leader, dir, d, op) : 0;
}

LG_HOOK(inode_unlink, lg_inode_unlink, struct inode *, dir, struct dentry *, dentry)
{
	return ret ? ret : name_change(dir, dentry, LG_PATH_UNLINK);
}

LG_HOOK(inode_rmdir, lg_inode_rmdir, struct inode *, dir, struct dentry *, dentry)
{
	return ret ? ret : name_change(dir, dentry, LG_PATH_RMDIR);
}

LG_HOOK(inode_create, lg_inode_create, struct inode *, dir, struct dentry *, dentry)
{
	return ret ? ret : name_change(dir, dentry, LG_PATH_CREATE);
}

/* Hard links, symlinks, directories and device nodes made in the pin
 * directory would outlive `unload`, which removes only what it pinned; a
 * hard link to a control FIFO would keep it under a name nobody guards. */
LG_HOOK(inode_link, lg_inode_link, struct dentry *, old_dentry, struct inode *, dir,
	struct dentry *, new_dentry)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	/* The narrower doors first, for both names: the event then says a
	 * control FIFO was linked rather than that a tree changed. */
	int r = pin_change(session, dir, new_dentry);

	if (!r)
		r = pin_change(session, dir, old_dentry);
	if (!r)
		r = tree_change(session, new_dentry, LG_PATH_LINK);
	return r ? r : tree_change(session, old_dentry, LG_PATH_LINK);
}

LG_HOOK(inode_symlink, lg_inode_symlink, struct inode *, dir, struct dentry *, dentry)
{
	return ret ? ret : name_change(dir, dentry, LG_PATH_SYMLINK);
}

LG_HOOK(inode_mkdir, lg_inode_mkdir, struct inode *, dir, struct dentry *, dentry)
{
	return ret ? ret : name_change(dir, dentry, LG_PATH_MKDIR);
}

LG_HOOK(inode_mknod, lg_inode_mknod, struct inode *, dir, struct dentry *, dentry)
{
	return ret ? ret : name_change(dir, dentry, LG_PATH_CREATE);
}

/* security_inode_rename() also passes the rename flags: read by name,
 * the arguments and `ret` are found in either form. */
LG_HOOK(inode_rename, lg_inode_rename, struct inode *, old_dir, struct dentry *, old_dentry,
	struct inode *, new_dir, struct dentry *, new_dentry)
{
	if (ret)
		return ret;
	__u64 session = member_session();

	if (!session)
		return 0;
	int r = pin_change(session, old_dir, old_dentry);

	if (!r)
		r = pin_change(session, new_dir, new_dentry);
	if (!r)
		r = tree_change(session, old_dentry, LG_PATH_RENAME);
	return r ? r : tree_change(session, new_dentry, LG_PATH_RENAME);
}
