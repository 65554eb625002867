/*
 * Depthwise 3x3 Winograd: which problems it takes, the filter transform, and
 * the instruction-set dispatch table (the only global mutable state, set
 * once at import by cc_wdw_init() or forced by cc_wdw_set_isa() for tests).
 */
#include "wdw_internal.h"

#include <stdlib.h>
#include <string.h>

#define WDW_TABLE(ISA)                                                        \
    static const wdw_isa wdw_isa_##ISA = {#ISA, &cc_wdw_v_f32_##ISA,          \
                                          cc_wdw_plane_f32_##ISA};

WDW_TABLE(scalar)
#if defined(CC_HAVE_X86_SIMD)
WDW_TABLE(avx2)
WDW_TABLE(avx512)
#endif
#if defined(__aarch64__)
WDW_TABLE(neon)
#endif

/* Best first. */
static const wdw_isa *const wdw_all[] = {
#if defined(CC_HAVE_X86_SIMD)
    &wdw_isa_avx512,
    &wdw_isa_avx2,
#endif
#if defined(__aarch64__)
    &wdw_isa_neon,
#endif
    &wdw_isa_scalar,
};
#define WDW_NISA ((int)(sizeof(wdw_all) / sizeof(wdw_all[0])))

static int wdw_cpu_has(const wdw_isa *isa)
{
#if defined(CC_HAVE_X86_SIMD)
    if (isa == &wdw_isa_avx2 || isa == &wdw_isa_avx512) {
        __builtin_cpu_init();
        int ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#ifndef WDW_SIMDE_AVX512 /* tests/c: the AVX-512 kernels built on SIMDe */
        if (isa == &wdw_isa_avx512)
            ok = ok && __builtin_cpu_supports("avx512f");
#endif
        return ok;
    }
#endif
    (void)isa;
    return 1;
}

static const wdw_isa *wdw_find(const char *name)
{
    for (int i = 0; i < WDW_NISA; i++)
        if (strcmp(wdw_all[i]->name, name) == 0)
            return wdw_all[i];
    return NULL;
}

static const wdw_isa *wdw_best(void)
{
    for (int i = 0; i < WDW_NISA; i++)
        if (wdw_cpu_has(wdw_all[i]))
            return wdw_all[i];
    return &wdw_isa_scalar;
}

#if defined(__GNUC__) || defined(__clang__)
#define WDW_LOAD(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define WDW_STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#else
#define WDW_LOAD(p) (p)
#define WDW_STORE(p, v) ((p) = (v))
#endif

static const wdw_isa *wdw_cur = NULL;
static int wdw_init_status = CC_OK;

int cc_wdw_init(void)
{
    if (WDW_LOAD(wdw_cur) != NULL)
        return wdw_init_status;
    const wdw_isa *isa = NULL;
    int status = CC_OK;
    const char *env = getenv("CCONV_SIMD");
    if (env && env[0] && strcmp(env, "auto") != 0) {
        isa = wdw_find(env);
        if (!isa || !wdw_cpu_has(isa)) {
            isa = NULL;
            status = CC_ERR_ARG;
        }
    }
    if (!isa)
        isa = wdw_best();
    wdw_init_status = status;
    WDW_STORE(wdw_cur, isa);
    return status;
}

WDW_HIDDEN const wdw_isa *cc_wdw_current(void)
{
    const wdw_isa *isa = WDW_LOAD(wdw_cur);
    if (!isa) {
        cc_wdw_init();
        isa = WDW_LOAD(wdw_cur);
    }
    return isa;
}

int cc_wdw_set_isa(const char *name)
{
    const wdw_isa *isa;
    if (!name || !name[0] || strcmp(name, "auto") == 0)
        isa = wdw_best();
    else
        isa = wdw_find(name);
    if (!isa || !wdw_cpu_has(isa))
        return CC_ERR_ARG;
    WDW_STORE(wdw_cur, isa);
    return CC_OK;
}

const char *cc_wdw_isa(void) { return cc_wdw_current()->name; }

int cc_wdw_isa_available(const char *name)
{
    const wdw_isa *isa = name ? wdw_find(name) : NULL;
    return isa && wdw_cpu_has(isa);
}

int cc_wdw_geom_ok(const cc_geom *g)
{
    const int64_t lim = (int64_t)1 << 40;
    if (!g || g->batch < 0 || g->batch > lim || g->c_in < 1 || g->c_in > lim)
        return 0;
    if (g->groups != g->c_in || g->c_out != g->c_in)
        return 0;
    if (g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1 || g->stride[0] != 1 ||
        g->pad[0] != 0 || g->dil[0] != 1)
        return 0;
    for (int d = 1; d < 3; d++) {
        if (g->k[d] != 3 || g->stride[d] != 1 || g->dil[d] != 1)
            return 0;
        if (g->in[d] < 1 || g->in[d] > lim || g->out[d] < 1)
            return 0;
        if (g->pad[d] < 0 || g->pad[d] > 2)
            return 0;
        const int64_t pa = g->out[d] + 2 - g->in[d] - g->pad[d];
        if (pa < 0 || pa > 2)
            return 0;
    }
    return 1;
}

void cc_wdw_filter_f32(const float *g, float *u)
{
    /* G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]] */
    double t[4][3];
    for (int b = 0; b < 3; b++) {
        const double g0 = g[b], g1 = g[3 + b], g2 = g[6 + b];
        t[0][b] = g0;
        t[1][b] = 0.5 * (g0 + g1 + g2);
        t[2][b] = 0.5 * (g0 - g1 + g2);
        t[3][b] = g2;
    }
    for (int i = 0; i < 4; i++) {
        const double a = t[i][0], b = t[i][1], c = t[i][2];
        u[4 * i + 0] = (float)a;
        u[4 * i + 1] = (float)(0.5 * (a + b + c));
        u[4 * i + 2] = (float)(0.5 * (a - b + c));
        u[4 * i + 3] = (float)c;
    }
}
