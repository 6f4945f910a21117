// SPDX-License-Identifier: GPL-2.0
/* Mounts. A member may mount and unmount only where nobody else sees it:
 * in a mount namespace other than the machine's, on mounts that do not
 * propagate back to it. It may never reach a cgroup v1 hierarchy (a v1
 * freezer freezes a service; release_agent runs a helper outside every
 * session), nor touch bpffs, which holds the pins that keep liveguard's
 * programs attached. */
#include "lib/hook.h"
#include "lib/gate.h"

static __always_inline bool in_host_mount_ns(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return t->nsproxy->mnt_ns->ns.inum == lg_host_mnt_ns;
}

static __always_inline bool shared(struct vfsmount *mnt)
{
	return BPF_CORE_READ(mnt, mnt_flags) & MNT_SHARED;
}

/* An unmount propagates to the peers of the mount's parent. */
static __always_inline bool parent_shared(struct vfsmount *mnt)
{
	struct mount *m = (void *)mnt - bpf_core_field_offset(struct mount, mnt);
	struct mount *parent = BPF_CORE_READ(m, mnt_parent);

	return parent && (BPF_CORE_READ(parent, mnt.mnt_flags) & MNT_SHARED);
}

/* Unmounting or mounting over bpffs drops or hides the pins (`unload` and
 * `status` would no longer see them). */
static __always_inline int bpffs_change(struct dentry *d)
{
	if (BPF_CORE_READ(d, d_sb, s_magic) != BPF_FS_MAGIC)
		return 0;
	return member_act_on_object(LG_HOOK_PINS, d, 0, 0, 0);
}

/* A mount change at `mnt` by a member: refused in the machine's mount
 * namespace, and anywhere it would propagate there. */
static __always_inline int mount_change(struct vfsmount *mnt, struct dentry *d, __u32 kind)
{
	if (!in_host_mount_ns() && !(mnt && shared(mnt)))
		return 0;
	return member_act_on_object(LG_HOOK_MOUNT, d, 0, kind, 0);
}

static __always_inline bool cgroup_v1(const char *type)
{
	char t[8] = {};

	if (!type || bpf_probe_read_kernel_str(t, sizeof(t), type) != 7)
		return false;
	return t[0] == 'c' && t[1] == 'g' && t[2] == 'r' && t[3] == 'o' && t[4] == 'u' &&
	       t[5] == 'p' && t[6] == 0;
}

LG_HOOK(sb_mount, lg_sb_mount, const struct path *, path, const char *, type, unsigned long, flags)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	struct dentry *d = BPF_CORE_READ(path, dentry);
	int r = bpffs_change(d);

	if (r)
		return r;
	if (cgroup_v1(type))
		return member_act_on_object(LG_HOOK_MOUNT, d, 0, LG_MOUNT_CGROUP_V1, 0);
	/* A remount of a superblock (not of a bind mount) changes it in
	 * every namespace that shows it. */
	if ((flags & MS_REMOUNT) && !(flags & MS_BIND))
		return member_act_on_object(LG_HOOK_MOUNT, d, 0, LG_MOUNT_MOUNT, 0);
	/* Changing how its own mounts propagate is how a namespace is made
	 * private in the first place. The kernel takes remount, bind and
	 * move before propagation flags: only a pure propagation change is
	 * one. */
	if ((flags & (MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)) &&
	    !(flags & (MS_REMOUNT | MS_BIND | MS_MOVE)) && !in_host_mount_ns())
		return 0;
	return mount_change(BPF_CORE_READ(path, mnt), d, LG_MOUNT_MOUNT);
}

LG_HOOK(sb_umount, lg_sb_umount, struct vfsmount *, mnt)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	struct dentry *root = BPF_CORE_READ(mnt, mnt_root);
	int r = bpffs_change(root);

	if (r)
		return r;
	if (parent_shared(mnt))
		return member_act_on_object(LG_HOOK_MOUNT, root, 0, LG_MOUNT_UMOUNT, 0);
	return mount_change(mnt, root, LG_MOUNT_UMOUNT);
}

/* The new mount API attaches here (fsmount, open_tree, move_mount). */
LG_HOOK(move_mount, lg_move_mount, const struct path *, from_path, const struct path *, to_path)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	struct dentry *to = BPF_CORE_READ(to_path, dentry);
	int r = bpffs_change(to);

	if (r)
		return r;
	if (BPF_CORE_READ(from_path, dentry, d_sb, s_magic) == CGROUP_SUPER_MAGIC)
		return member_act_on_object(LG_HOOK_MOUNT, to, 0, LG_MOUNT_CGROUP_V1, 0);
	return mount_change(BPF_CORE_READ(to_path, mnt), to, LG_MOUNT_MOVE);
}

/* fspick() + fsconfig() reconfigure a superblock for every namespace
 * that shows it, with no remount hook: refused at its parameters. */
LG_HOOK(fs_context_parse_param, lg_fs_param, struct fs_context *, fc)
{
	if (ret)
		return ret;
	if (BPF_CORE_READ_BITFIELD_PROBED(fc, purpose) != FS_CONTEXT_FOR_RECONFIGURE)
		return 0;
	if (!member_session())
		return 0;
	return member_act_on_object(LG_HOOK_MOUNT, BPF_CORE_READ(fc, root), 0, LG_MOUNT_MOUNT, 0);
}

LG_HOOK(sb_pivotroot, lg_sb_pivotroot, const struct path *, old_path, const struct path *, new_path)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	return mount_change(BPF_CORE_READ(old_path, mnt), BPF_CORE_READ(new_path, dentry),
			    LG_MOUNT_PIVOT_ROOT);
}
