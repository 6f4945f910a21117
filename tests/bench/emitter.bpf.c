// SPDX-License-Identifier: GPL-2.0
/* The consumer benchmark's producer: one refusal event per run, each to
 * another target, so that none coalesces with another. Run through
 * BPF_PROG_TEST_RUN with a repeat count, which needs no trampoline: the
 * consumer is measured natively, on a kernel that attaches nothing. The
 * maps are the guard's ring buffer and counters, with the guard's sizes. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "liveguard/abi.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LG_RINGBUF_BYTES);
} lg_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LG_COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} lg_counters SEC(".maps");

/* Filled in by the benchmark: a refusal as the guard reports one, and the
 * processes it is from, in turn (none: the template's). */
#define BENCH_MAX_CULPRITS 64
struct lg_event template_event = {};
__u32 next_target = 0;
__u32 culprits[BENCH_MAX_CULPRITS] = {};
__u32 culprit_count = 0;

SEC("socket")
int emit(struct __sk_buff *skb)
{
	struct lg_event *e = bpf_ringbuf_reserve(&lg_events, sizeof(*e), 0);

	if (!e) {
		__u32 idx = LG_COUNTER_EVENTS_LOST;
		__u64 *v = bpf_map_lookup_elem(&lg_counters, &idx);

		if (v)
			__sync_fetch_and_add(v, 1);
		return 0;
	}
	__builtin_memcpy(e, &template_event, sizeof(*e));
	e->boot_ns = bpf_ktime_get_boot_ns();
	/* Test runs of one program do not overlap: a plain increment. */
	__u32 n = next_target++;

	e->target_pid = n;
	if (culprit_count) {
		__u32 i = n % culprit_count;

		if (i < BENCH_MAX_CULPRITS)
			e->pid = e->tid = culprits[i];
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}
