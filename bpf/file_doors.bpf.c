// SPDX-License-Identifier: GPL-2.0
/* Files that stop a service when written: a supervisor's control FIFO,
 * the files of a cgroup that holds it, its /proc/<pid>/oom_* files, and
 * /proc/sysrq-trigger. One hook, file_open for writing; everything else
 * it sees is ruled out by the filesystem's magic and an inode lookup. */
#include "lib/gate.h"
#include "lib/inodes.h"

static __always_inline bool name_is(struct dentry *d, const char *want, int len)
{
	char buf[16] = {};

	if (bpf_probe_read_kernel_str(buf, sizeof(buf), BPF_CORE_READ(d, d_name.name)) != len + 1)
		return false;
	for (int i = 0; i < len && i < 16; i++)
		if (buf[i] != want[i])
			return false;
	return true;
}

static __always_inline int cgroup_file_open(struct file *file, __u64 session)
{
	struct dentry *d = file->f_path.dentry;
	struct kernfs_node *dir = BPF_CORE_READ(d, d_parent, d_inode, i_private);
	__u64 id = BPF_CORE_READ(dir, id);
	struct cgroup *cg = BPF_CORE_READ(dir, priv);

	/* Moving a process is refused wherever it would go: the kernel gives
	 * no hook that names the process being moved, and a move could take
	 * a member out of its session or a protected process out of its
	 * protected cgroup. */
	bool move = name_is(d, "cgroup.procs", 12) || name_is(d, "cgroup.threads", 14);

	if (!move && !cgroup_guarded(cg, id))
		return 0;
	return refuse_object_act(session, LG_HOOK_CGROUP_FILE, d, id, 0, 0);
}

/* The process a /proc/<pid>/... inode is about: proc_inode's struct pid,
 * read as plain kernel memory (the pointer is not one the verifier can
 * hand to task storage, hence lg_protected_pids). */
static __always_inline int proc_file_open(struct file *file, __u64 session)
{
	struct dentry *d = file->f_path.dentry;

	/* SysRq e/i/f signal or OOM-kill processes without any kill check. */
	if (name_is(d, "sysrq-trigger", 13))
		return refuse_object_act(session, LG_HOOK_PROC_FILE, d, 0, 0, 0);
	if (!name_is(d, "oom_score_adj", 13) && !name_is(d, "oom_adj", 7))
		return 0;
	struct inode *inode = file->f_inode;
	struct proc_inode *pi =
		(void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);
	struct pid *pid = BPF_CORE_READ(pi, pid);
	struct hlist_node *first = BPF_CORE_READ(pid, tasks[0].first);

	if (!first)
		return 0;
	struct task_struct *t = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	__u32 tgid = BPF_CORE_READ(t, tgid);
	__u64 ticks = BPF_CORE_READ(t, group_leader, start_boottime) / NSEC_PER_USER_TICK;
	__u64 *known = bpf_map_lookup_elem(&lg_protected_pids, &tgid);
	bool protected = known && *known == ticks;

	if (!protected && any(LG_SETTING_PROTECTED_CGROUPS))
		protected = cgroup_protected_untyped(BPF_CORE_READ(t, cgroups, dfl_cgrp));
	if (!protected)
		return 0;
	return refuse_object_act(session, LG_HOOK_PROC_FILE, d, BPF_CORE_READ(inode, i_ino), 0, tgid);
}

SEC("lsm/file_open")
int BPF_PROG(lg_file_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	if (!(file->f_mode & FMODE_WRITE))
		return 0;
	if (!sessions_exist())
		return 0;
	struct inode *inode = file->f_inode;
	unsigned long magic = inode->i_sb->s_magic;
	struct lg_guarded_inode *g = 0;

	if (magic != CGROUP2_SUPER_MAGIC && magic != PROC_SUPER_MAGIC) {
		g = guarded_inode(inode);
		if (!g || (g->kind != LG_INODE_SUPERVISE_CONTROL && g->kind != LG_INODE_SVSCAN_CONTROL))
			return 0;
	}
	/* Membership before the name checks: they are probe reads, and
	 * every process on the machine writes cgroup and /proc files. */
	__u64 session = member_session();
	if (!session)
		return 0;
	if (magic == CGROUP2_SUPER_MAGIC)
		return cgroup_file_open(file, session);
	if (magic == PROC_SUPER_MAGIC)
		return proc_file_open(file, session);
	return refuse_object_act(session, LG_HOOK_CONTROL_FIFO, file->f_path.dentry, inode->i_ino,
				 g ? g->kind : 0, 0);
}
