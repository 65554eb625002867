/*
 * The depthwise 3x3 Winograd kernel of one instruction set (float32 only)
 * and its table entry, cc_wdw_kern_f32_<isa>.  meson compiles this file
 * once per instruction set of the build, with that set's flags
 * (src/meson.build: kernel_families).
 */
#include "simd/vec.h"
#include "wdw_internal.h"

#define WDW_FN(name) CC_ISA_NAME(CC_CAT(cc_wdw_, name))

#if defined(CC_ISA_IS_SCALAR)
#include "wdw3x3_scalar.inc"
#define WDW_V 1
#else
/* output rows per step (at most WDW_RMAX) */
#if defined(CC_ISA_IS_AVX512)
#define WDW_R 6
#else
#define WDW_R 4
#endif
#include "wdw3x3.inc"
#define WDW_V V
#endif

const wdw_kern CC_ISA_NAME(cc_wdw_kern) = {WDW_V, WDW_FN(plane)};
