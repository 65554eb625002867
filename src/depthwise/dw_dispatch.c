/*
 * Depthwise kernels: which problems they take, and the instruction-set
 * dispatch table (the only global mutable state, set once at import by
 * cc_dw_init() or forced by cc_dw_set_isa() for tests).
 */
#include "dw_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define DW_TABLES(ISA)                                                        \
    static const dw_kern_f32 dw_k32_##ISA = {                                 \
        &cc_dw_rk_r_f32_##ISA, cc_dw_rows_f32_##ISA,                          \
        {{cc_dw_k3s1_f32_##ISA, cc_dw_k3s2_f32_##ISA},                        \
         {cc_dw_k5s1_f32_##ISA, cc_dw_k5s2_f32_##ISA}},                       \
        cc_dw_wg_f32_##ISA, {cc_dw_a2k3_f32_##ISA, cc_dw_a2k5_f32_##ISA},     \
        cc_dw_split2_f32_##ISA, cc_dw_join2_f32_##ISA};                       \
    static const dw_kern_f64 dw_k64_##ISA = {                                 \
        &cc_dw_rk_r_f64_##ISA, cc_dw_rows_f64_##ISA,                          \
        {{cc_dw_k3s1_f64_##ISA, cc_dw_k3s2_f64_##ISA},                        \
         {cc_dw_k5s1_f64_##ISA, cc_dw_k5s2_f64_##ISA}},                       \
        cc_dw_wg_f64_##ISA, {cc_dw_a2k3_f64_##ISA, cc_dw_a2k5_f64_##ISA},     \
        cc_dw_split2_f64_##ISA, cc_dw_join2_f64_##ISA};                       \
    static const dw_isa dw_isa_##ISA = {#ISA, &dw_k32_##ISA, &dw_k64_##ISA};

DW_TABLES(scalar)
#if defined(CC_HAVE_X86_SIMD)
DW_TABLES(avx2)
DW_TABLES(avx512)
#endif
#if defined(__aarch64__)
DW_TABLES(neon)
#endif

/* Best first. */
static const dw_isa *const dw_all[] = {
#if defined(CC_HAVE_X86_SIMD)
    &dw_isa_avx512,
    &dw_isa_avx2,
#endif
#if defined(__aarch64__)
    &dw_isa_neon,
#endif
    &dw_isa_scalar,
};
#define DW_NISA ((int)(sizeof(dw_all) / sizeof(dw_all[0])))

static int dw_cpu_has(const dw_isa *isa)
{
#if defined(CC_HAVE_X86_SIMD)
    if (isa == &dw_isa_avx2 || isa == &dw_isa_avx512) {
        __builtin_cpu_init();
        int ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#ifndef DW_SIMDE_AVX512 /* tests: AVX-512 kernels built on SIMDe's emulation */
        if (isa == &dw_isa_avx512)
            ok = ok && __builtin_cpu_supports("avx512f");
#endif
        return ok;
    }
#endif
    (void)isa;
    return 1;
}

static const dw_isa *dw_find(const char *name)
{
    for (int i = 0; i < DW_NISA; i++)
        if (strcmp(dw_all[i]->name, name) == 0)
            return dw_all[i];
    return NULL;
}

static const dw_isa *dw_best(void)
{
    for (int i = 0; i < DW_NISA; i++)
        if (dw_cpu_has(dw_all[i]))
            return dw_all[i];
    return &dw_isa_scalar;
}

#if defined(__GNUC__) || defined(__clang__)
#define DW_LOAD(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define DW_STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#else
#define DW_LOAD(p) (p)
#define DW_STORE(p, v) ((p) = (v))
#endif

static const dw_isa *dw_cur = NULL;
static int dw_init_status = CC_OK;

int cc_dw_init(void)
{
    if (DW_LOAD(dw_cur) != NULL)
        return dw_init_status;
    const dw_isa *isa = NULL;
    int status = CC_OK;
    const char *env = getenv("CCONV_SIMD");
    if (env && env[0] && strcmp(env, "auto") != 0) {
        isa = dw_find(env);
        if (!isa || !dw_cpu_has(isa)) {
            isa = NULL;
            status = CC_ERR_ARG;
        }
    }
    if (!isa)
        isa = dw_best();
    dw_init_status = status;
    DW_STORE(dw_cur, isa);
    return status;
}

DW_HIDDEN const dw_isa *cc_dw_current(void)
{
    const dw_isa *isa = DW_LOAD(dw_cur);
    if (!isa) {
        cc_dw_init();
        isa = DW_LOAD(dw_cur);
    }
    return isa;
}

int cc_dw_set_isa(const char *name)
{
    const dw_isa *isa;
    if (!name || !name[0] || strcmp(name, "auto") == 0)
        isa = dw_best();
    else
        isa = dw_find(name);
    if (!isa || !dw_cpu_has(isa))
        return CC_ERR_ARG;
    DW_STORE(dw_cur, isa);
    return CC_OK;
}

const char *cc_dw_isa(void) { return cc_dw_current()->name; }

int cc_dw_isa_available(const char *name)
{
    const dw_isa *isa = name ? dw_find(name) : NULL;
    return isa && dw_cpu_has(isa);
}

int cc_dw_geom_ok(const cc_geom *g)
{
    const int64_t lim = (int64_t)1 << 40;
    if (!g || g->batch < 0 || g->batch > lim || g->c_in < 1 || g->c_in > lim)
        return 0;
    if (g->groups != g->c_in || g->c_out < g->c_in || g->c_out % g->c_in != 0 ||
        g->c_out > lim)
        return 0;
    int64_t taps = 1;
    for (int i = 0; i < 3; i++) {
        if (g->in[i] < 0 || g->in[i] > lim || g->out[i] < 0 || g->out[i] > lim)
            return 0;
        if (g->k[i] < 1 || g->k[i] > (1 << 20) || g->stride[i] < 1 ||
            g->stride[i] > lim || g->dil[i] < 1 || g->dil[i] > lim ||
            g->pad[i] < 0 || g->pad[i] > lim)
            return 0;
        /* tap offsets and row buffer lengths stay far from overflow */
        if ((g->k[i] - 1) > lim / g->dil[i])
            return 0;
        taps *= g->k[i];
        if (taps > (1 << 24))
            return 0;
    }
    /* entry counts of the adjoint (multiplier x kd x kh) fit an int */
    if ((g->c_out / g->c_in) > INT_MAX / 4 / (g->k[0] * g->k[1]))
        return 0;
    return 1;
}
