/* The instruction-set choice every per-ISA kernel table follows (isa.h). */
#include "isa.h"

#include "compiler.h"

#include <stdlib.h>
#include <string.h>

#define NAME_(isa, ISA, ...) #isa,
static const char *const isa_names[CC_ISA_COUNT] = {CC_ALL_ISAS(NAME_, )};
#undef NAME_

/* Which sets this build compiles kernels for (isa.h: CC_BUILT_ISAS): on
 * x86-64 with GCC's target flags AVX2 and AVX-512, on AArch64 NEON (part of
 * its baseline), everywhere the scalar kernels. */
static int isa_built(int isa)
{
#define BUILT_(isa_, ISA, ...) || isa == CC_ISA_##ISA
    return 0 CC_BUILT_ISAS(BUILT_, );
#undef BUILT_
}

const char *cc_isa_name(int isa)
{
    return isa >= 0 && isa < CC_ISA_COUNT ? isa_names[isa] : NULL;
}

int cc_isa_lookup(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < CC_ISA_COUNT; i++)
        if (strcmp(isa_names[i], name) == 0)
            return i;
    return -1;
}

int cc_isa_runs_here(int isa)
{
    if (!isa_built(isa))
        return 0;
#if defined(CC_BUILD_AVX2) || defined(CC_BUILD_AVX512)
    if (isa == CC_ISA_AVX2 || isa == CC_ISA_AVX512) {
        __builtin_cpu_init();
        int ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#ifndef CC_SIMDE_AVX512
        if (isa == CC_ISA_AVX512)
            ok = ok && __builtin_cpu_supports("avx512f");
#endif
        return ok;
    }
#endif
    return 1;
}

int cc_isa_emulated(int isa)
{
#if defined(CC_SIMDE_AVX512) && defined(CC_BUILD_AVX512)
    return isa == CC_ISA_AVX512;
#else
    (void)isa;
    return 0;
#endif
}

cc_isa cc_isa_best(void)
{
    static const cc_isa best_first[] = {CC_ISA_AVX512, CC_ISA_AVX2, CC_ISA_NEON};
    for (size_t i = 0; i < sizeof(best_first) / sizeof(best_first[0]); i++)
        if (cc_isa_runs_here(best_first[i]))
            return best_first[i];
    return CC_ISA_SCALAR;
}

/* The choice: -1 until made.  Written once at import (and by tests through
 * cc_isa_set), read by every kernel call, hence the atomics. */

static int isa_cur = -1;
static int isa_init_status = CC_OK;

int cc_isa_init(void)
{
    if (CC_ONCE_LOAD(isa_cur) >= 0)
        return isa_init_status;
    int isa = -1, status = CC_OK;
    const char *env = getenv("CCONV_SIMD");
    if (env && env[0] && strcmp(env, "auto") != 0) {
        isa = cc_isa_lookup(env);
        if (isa < 0 || !cc_isa_runs_here(isa)) {
            isa = -1;
            status = CC_ERR_ARG;
        }
    }
    if (isa < 0)
        isa = cc_isa_best();
    isa_init_status = status;
    CC_ONCE_STORE(isa_cur, isa);
    return status;
}

cc_isa cc_isa_current(void)
{
    int isa = CC_ONCE_LOAD(isa_cur);
    if (isa < 0) {
        cc_isa_init();
        isa = CC_ONCE_LOAD(isa_cur);
    }
    return (cc_isa)isa;
}

int cc_isa_set(const char *name)
{
    int isa;
    if (!name || !name[0] || strcmp(name, "auto") == 0)
        isa = cc_isa_best();
    else
        isa = cc_isa_lookup(name);
    if (isa < 0 || !cc_isa_runs_here(isa))
        return CC_ERR_ARG;
    CC_ONCE_STORE(isa_cur, isa);
    return CC_OK;
}
