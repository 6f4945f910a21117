// SPDX-License-Identifier: GPL-2.0
/* Files that stop a service when written: a supervisor's control FIFO,
 * the files of a cgroup that holds it (v2) or of any cgroup v1 hierarchy,
 * every file of its /proc/<pid>/, any process's OOM score, /proc/sysrq-trigger, /proc/sys (a
 * core_pattern or modprobe helper runs outside every session; realtime
 * throttling switched off lets spinners starve the machine), /sys/power
 * and securityfs. Checked when
 * such a file is opened for writing, and again at every write: a file
 * opened before the session, or passed in by someone else, is written
 * through without a new open. Everything else is ruled out by the
 * filesystem's magic and the file type. */
#include "lib/hook.h"
#include "lib/gate.h"
#include "lib/inodes.h"
#include "lib/trees.h"
#include "lib/mapped.h"
#include "lib/write_size.h"

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

static __always_inline int cgroup_file_write(struct file *file, __u64 session, __u32 detail)
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
	return refuse_object_act(session, LG_HOOK_CGROUP_FILE, d, id, detail, 0);
}

/* A sysctl of the member's own network namespace (one it made: not the
 * machine's) reaches nothing outside it. */
static __always_inline bool own_net_sysctl(struct ctl_table_header *h)
{
	struct net *net = bpf_get_current_task_btf()->nsproxy->net_ns;

	if (net->ns.inum == lg_host_net_ns)
		return false;
	return (void *)BPF_CORE_READ(h, set) == (void *)&net->sysctls;
}

/* The process a /proc/<pid>/... inode is about: proc_inode's struct pid,
 * read as plain kernel memory (the pointer is not one the verifier can
 * hand to task storage, hence lg_protected_pids). */
static __always_inline int proc_file_write(struct file *file, __u64 session, __u32 detail)
{
	struct dentry *d = file->f_path.dentry;
	struct inode *inode = file->f_inode;
	struct proc_inode *pi =
		(void *)inode - bpf_core_field_offset(struct proc_inode, vfs_inode);

	struct ctl_table_header *sysctl = BPF_CORE_READ(pi, sysctl);

	if (sysctl) {
		if (own_net_sysctl(sysctl))
			return 0;
		return refuse_object_act(session, LG_HOOK_SYSCTL, d, BPF_CORE_READ(inode, i_ino), detail, 0);
	}
	/* SysRq e/i/f signal or OOM-kill processes without any kill check. */
	if (name_is(d, "sysrq-trigger", 13))
		return refuse_object_act(session, LG_HOOK_PROC_FILE, d, 0, detail, 0);
	/* Every file of a protected process's /proc/<pid>/ and task/<tid>/
	 * directories, whichever it is: oom_score_adj makes it the OOM
	 * killer's first choice, autogroup and timerslack_ns slow it,
	 * clear_refs, coredump_filter, comm and attr/ change it. Files of
	 * no process (pid unset) are ruled on above. */
	struct pid *pid = BPF_CORE_READ(pi, pid);
	struct hlist_node *first = BPF_CORE_READ(pid, tasks[0].first);

	if (!first)
		return 0;
	struct task_struct *t = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	__u32 tgid = BPF_CORE_READ(t, tgid);
	bool protected = untyped_task_protected(t);
	/* A protected process's number may be missing from a full map: then
	 * no other process's files are a member's to write. */
	if (!protected && tgid != (__u32)(bpf_get_current_pid_tgid() >> 32)) {
		__u32 idx = LG_COUNTER_PROTECTED_PIDS_FULL;
		__u64 *full = bpf_map_lookup_elem(&lg_counters, &idx);

		protected = full && *full;
	}
	if (protected)
		return refuse_object_act(session, LG_HOOK_PROC_FILE, d, BPF_CORE_READ(inode, i_ino), detail, tgid);
	/* Members are the OOM killer's first choice (oom_score_adj 1000, set
	 * by the watcher, below which an unprivileged member cannot write);
	 * a root member could write itself, or any process, out of that
	 * order, so no member writes any process's OOM score. */
	if (name_is(d, "oom_score_adj", 13) || name_is(d, "oom_adj", 7))
		return refuse_object_act(session, LG_HOOK_OOM, d, BPF_CORE_READ(inode, i_ino),
					 detail | LG_OOM_SCORE_WRITE, tgid);
	return 0;
}

/* /sys/power/<file>: suspend, hibernate or freeze every task on the
 * machine. (A device's own power/ directory is deeper down.) */
static __always_inline bool power_file(struct dentry *d)
{
	struct dentry *dir = BPF_CORE_READ(d, d_parent);

	return BPF_CORE_READ(dir, d_parent) == BPF_CORE_READ(d, d_sb, s_root) && name_is(dir, "power", 5);
}

static __always_inline bool is_fifo(struct inode *inode)
{
	return (inode->i_mode & S_IFMT) == S_IFIFO;
}

/* A member's write or truncation of a file a protected process maps. */
static __always_inline int mapped_change(__u64 session, struct dentry *d, struct inode *inode, __u32 detail)
{
	int mapped = mapped_by_protected(inode);

	if (!mapped)
		return 0;
	return refuse_object_act(session, LG_HOOK_MAPPED, d, BPF_CORE_READ(inode, i_ino),
				 detail | (mapped == LG_MAPPED_WIDELY ? LG_MAPPED_DETAIL_WIDELY : 0), 0);
}

/* A write, or an open for writing, of `file`. `detail` tells the two
 * apart in the event. Every write on the machine comes here: the file's
 * kind rules out nearly all of them before any map is asked. */
static __noinline int candidate_writes(struct task_struct *leader, struct file *file, __u32 detail)
{
	__u64 session = session_of_candidate(leader);

	if (!session)
		return 0;
	struct inode *inode = file->f_inode;
	unsigned long magic = inode->i_sb->s_magic;
	bool special = magic == CGROUP2_SUPER_MAGIC || magic == PROC_SUPER_MAGIC ||
		       magic == CGROUP_SUPER_MAGIC || magic == SYSFS_MAGIC || magic == BINFMTFS_MAGIC ||
		       magic == SECURITYFS_MAGIC;
	struct lg_guarded_inode *g = 0;

	/* A regular file: only a protected tree or file can make it matter,
	 * or a protected process's mapping of it. */
	if (!special && (inode->i_mode & S_IFMT) == S_IFREG) {
		int refused = tree_change(session, file->f_path.dentry, LG_PATH_WRITE | detail);

		return refused ? refused : mapped_change(session, file->f_path.dentry, inode, LG_PATH_WRITE | detail);
	}
	/* Control FIFOs are named FIFOs; anonymous pipes never are. */
	if (!special && (!is_fifo(inode) || magic == PIPEFS_MAGIC))
		return 0;
	if (!special) {
		g = guarded_inode(inode);
		if (!g || (g->kind != LG_INODE_SUPERVISE_CONTROL && g->kind != LG_INODE_SVSCAN_CONTROL))
			return 0;
	}
	if (magic == CGROUP2_SUPER_MAGIC)
		return cgroup_file_write(file, session, detail);
	if (magic == CGROUP_SUPER_MAGIC)
		return refuse_object_act(session, LG_HOOK_CGROUP_FILE, file->f_path.dentry,
					 inode->i_ino, detail | LG_MOUNT_CGROUP_V1, 0);
	if (magic == PROC_SUPER_MAGIC)
		return proc_file_write(file, session, detail);
	/* binfmt_misc registers an interpreter every exec on the machine may
	 * run; /sys/kernel/uevent_helper a program the kernel starts: both
	 * outside every session, like a core_pattern helper. */
	if (magic == BINFMTFS_MAGIC ||
	    (magic == SYSFS_MAGIC && name_is(file->f_path.dentry, "uevent_helper", 13)))
		return refuse_object_act(session, LG_HOOK_SYSCTL, file->f_path.dentry, inode->i_ino,
					 detail, 0);
	if (magic == SYSFS_MAGIC && power_file(file->f_path.dentry))
		return refuse_object_act(session, LG_HOOK_POWER, file->f_path.dentry, inode->i_ino,
					 detail, 0);
	if (magic == SYSFS_MAGIC)
		return 0;
	/* Lockdown cannot be lifted again until a reboot, and the guard
	 * cannot be loaded under it; an LSM's policy can refuse anything. */
	if (magic == SECURITYFS_MAGIC)
		return refuse_object_act(session, LG_HOOK_SECURITYFS, file->f_path.dentry,
					 inode->i_ino, detail, 0);
	return refuse_object_act(session, LG_HOOK_CONTROL_FIFO, file->f_path.dentry, inode->i_ino,
				 detail | (g ? g->kind : 0), 0);
}

static __always_inline int guarded_write(struct file *file, __u32 detail)
{
	struct task_struct *leader = member_candidate();

	return leader ? candidate_writes(leader, file, detail) : 0;
}

LG_HOOK(file_open, lg_file_open, struct file *, file)
{
	if (ret || !(file->f_mode & FMODE_WRITE))
		return ret;
	return guarded_write(file, 0);
}

/* A descriptor for writing passed in (SCM_RIGHTS, pidfd_getfd): writes
 * through it are checked, but a pipe written with splice, vmsplice or tee
 * skips that check, so the descriptor itself is refused. */
LG_HOOK(file_receive, lg_file_receive, struct file *, file)
{
	if (ret || !(file->f_mode & FMODE_WRITE))
		return ret;
	return guarded_write(file, LG_DETAIL_OPEN_FD);
}

#define LG_PROT_WRITE 0x2
#define LG_MAP_TYPE 0x0f
#define LG_MAP_SHARED 0x01
#define LG_MAP_SHARED_VALIDATE 0x03
#define LG_VM_SHARED 0x08

/* A shared mapping for writing writes the file with no further hook, so
 * the mapping is refused where a write would be: a descriptor opened for
 * writing before the file was guarded or mapped, or passed in. (Opening
 * one for writing now is refused in file_open.) Every mmap on the machine
 * comes here: the protection and type rule out nearly all of them. */
LG_HOOK(mmap_file, lg_mmap_file, struct file *, file, unsigned long, prot, unsigned long, flags)
{
	if (ret || !file || !(prot & LG_PROT_WRITE) || !(file->f_mode & FMODE_WRITE))
		return ret;
	unsigned long type = flags & LG_MAP_TYPE;

	if (type != LG_MAP_SHARED && type != LG_MAP_SHARED_VALIDATE)
		return 0;
	return guarded_write(file, LG_DETAIL_SHARED_MAP | LG_DETAIL_OPEN_FD);
}

/* A shared mapping made read-only, then made writable. */
LG_HOOK(file_mprotect, lg_file_mprotect, struct vm_area_struct *, vma, unsigned long, prot)
{
	if (ret || !(prot & LG_PROT_WRITE))
		return ret;
	/* A typed load: the write checks read the file directly. */
	struct file *file = vma->vm_file;

	if (!file || !(BPF_CORE_READ(vma, vm_flags) & LG_VM_SHARED))
		return 0;
	return guarded_write(file, LG_DETAIL_SHARED_MAP | LG_DETAIL_OPEN_FD);
}

/* A member's write to a regular file on a filesystem a protected service
 * keeps its files on fails with ENOSPC once it would leave less than the
 * reserve, so the service still has room. The watcher measures the free
 * space; each member's write takes its size off that measurement here, at
 * once, so a writer faster than the measurements still stops at the
 * reserve. Calls that do not say their size (lib/write_size.h) stop at
 * the watcher's `low`, which allows for the rate the filesystem filled
 * at. In the fmod_ret form both programs of the hook take the size off
 * (lib/twins.h): between measurements the estimate errs towards the
 * reserve. */
static __noinline int candidate_fills(struct task_struct *leader, struct file *file)
{
	__u64 session = session_of_candidate(leader);

	if (!session)
		return 0;
	struct inode *inode = file->f_inode;

	if ((inode->i_mode & S_IFMT) != S_IFREG)
		return 0;
	__u32 dev = inode_dev(inode);
	struct lg_fs_space *space = bpf_map_lookup_elem(&lg_fs_space, &dev);

	if (!space)
		return 0;
	__s64 size = (__s64)current_write_size();
	/* Signed: writers that passed together may take it below zero. */
	__s64 avail = (__s64)space->avail;

	if (size < 0)
		size = 0;
	if (!space->low && avail - size >= (__s64)space->reserve) {
		__sync_fetch_and_add(&space->avail, -size);
		return 0;
	}
	if (door_allowed(LG_HOOK_FS_SPACE))
		return 0;
	report_object(LG_VERDICT_DENIED, LG_HOOK_FS_SPACE, session, file->f_path.dentry, avail > 0 ? avail : 0, 0, 0);
	return -ENOSPC;
}

/* Every write on the machine (write, pwrite, splice, copy_file_range,
 * fallocate, io_uring) passes here. */
LG_HOOK(file_permission, lg_file_permission, struct file *, file, int, mask)
{
	if (ret || !(mask & MAY_WRITE))
		return ret;
	struct task_struct *leader = member_candidate();

	if (!leader)
		return 0;
	int refused = candidate_writes(leader, file, LG_DETAIL_OPEN_FD);

	return refused ? refused : candidate_fills(leader, file);
}

/* Mode, owner, times and size (truncate, ftruncate, O_TRUNC) all pass
 * notify_change(). */
LG_HOOK(inode_setattr, lg_inode_setattr, struct dentry *, dentry, struct iattr *, attr)
{
	if (ret)
		return ret;
	__u64 session = member_session();
	int refused = tree_change(session, dentry, LG_PATH_SETATTR);

	if (refused || !session || !(BPF_CORE_READ(attr, ia_valid) & LG_ATTR_SIZE))
		return refused;
	return mapped_change(session, dentry, BPF_CORE_READ(dentry, d_inode), LG_PATH_SETATTR);
}

LG_HOOK(inode_setxattr, lg_inode_setxattr, struct dentry *, dentry)
{
	return ret ? ret : tree_change(member_session(), dentry, LG_PATH_XATTR);
}

LG_HOOK(inode_removexattr, lg_inode_removexattr, struct dentry *, dentry)
{
	return ret ? ret : tree_change(member_session(), dentry, LG_PATH_XATTR);
}

/* From 6.2 a POSIX ACL has hooks of its own: setfacl passes neither
 * inode_setxattr nor, though an access ACL rewrites the mode bits,
 * inode_setattr. Kernels before 6.2 load without these two (the loader
 * leaves them out), where inode_setxattr sees every ACL change. */
LG_HOOK(inode_set_acl, lg_inode_set_acl, struct dentry *, dentry)
{
	return ret ? ret : tree_change(member_session(), dentry, LG_PATH_XATTR);
}

LG_HOOK(inode_remove_acl, lg_inode_remove_acl, struct dentry *, dentry)
{
	return ret ? ret : tree_change(member_session(), dentry, LG_PATH_XATTR);
}

/* A lock or lease on a protected file, or one a protected process maps or
 * holds open, blocks the service that takes its own (a read-only
 * descriptor is enough for flock and F_RDLCK); letting one go is always
 * allowed. */
LG_HOOK(file_lock, lg_file_lock, struct file *, file, unsigned int, cmd)
{
	if (ret || cmd == LG_F_UNLCK)
		return ret;
	__u64 session = member_session();
	int refused = tree_change(session, file->f_path.dentry, LG_PATH_LOCK);

	if (refused || !session)
		return refused;
	refused = mapped_change(session, file->f_path.dentry, file->f_inode, LG_PATH_LOCK);
	if (refused)
		return refused;
	struct lg_guarded_inode *g = guarded_inode(file->f_inode);

	if (!g || g->kind != LG_INODE_HELD_OPEN)
		return 0;
	return refuse_object_act(session, LG_HOOK_MAPPED, file->f_path.dentry, file->f_inode->i_ino,
				 LG_PATH_LOCK | LG_MAPPED_DETAIL_HELD_OPEN, 0);
}
