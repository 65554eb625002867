/* Vendor-dependent kernel choices (cpu.h). */
#include "cpu.h"

#include "compiler.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif


const char *cc_cpu_vendor(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_is("amd"))
        return "amd";
    if (__builtin_cpu_is("intel"))
        return "intel";
#endif
    return "other";
}

int cc_cpu_family(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return -1;
    const unsigned base = (a >> 8) & 0xf;
    return (int)(base == 0xf ? base + ((a >> 20) & 0xff) : base);
#else
    return -1;
#endif
}

/* The defaults of the choices below (cpu.h says why). */
static int not_intel(void) { return strcmp(cc_cpu_vendor(), "intel") != 0; }
static int amd_zen4(void) { return strcmp(cc_cpu_vendor(), "amd") == 0 && cc_cpu_family() == 25; }

/* The choice in *slot (-1 until decided; every thread that races here
 * decides the same): the environment's 0 or 1 for var, else dflt(). */
static int once_choice(int *slot, const char *var, int (*dflt)(void))
{
    int v = CC_ONCE_LOAD(*slot);
    if (v < 0) {
        const char *env = getenv(var);
        v = env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0) ? env[0] == '1' : dflt();
        CC_ONCE_STORE(*slot, v);
    }
    return v;
}

static int every_cpu(void) { return 1; }

static int prefetch_rows = -1, uk_gemm = -1, uk_gemm_f64 = -1, dw_256 = -1, wino_small = -1,
           long_kc = -1, uk_long_kc = -1, uk_spread_pf = -1, dw_flat = -1, ig_inplace = -1,
           dw_direct = -1, dw_a2p = -1, ig_stem_direct = -1, ig_weight_inplace = -1,
           patch_pack = -1, ig_kw_band = -1;

int cc_cpu_prefetch_rows(void) { return once_choice(&prefetch_rows, "CCONV_PREFETCH_ROWS", not_intel); }
int cc_cpu_uk_gemm(void) { return once_choice(&uk_gemm, "CCONV_UK_GEMM", every_cpu); }
int cc_cpu_uk_gemm_f64(void) { return once_choice(&uk_gemm_f64, "CCONV_UK_GEMM_F64", every_cpu); }
int cc_cpu_dw_256(void) { return once_choice(&dw_256, "CCONV_DW_256", amd_zen4); }
int cc_cpu_wino_small(void) { return once_choice(&wino_small, "CCONV_WINO_SMALL", every_cpu); }
int cc_cpu_long_kc(void) { return once_choice(&long_kc, "CCONV_LONG_KC", every_cpu); }
int cc_cpu_uk_long_kc(void) { return once_choice(&uk_long_kc, "CCONV_UK_LONG_KC", not_intel); }
int cc_cpu_uk_spread_pf(void) { return once_choice(&uk_spread_pf, "CCONV_UK_SPREAD_PF", every_cpu); }
int cc_cpu_ig_stem_direct(void) { return once_choice(&ig_stem_direct, "CCONV_IG_STEM_DIRECT", every_cpu); }
int cc_cpu_ig_weight_inplace(void) {
    return once_choice(&ig_weight_inplace, "CCONV_IG_WEIGHT_INPLACE", every_cpu);
}
int cc_cpu_patch_pack(void) { return once_choice(&patch_pack, "CCONV_PATCH_PACK", every_cpu); }
int cc_cpu_ig_kw_band(void) { return once_choice(&ig_kw_band, "CCONV_IG_KW_BAND", every_cpu); }
int cc_cpu_dw_flat(void) { return once_choice(&dw_flat, "CCONV_DW_FLAT", every_cpu); }
int cc_cpu_dw_direct(void) { return once_choice(&dw_direct, "CCONV_DW_DIRECT", every_cpu); }
int cc_cpu_dw_a2p(void) { return once_choice(&dw_a2p, "CCONV_DW_A2P", every_cpu); }
static int wide_sets(void) { return 2; }
int cc_cpu_ig_inplace(void) { return once_choice(&ig_inplace, "CCONV_IG_INPLACE", wide_sets); }
