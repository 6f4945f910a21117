/* Every hook as two programs in the fmod_ret form.
 *
 * A program on a trampoline in the fmod_ret (tracing) form is skipped,
 * and the act goes through unchecked, when the same program is already
 * running on that CPU: the kernel's guard against recursion. Its count
 * is per program and per CPU, and the program runs with migration, not
 * preemption, disabled: a task preempted inside it (kernels that preempt
 * kernel code: PREEMPT, PREEMPT_LAZY, the default of 7.x) holds the count
 * while every other task on that CPU passes the hook unchecked. LSM
 * programs have no such guard, so the LSM form needs none of this.
 *
 * So in the fmod_ret form each hook is attached twice, as `name` and
 * `name_twin`, one body with a count each: an act slips through only when
 * both are held on its CPU at once, by two preempted tasks, and the
 * kernel counts every skip (`status` shows them). The second evaluates
 * the call again only when the first allowed it (a refusal ends the call:
 * the trampoline skips the programs after it), and a process that is no
 * session member leaves each body at its first test. What a body does
 * when it allows is the same done twice (marks, argv copies). */
#ifndef LG_BPF_TWINS_H
#define LG_BPF_TWINS_H

/* The name suffix the loader knows twins by (kernel/programs.h). */
#define LG_TWIN_SUFFIX _twin

#endif
