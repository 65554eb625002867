/*
 * The vector layer of the instruction set a kernel family's per-ISA instance
 * is compiled for.  meson compiles each family's instance template (e.g.
 * depthwise/dw_kernels.c) once per instruction set of the build and element
 * type, with that set's flags and -DCC_ISA=<isa> -DCC_ISA_IS_<ISA>, plus
 * -DCC_F64 for float64 (src/meson.build: kernel_families); the template
 * includes this header first.  The contract of the layers: vec_common.h.
 */
#if defined(CC_ISA_IS_AVX2)
#include "vec_avx2.h"
#elif defined(CC_ISA_IS_AVX512)
#include "vec_avx512.h"
#elif defined(CC_ISA_IS_NEON)
#include "vec_neon.h"
#elif defined(CC_ISA_IS_SCALAR)
#include "vec_scalar.h"
#else
#error "a per-ISA kernel instance needs -DCC_ISA=<isa> -DCC_ISA_IS_<ISA> (src/meson.build)"
#endif
/* VSTOREC through memory where the layer has no compressing store */
#if !defined(CC_ISA_IS_SCALAR) && !defined(VSTOREC)
CC_INLINE void vec_storec_mem(CC_T *p, VT v, uint32_t m)
{
    CC_T t[V];
    VSTOREU(t, v);
    int o = 0;
    for (int l = 0; l < V; ++l)
        if ((m >> l) & 1u) p[o++] = t[l];
}
#define VSTOREC(p, v, m) vec_storec_mem((p), (v), (m))
#endif
