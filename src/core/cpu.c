/* Vendor-dependent kernel choices (cpu.h). */
#include "cpu.h"

#include "compiler.h"

#include <stdlib.h>
#include <string.h>


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

/* -1 until decided; every thread that races here decides the same. */
static int prefetch_rows = -1;

int cc_cpu_prefetch_rows(void)
{
    int v = CC_ONCE_LOAD(prefetch_rows);
    if (v >= 0)
        return v;
    const char *env = getenv("CCONV_PREFETCH_ROWS");
    if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0))
        v = env[0] == '1';
    else
        v = strcmp(cc_cpu_vendor(), "intel") != 0;
    CC_ONCE_STORE(prefetch_rows, v);
    return v;
}
