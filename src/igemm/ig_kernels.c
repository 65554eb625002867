/*
 * The implicit GEMM's kernel table of one instruction set and element type,
 * cc_ig_kern_<f32|f64>_<isa>: the micro-kernels, the band and output row
 * copies, the weight-gradient kernel, the dense Winograd's row split
 * and transforms (winograd/wino_tr*.inc), which run between its GEMMs on
 * the same micro-kernels, and the small-plane col2im's row adds
 * (ig_c2i*.inc).  meson compiles this file once per instruction
 * set and element type of the build, with that set's flags
 * (src/meson.build: kernel_families).
 */
#include <stddef.h>

#include "simd/vec.h"
#include "igemm.h"

#define IG_ISA_FN(name) CC_ISA_NAME(CC_CAT(cc_ig_, name))

/* register blocks (igemm.h): MR rows x NR columns of NV vectors, and the
 * weight gradient's MRW channels x NRW taps */
#if defined(CC_ISA_IS_SCALAR)
#define IG_MR IG_MR_SCALAR
#define IG_NR IG_NR_SCALAR
#define IG_MRW IG_MRW_SCALAR
#define IG_NRW IG_NRW_SCALAR
#define IG_LANES 1
#define IG_SNV IG_SNV_MAX
#define IG_SACC IG_SACC_SCALAR
#include "ig_ukr_scalar.inc"
#include "ig_ukrs_scalar.inc"
#include "winograd/wino_tr_scalar.inc"
#include "ig_c2i_scalar.inc"
#else
#if defined(CC_ISA_IS_AVX2)
#define IG_MR IG_MR_AVX2
#define IG_NV IG_NV_AVX2
#define IG_MRW IG_MRW_AVX2
#define IG_NRW IG_NRW_AVX2
#define IG_SACC IG_SACC_AVX2
#elif defined(CC_ISA_IS_AVX512)
#define IG_MR IG_MR_AVX512
#define IG_NV IG_NV_AVX512
#define IG_MRW IG_MRW_AVX512
#define IG_NRW IG_NRW_AVX512
#define IG_SACC IG_SACC_AVX512
#elif defined(CC_ISA_IS_NEON)
#define IG_MR IG_MR_NEON
#define IG_NV IG_NV_NEON
#define IG_MRW IG_MRW_NEON
#define IG_NRW IG_NRW_NEON
#define IG_SACC IG_SACC_NEON
#endif
#define IG_NR (IG_NV * V)
#define IG_LANES V
#define IG_SNV IG_SNV_MAX
#include "ig_ukr.inc"
#include "ig_ukrs.inc"
#include "winograd/wino_tr.inc"
#include "ig_c2i.inc"
#endif

const IG_KERN_T CC_ISA_NAME(cc_ig_kern) = {
    IG_MR, IG_NR, IG_ISA_FN(ukr), IG_ISA_FN(ukri), IG_ISA_FN(packr),
    IG_MRW, IG_NRW, IG_LANES, IG_ISA_FN(ukrw), IG_ISA_FN(wtin), IG_ISA_FN(wtout),
    IG_ISA_FN(rows), IG_ISA_FN(ukrn), IG_ISA_FN(ukrin), IG_ISA_FN(wsplit),
    IG_SNV, {0, IG_SCO_OF(1), IG_SCO_OF(2), IG_SCO_OF(3), IG_SCO_OF(4)}, IG_ISA_FN(ukrs),
    IG_ISA_FN(packa), IG_ISA_FN(wtinr), IG_ISA_FN(w1tin), IG_ISA_FN(w1tout),
    IG_ISA_FN(wtinr2), IG_ISA_FN(wtout2), IG_ISA_FN(ukrih), IG_ISA_FN(rows2), IG_ISA_FN(rows4),
    IG_ISA_FN(ukriy), IG_ISA_FN(ukrip), IG_ISA_FN(ukra), IG_ISA_FN(wtfilt),
    IG_ISA_FN(ukrt), IG_ISA_FN(c2ip), IG_ISA_FN(radd)};
