/*
 * The floating-point status flag that says whether an instruction read a
 * denormal operand since the flag was last cleared (x86: MXCSR's DE bit),
 * for the tests that check that no kernel computes on scratch memory it
 * did not write: such lanes are dropped, so the results stay right, but a
 * denormal there makes every instruction that reads it take a microcode
 * assist (core/fpflags.c).
 */
#ifndef CC_CORE_FPFLAGS_H
#define CC_CORE_FPFLAGS_H

/* 1 if a denormal operand was read since the last clear, 0 if not, -1
 * where the CPU keeps no such flag; clears the flag when `clear`.  The
 * calling thread's flags only. */
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */
int cc_fp_denormal_seen(int clear);
/* The same over a team of nthreads OpenMP threads (the calling thread and
 * the workers the kernels' parallel regions run on: the runtime keeps
 * them from region to region), any of them; -1 where there is no flag. */
int cc_fp_denormal_seen_team(int nthreads, int clear);
#pragma GCC visibility pop

#endif
