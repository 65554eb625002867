/*
 * The instruction sets cconv's kernels are built for, and which one runs.
 *
 * Every kernel family with a version per instruction set (depthwise direct,
 * depthwise Winograd, the implicit-GEMM micro-kernels, the dense Winograd
 * transforms, the layout transpose's tiles) has one table of kernels per
 * set and element type, named <table>_<isa> (cc_dw_kern_f32_avx2, ...), and
 * asks cc_isa_current() which to use (CC_ISA_DISPATCH below); the choice
 * itself is made here, once.  It is the only global mutable state of the C
 * core, one for the whole library (every extension module links the same
 * one): chosen at first use (or by cc_isa_init(), called at import) from
 * the CPU's features, or from the environment variable
 * CCONV_SIMD=scalar|avx2|avx512|neon|auto, and forced with cc_isa_set() (for
 * tests; not while kernels run in other threads).
 *
 * Which sets a build has kernels for is meson's choice (src/meson.build:
 * isas): it defines CC_BUILD_<ISA> for each one but scalar, which every
 * build has.  Built with -DCC_SIMDE_AVX512 (a test build), the AVX-512
 * kernels are SIMDe's portable emulation and need only AVX2 and FMA.
 */
#ifndef CC_SIMD_ISA_H
#define CC_SIMD_ISA_H

#include "cconv.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the core library's API (its build hides the rest) */

/* X(isa, ISA, ...) for every instruction set cconv has kernels for, in
 * cc_isa order: its name (the suffix of its kernels' names) and its cc_isa
 * constant's. */
#define CC_ALL_ISAS(X, ...)                                                   \
    X(scalar, SCALAR, __VA_ARGS__) X(avx2, AVX2, __VA_ARGS__)                 \
    X(avx512, AVX512, __VA_ARGS__) X(neon, NEON, __VA_ARGS__)

typedef enum cc_isa {
#define CC_ISA_ENUM_(isa, ISA, ...) CC_ISA_##ISA,
    CC_ALL_ISAS(CC_ISA_ENUM_, )
#undef CC_ISA_ENUM_
    CC_ISA_COUNT
} cc_isa;

/* The same for the instruction sets this build compiles kernels for. */
#define CC_BUILT_ISA_(isa, ISA, X, ...) CC_IF_BUILT_##ISA(X(isa, ISA, __VA_ARGS__))
#define CC_BUILT_ISAS(X, ...) CC_ALL_ISAS(CC_BUILT_ISA_, X, __VA_ARGS__)
#define CC_IF_BUILT_SCALAR(x) x
#ifdef CC_BUILD_AVX2
#define CC_IF_BUILT_AVX2(x) x
#else
#define CC_IF_BUILT_AVX2(x)
#endif
#ifdef CC_BUILD_AVX512
#define CC_IF_BUILT_AVX512(x) x
#else
#define CC_IF_BUILT_AVX512(x)
#endif
#ifdef CC_BUILD_NEON
#define CC_IF_BUILT_NEON(x) x
#else
#define CC_IF_BUILT_NEON(x)
#endif

/* A kernel family's tables: CC_ISA_DECLARE(TYPE, NAME) declares NAME_<isa>,
 * a const TYPE, for every instruction set built (each defined by the
 * family's per-ISA instance, simd/vec_common.h: CC_ISA_NAME);
 * CC_ISA_DISPATCH(TYPE, NAME) defines `const TYPE *NAME(void)`, the one of
 * the instruction set in use. */
#define CC_ISA_DECL_(isa, ISA, TYPE, NAME) extern const TYPE NAME##_##isa;
#define CC_ISA_ENTRY_(isa, ISA, TYPE, NAME) [CC_ISA_##ISA] = &NAME##_##isa,
#define CC_ISA_DECLARE(TYPE, NAME) CC_BUILT_ISAS(CC_ISA_DECL_, TYPE, NAME)
#define CC_ISA_DISPATCH(TYPE, NAME)                                           \
    const TYPE *NAME(void)                                                    \
    {                                                                         \
        static const TYPE *const by_isa_[CC_ISA_COUNT] = {                   \
            CC_BUILT_ISAS(CC_ISA_ENTRY_, TYPE, NAME)};                        \
        const TYPE *k_ = by_isa_[cc_isa_current()];                           \
        return k_ ? k_ : &NAME##_scalar;                                      \
    }

/* "scalar", "avx2", "avx512", "neon"; NULL out of range. */
const char *cc_isa_name(int isa);
/* The cc_isa a name stands for, or -1 when none does. */
int cc_isa_lookup(const char *name);
/* 1 when this build has the instruction set's kernels and the CPU runs
 * them, else 0 (also for an index out of range). */
int cc_isa_runs_here(int isa);
/* 1 when this build compiles the instruction set's kernels on another,
 * narrower one (the AVX-512 kernels on SIMDe's portable AVX-512 over AVX2:
 * the test build, meson -Dsimde_avx512=true), else 0. */
int cc_isa_emulated(int isa);
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
