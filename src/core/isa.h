/*
 * The instruction sets cconv's kernels are built for, and which one runs.
 *
 * Every kernel family with per-ISA variants (depthwise direct, depthwise
 * Winograd, the implicit-GEMM micro-kernels) keeps a table indexed by
 * cc_isa and asks cc_isa_current() which entry to use; the choice itself is
 * made here, once.  It is the only global mutable state of the C core:
 * chosen at first use (or by cc_isa_init(), called at import) from the CPU's
 * features, or from the environment variable
 * CCONV_SIMD=scalar|avx2|avx512|neon|auto, and forced with cc_isa_set() (for
 * tests; not while kernels run in other threads).  Each extension module
 * links its own copy of the core, so each has its own choice.
 *
 * Built with -DCC_SIMDE_AVX512 (tests/c), the AVX-512 kernels are SIMDe's
 * portable emulation and need only AVX2 and FMA.
 */
#ifndef CC_SIMD_ISA_H
#define CC_SIMD_ISA_H

#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

typedef enum cc_isa {
    CC_ISA_SCALAR = 0,
    CC_ISA_AVX2 = 1,
    CC_ISA_AVX512 = 2,
    CC_ISA_NEON = 3,
    CC_ISA_COUNT = 4
} cc_isa;

/* "scalar", "avx2", "avx512", "neon"; NULL out of range. */
const char *cc_isa_name(int isa);
/* The cc_isa a name stands for, or -1 when none does. */
int cc_isa_lookup(const char *name);
/* 1 when this build has the instruction set's kernels and the CPU runs
 * them, else 0 (also for an index out of range). */
int cc_isa_runs_here(int isa);
/* The best instruction set that runs here. */
cc_isa cc_isa_best(void);
/* Reads CCONV_SIMD once (later calls only return the first call's status)
 * and makes the choice.  CC_OK, or CC_ERR_ARG when CCONV_SIMD names an
 * instruction set that is unknown or cannot run here (the best one is used
 * then). */
int cc_isa_init(void);
/* The instruction set in use (cc_isa_init() on first use). */
cc_isa cc_isa_current(void);
/* Force one by name; NULL, "" or "auto": the best.  CC_ERR_ARG, and no
 * change, when it is unknown or cannot run here. */
int cc_isa_set(const char *name);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
