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

/* The environment's 0 or 1 for a vendor choice, else 1 on every CPU but
 * Intel's. */
static int vendor_choice(const char *var)
{
    const char *env = getenv(var);
    if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0))
        return env[0] == '1';
    return strcmp(cc_cpu_vendor(), "intel") != 0;
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

/* -1 until decided; every thread that races here decides the same. */
static int prefetch_rows = -1, uk_gemm = -1, dw_256 = -1;

int cc_cpu_prefetch_rows(void)
{
    int v = CC_ONCE_LOAD(prefetch_rows);
    if (v < 0) {
        v = vendor_choice("CCONV_PREFETCH_ROWS");
        CC_ONCE_STORE(prefetch_rows, v);
    }
    return v;
}

int cc_cpu_uk_gemm(void)
{
    int v = CC_ONCE_LOAD(uk_gemm);
    if (v < 0) {
        v = vendor_choice("CCONV_UK_GEMM");
        CC_ONCE_STORE(uk_gemm, v);
    }
    return v;
}

int cc_cpu_dw_256(void)
{
    int v = CC_ONCE_LOAD(dw_256);
    if (v < 0) {
        const char *env = getenv("CCONV_DW_256");
        if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0))
            v = env[0] == '1';
        else
            v = strcmp(cc_cpu_vendor(), "amd") == 0 && cc_cpu_family() == 25;
        CC_ONCE_STORE(dw_256, v);
    }
    return v;
}
