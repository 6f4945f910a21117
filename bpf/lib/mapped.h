/* Whether a protected process has a file mapped: its executable, a shared
 * library, a plugin, a mapped database. Writing it under the mapping
 * changes the code or data the service runs on, and truncating it ends
 * the service with SIGBUS at its next touch of a page past the end;
 * replacing it by rename (what package managers and pip do) leaves the
 * mapped inode as it was, and stays open.
 *
 * The kernel keeps every mapping of a file in its address_space's i_mmap
 * tree; each is a vm_area_struct whose mm's owner is the process. The
 * walk only starts for a file something maps (the tree is empty for
 * nearly every file a member writes), and reads up to LG_MAPPED_WALK
 * mappings (a process maps a library as four or five): a file mapped more often than that is a library most of the
 * machine runs, which no member writes either, so the answer is then yes. */
#ifndef LG_BPF_MAPPED_H
#define LG_BPF_MAPPED_H

#include "common.h"
#include "cgroups.h"

#define LG_MAPPED_WALK 1024
/* The height of a red-black tree of 2^16 nodes is at most 32. */
#define LG_RB_HEIGHT 32

enum lg_mapped {
	LG_MAPPED_NO = 0,
	LG_MAPPED_BY_PROTECTED = 1,
	LG_MAPPED_WIDELY = 2, /* more mappings than the walk reads */
};

static __always_inline struct rb_node *rb_parent_of(struct rb_node *n)
{
	return (struct rb_node *)(BPF_CORE_READ(n, __rb_parent_color) & ~3UL);
}

/* The next node in order, or 0 (rb_next(), with bounded loops). */
static __always_inline struct rb_node *rb_after(struct rb_node *n, bool *lost)
{
	struct rb_node *right = BPF_CORE_READ(n, rb_right);

	if (right) {
		n = right;
		for (int i = 0; i < LG_RB_HEIGHT; i++) {
			struct rb_node *left = BPF_CORE_READ(n, rb_left);

			if (!left)
				return n;
			n = left;
		}
		*lost = true;
		return 0;
	}
	for (int i = 0; i < LG_RB_HEIGHT; i++) {
		struct rb_node *parent = rb_parent_of(n);

		if (!parent || BPF_CORE_READ(parent, rb_right) != n)
			return parent;
		n = parent;
	}
	*lost = true;
	return 0;
}

struct lg_mapped_walk {
	struct rb_node *n;
	__u64 rb_at;
	bool lost;
	int found;
};

/* One mapping: its process protected or not. A bpf_loop callback. */
static long mapped_step(__u32 i, struct lg_mapped_walk *k)
{
	struct rb_node *n = k->n;

	if (!n)
		return 1;
	struct vm_area_struct *vma = (void *)((char *)n - k->rb_at);
	struct task_struct *owner = BPF_CORE_READ(vma, vm_mm, owner);

	if (owner && untyped_task_protected(owner)) {
		k->found = LG_MAPPED_BY_PROTECTED;
		return 1;
	}
	k->n = rb_after(n, &k->lost);
	return 0;
}

static __noinline int mapped_by_protected(struct inode *inode)
{
	/* Without mm->owner (a kernel without memory cgroups) the mapping's
	 * process is unknown. */
	if (!inode || !bpf_core_field_exists(((struct mm_struct *)0)->owner))
		return LG_MAPPED_NO;
	struct address_space *mapping = BPF_CORE_READ(inode, i_mapping);
	struct lg_mapped_walk k = {.n = mapping ? BPF_CORE_READ(mapping, i_mmap.rb_leftmost) : 0,
				   .rb_at = bpf_core_field_offset(struct vm_area_struct, shared.rb)};

	if (!k.n)
		return LG_MAPPED_NO;
	bpf_loop(LG_MAPPED_WALK, mapped_step, &k, 0);
	if (k.found)
		return k.found;
	return k.n || k.lost ? LG_MAPPED_WIDELY : LG_MAPPED_NO;
}

#endif
