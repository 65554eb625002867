/*
 * Depthwise kernels: which problems they take, and the kernel table of each
 * instruction set (the choice among them is core/isa.c's).
 */
#include "dw_internal.h"

#include <limits.h>

#include "core/cpu.h"

CC_ISA_DISPATCH(dw_kern_f32, cc_dw_kern_f32)
CC_ISA_DISPATCH(dw_kern_f64, cc_dw_kern_f64)

/* 3x3 planes of stride 1, and of stride 2 with output rows of 20 columns
 * or more, on 256-bit vectors under AVX-512 (core/cpu.h says where).
 * Measured on AMD EPYC Zen 4 (family 25 model 17), the plane backend
 * forced, 7-11 alternations in one process, median time of the 256-bit
 * kernels over the 512-bit ones, float32, 1 / 2 threads:
 *  - stride 1: 1x144x56x56 0.79 / 0.80, 8x144x56x56 0.88 / 0.82,
 *    1x96x112x112 0.84 / 0.88, 1x32x112x112 0.85, 1x128x60x60 0.87,
 *    1x128x40x40 0.81, 1x64x20x20 0.85, 1x64x30x30 0.96, 1x192x28x28 0.94,
 *    1x576x7x7 0.90, 1x384x14x14 1.01; float64 0.67-0.83 (7x7: 0.98);
 *  - stride 2, by output row: 56 columns (1x96x112x112) 0.83 / 0.85, 40
 *    0.83, 28 (8x144x56x56) 0.90 / 0.93, (1x144x56x56) 0.92 / 0.95, 30
 *    0.97, 20 0.86, but 15 and 14 1.02-1.03: the narrower rows gain where
 *    the 256-bit vectors end nearer the row's end; 3-D s(1,2,2) 1.00.
 * Left on 512 bits: dilation 2 (4x256x33x33 1.11 / 0.90, 1x256x33x33
 * 0.95) and 4 (0.99), and 5x5 (4x240x28x28 1.17, 5x5 stride 2 1.10),
 * whose 25 weights do not fit the AVX2 kernels' 16 registers. */
#define DW_256_S2_MIN_OW 20

/* The AVX2 table under AVX-512 where core/cpu.h says (on), else the table of
 * the instruction set in use; the plane kernels from the AVX2 kernels built
 * for AVX-512VL (src/meson.build: 32 vector registers) where the CPU has
 * it. */
#if defined(CC_BUILD_AVX2) && defined(CC_BUILD_AVX512)
extern const dw_kern_f32 cc_dw_kern_f32_avx2vl;
extern const dw_kern_f64 cc_dw_kern_f64_avx2vl;
static int dw_256_on_(void) { return cc_isa_current() == CC_ISA_AVX512 && cc_cpu_dw_256(); }
static int dw_vl_(void)
{
#if defined(CC_SIMDE_AVX512)
    return 1; /* built on AVX2's flags there */
#else
    return __builtin_cpu_supports("avx512vl");
#endif
}
#define DW_PICK(SFX, on) ((on) ? &cc_dw_kern_##SFX##_avx2 : cc_dw_kern_##SFX())
#define DW_PICK_PLANE(SFX, on)                                                 \
    ((on) ? (dw_vl_() ? &cc_dw_kern_##SFX##_avx2vl : &cc_dw_kern_##SFX##_avx2) \
          : cc_dw_kern_##SFX())
#else
static int dw_256_on_(void) { return 0; }
#define DW_PICK(SFX, on) ((void)(on), cc_dw_kern_##SFX())
#define DW_PICK_PLANE(SFX, on) DW_PICK(SFX, on)
#endif

static int dw_plane_256_(const dw_dims *d)
{
    return d->KH == 3 && d->KW == 3 && d->dh == 1 && d->dw == 1 && d->sh == d->sw &&
           (d->sw == 1 || (d->sw == 2 && d->OW >= DW_256_S2_MIN_OW)) && dw_256_on_();
}

const dw_kern_f32 *cc_dw_plane_kern_f32(const dw_dims *d) { return DW_PICK_PLANE(f32, dw_plane_256_(d)); }
const dw_kern_f64 *cc_dw_plane_kern_f64(const dw_dims *d) { return DW_PICK_PLANE(f64, dw_plane_256_(d)); }

/* The weight gradient's wg kernel on 256-bit vectors under AVX-512 where
 * core/cpu.h says, for every geometry.  Its per-lane partial sums are added
 * in a different order there, so the values differ from the 512-bit ones
 * by float rounding (still the same bits from call to call and for every
 * thread count on a machine).  Zen 4, grad_weight alone, 9 alternations in
 * one process, 256-bit / 512-bit time at 1 / 2 threads: float32
 * MobileNetV2 3x3 56x56 at 1 image 0.88 / 0.88, 8 images 0.85 / 0.88,
 * stride 2 0.88 and 0.91, DeepLab's 33x33 dilation 2 0.87 / 0.89, 5x5
 * 28x28 0.95, 5x5 stride 2 0.97 / 0.92, 7x7 56x56 0.82 / 0.82, 3-D
 * 3x3x3 s(1,2,2) 0.94; float64 0.86-0.98. */
const dw_kern_f32 *cc_dw_wg_kern_f32(void) { return DW_PICK(f32, dw_256_on_()); }
const dw_kern_f64 *cc_dw_wg_kern_f64(void) { return DW_PICK(f64, dw_256_on_()); }
#undef DW_PICK
#undef DW_PICK_PLANE

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
    /* A bound on any driver's per-thread row buffers (a row: up to stride
     * phases of the padded row; rows: the window of a step, per multiplier
     * and depth tap).  Strides, dilations and padding are parameters, not
     * memory: a stride of 1e8 asked for gigabytes of zeros.  Such
     * geometries are left to the GEMM backends (their buffers follow the
     * taps and positions, not the stride). */
    const double row = (double)g->stride[2] *
                       ((double)g->out[2] + g->in[2] + g->pad[2] +
                        (double)(g->k[2] - 1) * g->dil[2] + 2 * DW_VMAX_F32);
    const double rows = (double)(g->c_out / g->c_in) * g->k[0] *
                        (2.0 * ((double)(g->k[1] - 1) * g->dil[1] + 1) +
                         2.0 * (DW_RMAX - 1) * g->stride[1]);
    if (row * rows * 8.0 > DW_MAX_ROW_BYTES)
        return 0;
    return 1;
}
