/* Protected trees and files ([[protect]] path, PID files, s6 service
 * directories): a member's change to anything at or below a protected
 * directory, or to a protected file under any of its names, is refused.
 * Matched by identity: the walk goes up the dentry tree from the object,
 * asking at each level whether that inode is protected, so a symlink, a
 * relative path, `..` or a second bind mount of the same filesystem
 * arrives at the same directories as the name the policy gave. */
#ifndef LG_BPF_TREES_H
#define LG_BPF_TREES_H

#include "gate.h"
#include "inodes.h"

/* bpf_loop state: in this frame's stack, read and written by the callback. */
struct tree_walk {
	__u64 d;          /* the dentry at this level, as an address */
	__u64 exact_seen; /* [[protect]] tables whose except names were passed */
	__u64 suffix_seen;
	__u64 object;     /* the protected directory or file found */
	__u32 source;
	__u32 state;      /* TREE_* below */
	__u32 dev;        /* the filesystem's: one walk never leaves it */
	__u16 names;      /* read the names against the except lists */
	__u16 subvolumes; /* btrfs: each level's device is its subvolume's */
};

#define TREE_WALKING 0
#define TREE_PROTECTED 1
#define TREE_FREE 2

/* FNV-1a of buf up to its NUL; with `from_dot`, of the part from its last
 * '.' on (0 when it has none). */
static __always_inline __u64 name_hash(const char *buf, bool from_dot)
{
	__u64 h = LG_FNV_OFFSET;
	bool dotted = false;

	for (int i = 0; i < LG_EXCEPT_NAME_LEN; i++) {
		unsigned char c = buf[i];

		if (!c)
			break;
		if (from_dot && c == '.') {
			h = LG_FNV_OFFSET;
			dotted = true;
		}
		h = (h ^ c) * LG_FNV_PRIME;
	}
	return from_dot && !dotted ? 0 : h;
}

/* The level's name against the except lists. A whole name counts at every
 * level (everything below an excepted directory is writable); a suffix
 * ("*.pyc") only for the object itself, so that a directory named like a
 * file it lets through opens no subtree. Names are read up to
 * LG_EXCEPT_NAME_LEN - 2 bytes; a longer one matches no whole name, and
 * its suffix is read from its last bytes. */
static __always_inline void note_except_names(struct dentry *d, __u32 level, struct tree_walk *w)
{
	char name[LG_EXCEPT_NAME_LEN] = {};
	const unsigned char *p = BPF_CORE_READ(d, d_name.name);
	__u32 len = BPF_CORE_READ(d, d_name.len);

	if (len > 0 && len <= LG_EXCEPT_NAME_LEN - 2 &&
	    bpf_probe_read_kernel_str(name, sizeof(name), p) > 1) {
		__u64 whole = name_hash(name, false);
		struct lg_path_except *x = bpf_map_lookup_elem(&lg_path_excepts, &whole);

		if (x)
			w->exact_seen |= x->exact_sources;
	}
	if (level != 0 || len == 0)
		return;
	if (len > LG_EXCEPT_NAME_LEN - 2) {
		__builtin_memset(name, 0, sizeof(name));
		if (bpf_probe_read_kernel_str(name, sizeof(name), p + (len - (LG_EXCEPT_NAME_LEN - 2))) <= 1)
			return;
	}
	__u64 suffix = name_hash(name, true);

	if (!suffix)
		return;
	struct lg_path_except *x = bpf_map_lookup_elem(&lg_path_excepts, &suffix);

	if (x)
		w->suffix_seen |= x->suffix_sources;
}

static long tree_step(__u32 i, struct tree_walk *w)
{
	struct dentry *d = (struct dentry *)w->d;
	struct inode *inode = BPF_CORE_READ(d, d_inode);

	if (inode) {
		struct lg_inode_key key = {.dev = w->subvolumes ? subvolume_dev((__u64)inode) : w->dev,
					   .ino = BPF_CORE_READ(inode, i_ino)};
		struct lg_guarded_inode *g = bpf_map_lookup_elem(&lg_guarded_inodes, &key);

		if (g && (g->kind == LG_INODE_PROTECTED_TREE || g->kind == LG_INODE_PROTECTED_FILE)) {
			__u64 bit = g->source >= 1 && g->source <= LG_MAX_EXCEPT_SOURCES
					    ? 1ull << ((g->source - 1) & 63)
					    : 0;

			/* Excepted by this tree: a tree around it may still
			 * protect it, so the walk goes on. */
			if (!(g->kind == LG_INODE_PROTECTED_TREE && ((w->exact_seen | w->suffix_seen) & bit))) {
				w->state = TREE_PROTECTED;
				w->source = g->source;
				w->object = BPF_CORE_READ(inode, i_ino);
				return 1;
			}
		}
	}
	if (w->names)
		note_except_names(d, i, w);
	struct dentry *parent = BPF_CORE_READ(d, d_parent);

	if (!parent || parent == d) {
		w->state = TREE_FREE;
		return 1;
	}
	w->d = (__u64)parent;
	return 0;
}

/* The first walk, which names nothing: TREE_PROTECTED at the first
 * protected inode on the way up, TREE_FREE at the root, TREE_WALKING when
 * it ran out first. `d` comes typed from the hook, so each level is plain
 * loads and one hash lookup; tree_step's callback holds only an address
 * and reads every field with a probe-read helper call, which made a
 * member's file change pay three helper calls per directory level. */
static __noinline __u32 first_tree_walk(struct dentry *d, __u32 dev, bool subvolumes)
{
	for (int level = 0; level < LG_TREE_DEPTH; level++) {
		struct inode *inode = d->d_inode;

		if (inode) {
			/* A walk up a btrfs tree may cross into the
			 * subvolume around this one. */
			struct lg_inode_key key = {.dev = subvolumes ? subvolume_dev((__u64)inode) : dev,
						   .ino = inode->i_ino};
			struct lg_guarded_inode *g = bpf_map_lookup_elem(&lg_guarded_inodes, &key);

			if (g && (g->kind == LG_INODE_PROTECTED_TREE || g->kind == LG_INODE_PROTECTED_FILE))
				return TREE_PROTECTED;
		}
		struct dentry *parent = d->d_parent;

		if (!parent || parent == d)
			return TREE_FREE;
		d = parent;
	}
	return TREE_WALKING;
}

/* Whether `d` (a dentry, positive or not) is a protected file or lies in a
 * protected tree; `too_deep` when the walk ran out before the root. A
 * member's change almost always finds nothing, and the except names
 * matter only below something protected: the first walk reads no names,
 * and only what it finds protected is walked again with them. */
static __always_inline bool in_protected_tree(struct dentry *d, __u64 *object, __u32 *source,
					      bool *too_deep)
{
	if (!d)
		return false;
	struct super_block *sb = BPF_CORE_READ(d, d_sb);
	struct tree_walk w = {.d = (__u64)d, .dev = BPF_CORE_READ(sb, s_dev), .subvolumes = by_subvolume(sb)};

	w.state = first_tree_walk(d, w.dev, w.subvolumes);
	if (w.state == TREE_PROTECTED) {
		w = (struct tree_walk){.d = (__u64)d, .dev = w.dev, .names = 1, .subvolumes = w.subvolumes};
		bpf_loop(LG_TREE_DEPTH, tree_step, &w, 0);
	}
	*object = w.object;
	*source = w.source;
	*too_deep = w.state == TREE_WALKING;
	return w.state != TREE_FREE;
}

/* A change of `d` (op: enum lg_path_op) by a member of `session` (0: no
 * member), refused when `d` is protected. */
static __always_inline int tree_change(__u64 session, struct dentry *d, __u32 op)
{
	if (!session || !any(LG_SETTING_PROTECTED_PATHS))
		return 0;
	__u64 object = 0;
	__u32 source = 0;
	bool too_deep = false;

	if (!in_protected_tree(d, &object, &source, &too_deep))
		return 0;
	report_object_of(LG_VERDICT_DENIED, LG_HOOK_PATH, session, d, object,
			 op | (too_deep ? LG_PATH_TOO_DEEP : 0), 0, too_deep ? LG_SOURCE_UNKNOWN : source);
	return -EPERM;
}

#endif
