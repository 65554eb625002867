/* Row-major GEMM on the implicit GEMM's micro-kernels, float32 and float64
 * (uk_gemm.inc; its rule for when it runs instead of OpenBLAS there).
 *
 * The micro-kernel (src/igemm, MR rows x NR columns of vector accumulators)
 * runs a kc-deep product from an A panel in L2 and a B micro-panel in L1 at
 * 97-100% of the FMA pipes on an AMD EPYC Zen 4 (8 x 48 float32, kc 128-512:
 * 112-117 GFLOP/s on one core, 116 the pipes' peak); OpenBLAS's SkylakeX
 * kernels, which it runs there, reached 85% on a 1536^3 product.  Blocks
 * as in BLIS: B packed KC x NC (L2) into NR-column micro-panels, A packed
 * MC x KC (L2) into MR-row panels, every A panel of the block run against
 * one B micro-panel (L1) before the next.  Each call runs on the calling
 * thread, its blocks fixed by the shape. */
#include <stdlib.h>
#include <string.h>

#include "cconv.h"
#include "core/alloc.h"
#include "core/compiler.h"
#include "core/cpu.h"
#include "gemm/gemm_plan.h"
#include "gemm/uk_gemm.h"
#include "igemm/igemm.h"
#include "igemm/ig_plan.h"

/* The K block is one of the implicit GEMM's two (igemm/ig_plan.h:
 * ig_kc_of): 512 x 48 (in L2) rather than 128 x 48 (in L1) where
 * cc_cpu_long_kc says, and for the products of few A panels that read B in
 * place (uk_gemm.inc: UK_INPLACE_B_PANELS) where cc_cpu_uk_long_kc says.
 * AMD EPYC Zen 4, 7 alternations, kc 512 / 128 time at 1 / 2 threads:
 * ViT's 16x16 patches 0.979 / 0.950, 1-D k2 s2 0.990 / 0.982, ResNet-50's
 * 1x1 (64 rows, B in place) 0.980 / 0.974.  Intel Xeon (AVX-512), 3-5
 * alternations at 1 / 2 threads: ResNet-50's 256 -> 64 1x1 (B in place)
 * 1.127 / 1.119 (one image 1.088), a 1536^3 product 0.924, 1-D k2 s2 0.950
 * / 0.942, ViT 0.980 / 0.947, DCGAN's transposed layer 0.974 / 0.976,
 * ResNet-50's other 1x1 layers 0.98-1.03, UNet's transposed layer 1.043 /
 * 1.009. */
#define UK_MC_BYTES ((int64_t)192 << 10) /* the packed A block, mc x kc, in L2 */
#define UK_NC 1024                       /* columns of the packed B block (L2) */

int cc_uk_gemm_runs(void) { return cc_cpu_uk_gemm() && cc_ig_kern_f32()->lanes >= 16; }

/* float64 on the 8-lane kernels (AVX-512, 8 x 24), the products that pack
 * B only.  Intel Xeon (model 167), this GEMM / OpenBLAS's, the
 * convolution's time, 3 alternations of processes, 1 / 2 threads: DCGAN's
 * k4 s2 transposed layer 0.78-0.80 / 0.77, UNet's 2x2 s2 0.98 / 0.97, ViT's
 * patches 0.97-0.98 / 1.02, 1-D k2 s2 1.00-1.01; grad_input (A transposed)
 * ResNet-50's 1x1 0.77, ViT 0.85, 1-D k2 s2 0.82, UNet 0.99.  The products
 * of at most 12 A panels, B read in place, lost (ResNet-50's 1x1 forward
 * 1.01-1.03 / 1.11) and stay on OpenBLAS. */
int cc_uk_gemm_f64_runs(void) { return cc_cpu_uk_gemm_f64() && cc_ig_kern_f64()->lanes >= 8; }

#define CC_T float
#define CC_SFX f32
#define UK_RUNS cc_uk_gemm_runs
#include "gemm/uk_gemm.inc"
#undef CC_T
#undef CC_SFX
#undef UK_RUNS
#define CC_T double
#define CC_SFX f64
#define UK_RUNS cc_uk_gemm_f64_runs
#include "gemm/uk_gemm.inc"
#undef CC_T
#undef CC_SFX
#undef UK_RUNS
