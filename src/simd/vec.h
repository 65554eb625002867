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
