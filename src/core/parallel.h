/*
 * How many threads a kernel runs, how finely its work is split, and the
 * interrupt flag its drivers check between work items (core/parallel.c).
 *
 * Threads.  A driver asks cc_threads_for(work, grain, items, nthreads) how
 * many threads to start: never more than the caller's count, the items,
 * cc_thread_cap() (4 x the CPUs this process may run on: a larger count,
 * e.g. set_num_threads(100000), is clamped) nor work / grain, so that no
 * thread gets less than one grain of work and small calls run on the
 * calling thread without entering an OpenMP region.  On a machine where
 * other processes keep the cores busy, a region's closing barrier waits
 * until the OS schedules every thread of the team (milliseconds): the grain
 * is the work that pays for that risk.  Work is counted per family in the
 * units below; the grains were fitted on one CPU (AMD EPYC, AVX-512, 2
 * cores: benches/results/threads-*-amd-epyc-avx512.md), in units that
 * carry to other CPUs roughly in proportion to their speed per core.
 *
 * Splits.  A plan cuts its work into items whose sizes depend on the
 * problem and on cc_split_threads() (the CPU count, fixed per process), never
 * on the thread count the caller asked for: every item then computes the
 * same values, in the same order, whichever thread runs it, and a result is
 * bit-identical for every thread count (OpenBLAS's GEMM gives different last
 * bits for the same product cut into different blocks, so the blocks must
 * not move).  cc_items_wanted(work, grain) is how many items a plan aims
 * for: two per split thread, but none smaller than a grain.
 *
 * Interrupts.  A wrapper that runs a long call on the main thread brackets
 * it with cc_watch_begin() / cc_watch_end(): in between, SIGINT sets a flag
 * (and is passed on to the handler that was installed, Python's), and the
 * drivers skip their remaining items once they see it (cc_stop_flag(),
 * CC_STOPPED).  Other calls get a flag that never sets.
 */
#ifndef CC_PARALLEL_H
#define CC_PARALLEL_H

#include <signal.h>
#include <stdint.h>

#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

/* Grains (benches/results/threads-*.md):
 *  - GEMM family (im2col + GEMM, 1x1 GEMM, implicit GEMM, Winograd, shifted
 *    GEMMs, NHWC, the adjoint and the weight gradient): multiply-adds of the
 *    direct convolution;
 *  - depthwise kernels: dw_cost units (multiply-adds + 2 x elements moved +
 *    300 per row; about 20 a microsecond on one core);
 *  - copies (layout transposes, the weight adjoint): bytes read;
 *  - sums (grad_bias): elements summed. */
/* GEMM family: two threads from 6e6 multiply-adds (was 4e6 a thread, 8e6
 * for two, fitted on an AMD EPYC with AVX-512: the 2-thread / 1-thread times
 * measured there were 0.58-0.81 from 3e6 up; layers of 6-8e6 left a core idle
 * where torch ran two threads: on Zen 4, 2 threads, a 1-channel k1024
 * s256 encoder 0.24 -> 0.15 ms, a 160->960 1x1 layer on 7x7 0.20 -> 0.11) */
#define CC_GRAIN_GEMM 3.0e6
/* Depthwise: two threads from 2e6 dw_cost units (was 2e6 a thread, 4e6 for
 * two: about 0.1 ms of one core on the AVX2 EPYC it was fitted on, 0.2 ms
 * on Zen 4's AVX-512 kernels, where single calls of 2-4e6 units then ran on
 * one core beside torch's two).  On Zen 4, 2 threads, one image, medians of
 * 200 back-to-back calls, one thread / two: 3x3 stride 2 on 56x56 with
 * 96-144 channels 66 -> 49 and 95 -> 68 us, 3x3 on 28x28 with 144-192
 * channels 53 -> 38 and 67 -> 46 us, 384-576 channels on 14x14 53 -> 41
 * and 73 -> 50 us; after 5 ms of sleep before each call (the workers
 * asleep) 146 -> 102 and 101 -> 73 us.  Two threads paid from about 1.2e6
 * units (0.75-0.92 of the time at 1.2-1.8e6). */
#define CC_GRAIN_DW 1.0e6
#define CC_GRAIN_COPY (1024.0 * 1024.0)
#define CC_GRAIN_SUM (512.0 * 1024.0)

/* The factor CCONV_GRAIN_SCALE sets on every grain (default 1; 0: no
 * grain, every call split and threaded as a large one), read once. */
double cc_grain_scale(void);
/* CPUs this process may run on (at least 1), read once. */
int cc_cpus(void);
/* The most threads any kernel starts: 4 x cc_cpus(). */
int cc_thread_cap(void);
/* The thread count work splits are planned for: cc_cpus(), at most 64. */
int cc_split_threads(void);
/* Items a plan aims for: 2 x cc_split_threads(), at most work / grain, at
 * least 1. */
int64_t cc_items_wanted(double work, double grain);
/* Threads to run `items` items of `work` in all: nthreads clamped to
 * [1, cc_thread_cap()], to items and to work / grain. */
int cc_threads_for(double work, double grain, int64_t items, int nthreads);
/* 1 when the calling thread has started an OpenMP team of several threads
 * through cc_threads_for: its pool does not survive fork(). */
int cc_pool_started(void);
/* Multiply-adds of the direct convolution g (0 for an invalid one). */
double cc_geom_macs(const cc_geom *g);

typedef const volatile sig_atomic_t *cc_stop_t;
/* The calling thread's stop flag: set by SIGINT while a watched call runs. */
cc_stop_t cc_stop_flag(void);
#define CC_STOPPED(s) (*(s) != 0)
/* Watch SIGINT for a call on this thread (from the thread that handles
 * signals, with the interpreter's lock held): returns a token, 0 when
 * nothing was installed (a handler of ours is already in place, SIGINT is
 * ignored or has its default action). */
int cc_watch_begin(void);
/* Put the previous SIGINT action back; 1 when SIGINT came in between. */
int cc_watch_end(int token);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
