// SPDX-License-Identifier: GPL-2.0
/* Acts that reach every process on the machine without naming one, so no
 * check on the service ever runs: a perf event that signals whatever it
 * watches, and a fanotify permission mark nobody answers, which blocks
 * every open of the marked files. A member may use neither. */
#include "lib/hook.h"
#include "lib/gate.h"

/* Every permission event fanotify has had (FAN_OPEN_PERM, FAN_ACCESS_PERM,
 * FAN_OPEN_EXEC_PERM, FAN_PRE_ACCESS). */
#define LG_FAN_PERM_EVENTS (0x00010000ULL | 0x00020000ULL | 0x00040000ULL | 0x00100000ULL)

/* For root, the kernel does not ask the ptrace check (where a member is
 * refused) before a sigtrap event on another process. Checked when the
 * event is made: the open hook lost its attributes in 6.10. */
LG_HOOK(perf_event_alloc, lg_perf_event_alloc, struct perf_event *, event)
{
	if (ret)
		return ret;
	if (!member_session())
		return 0;
	struct perf_event_attr *attr = &event->attr;

	if (!BPF_CORE_READ_BITFIELD_PROBED(attr, sigtrap))
		return 0;
	return member_act_on_object(LG_HOOK_PERF_EVENT, 0, 0, 0, 0);
}

LG_HOOK(path_notify, lg_path_notify, const struct path *, path, __u64, mask, unsigned int, obj_type)
{
	if (ret || !(mask & LG_FAN_PERM_EVENTS))
		return ret;
	if (!member_session())
		return 0;
	return member_act_on_object(LG_HOOK_FANOTIFY, BPF_CORE_READ(path, dentry), 0, obj_type, 0);
}
