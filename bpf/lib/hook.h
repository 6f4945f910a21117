/* How an LSM program is declared: by the names of the hook's arguments it
 * reads, never by their positions.
 *
 * Hooks gain, lose and reorder arguments between kernels (bpf() gained
 * `bool kernel` in 6.15, inode_setattr an idmap in 6.8), and in the
 * fmod_ret form the program runs on the security_* function, which may
 * take more than the hook (security_inode_rename adds the flags). A
 * program that reads by position then reads the wrong word, and its
 * `ret` is whatever follows: the verifier refuses it, or it returns a
 * flag as a verdict.
 *
 *   LG_HOOK(task_kill, lg_task_kill, struct task_struct *, p, int, sig)
 *   {
 *           return ret ? ret : ...;
 *   }
 *
 * declares `struct lg_args_task_kill { ret, p, sig }` with CO-RE access:
 * the loader gives every such struct, in the BTF it relocates against,
 * the layout of the running kernel's prototype of the function the
 * program attaches to (bpf_lsm_<hook>, or security_<hook> in the fmod_ret
 * form): each member at the slot of the argument of its name, `ret` at
 * the slot after the last (userspace/kernel/hook_args.cpp). The offsets
 * are patched into the loads when loading, so every read is one load at
 * a constant offset, as with BPF_PROG, on any kernel. A program whose
 * names the kernel does not have is left out by the loader and named.
 *
 * Arguments are given as type, name pairs (up to six); the body sees
 * them as typed parameters, and `ret`, the verdict of the LSMs before.
 * Each hook declares a second program, `name_twin`, with the same body,
 * which the loader attaches in the fmod_ret form only (lib/twins.h). */
#ifndef LG_BPF_HOOK_H
#define LG_BPF_HOOK_H

#include "common.h"
#include "twins.h"

#define ___lg_fields0()
#define ___lg_fields2(t, n) __u64 n;
#define ___lg_fields4(t, n, ...) __u64 n; ___lg_fields2(__VA_ARGS__)
#define ___lg_fields6(t, n, ...) __u64 n; ___lg_fields4(__VA_ARGS__)
#define ___lg_fields8(t, n, ...) __u64 n; ___lg_fields6(__VA_ARGS__)
#define ___lg_fields10(t, n, ...) __u64 n; ___lg_fields8(__VA_ARGS__)
#define ___lg_fields12(t, n, ...) __u64 n; ___lg_fields10(__VA_ARGS__)

#define ___lg_params0()
#define ___lg_params2(t, n) , t n
#define ___lg_params4(t, n, ...) , t n ___lg_params2(__VA_ARGS__)
#define ___lg_params6(t, n, ...) , t n ___lg_params4(__VA_ARGS__)
#define ___lg_params8(t, n, ...) , t n ___lg_params6(__VA_ARGS__)
#define ___lg_params10(t, n, ...) , t n ___lg_params8(__VA_ARGS__)
#define ___lg_params12(t, n, ...) , t n ___lg_params10(__VA_ARGS__)

#define ___lg_reads0()
#define ___lg_reads2(t, n) , (t)__args->n
#define ___lg_reads4(t, n, ...) , (t)__args->n ___lg_reads2(__VA_ARGS__)
#define ___lg_reads6(t, n, ...) , (t)__args->n ___lg_reads4(__VA_ARGS__)
#define ___lg_reads8(t, n, ...) , (t)__args->n ___lg_reads6(__VA_ARGS__)
#define ___lg_reads10(t, n, ...) , (t)__args->n ___lg_reads8(__VA_ARGS__)
#define ___lg_reads12(t, n, ...) , (t)__args->n ___lg_reads10(__VA_ARGS__)

#define ___lg_count(...) ___lg_nth(_, ##__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define ___lg_nth(_, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define ___lg_cat(a, b) ___lg_cat2(a, b)
#define ___lg_cat2(a, b) a##b
#define ___lg_apply(m, ...) ___lg_cat(m, ___lg_count(__VA_ARGS__))(__VA_ARGS__)

#define ___lg_prog(hook, name, prog, ret_read, ...)                                        \
	SEC("lsm/" #hook)                                                                    \
	int prog(struct lg_args_##hook *__args)                                              \
	{                                                                                    \
		return ____##name(ret_read ___lg_apply(___lg_reads, ##__VA_ARGS__));         \
	}

/* The program and its twin (lib/twins.h), one body. */
#define ___lg_hook(hook, name, ret_param, ret_read, ...)                                     \
	struct lg_args_##hook {                                                              \
		__u64 ret;                                                                   \
		___lg_apply(___lg_fields, ##__VA_ARGS__)                                     \
	} __attribute__((preserve_access_index));                                            \
	static __always_inline int ____##name(ret_param ___lg_apply(___lg_params, ##__VA_ARGS__)); \
	___lg_prog(hook, name, name, ret_read, ##__VA_ARGS__)                                \
	___lg_prog(hook, name, ___lg_cat(name, LG_TWIN_SUFFIX), ret_read, ##__VA_ARGS__)     \
	static __always_inline int ____##name(ret_param ___lg_apply(___lg_params, ##__VA_ARGS__))

/* A hook that returns a verdict: the body sees `ret` as well. */
#define LG_HOOK(hook, name, ...) ___lg_hook(hook, name, int ret, (int)__args->ret, ##__VA_ARGS__)

/* A hook that returns nothing (the fmod_ret form attaches it as fentry):
 * there is no `ret` to read. */
#define LG_OBSERVER(hook, name, ...) ___lg_hook(hook, name, void *__unused, 0, ##__VA_ARGS__)

#endif
