/* Depthwise forward in channels-last layout, for small planes: the driver
 * around the "cl" row kernels (dw_cl.inc). */
#include "dw_internal.h"
#include "core/claim.h"
#include "transpose/tr_internal.h"

/*
 * Where channels-last wins.  Measured after its transposes went to the
 * layout transpose's register-block kernels and the 5x5/7x7 plane kernels
 * to two partial sums (AMD EPYC, AVX2, float32, 1 and 2 threads, builds'
 * time cl / NCHW, 3 alternations; P = output positions of a plane):
 *   - 2-D layers the plane kernels take (3x3/5x5/7x7, stride 1/2): output
 *     rows of at most 7 pixels (7x7 planes: 3x3 0.75, 5x5 0.54, 7x7 0.33;
 *     3x3 stride 1 from 14x14 up 1.08-2.62); 3x3 stride 2 up to P = 144
 *     (0.76-0.87; 196 and 400: 0.98-1.09); 5x5 stride 1 up to 784 (0.72-
 *     0.93; 32x32 1.67, 40x40 1.25-1.34), stride 2 up to 400 (0.50-0.77;
 *     784 1.06-1.29); 7x7 up to 784 (stride 1 0.59-0.76, stride 2
 *     0.67-1.00; 40x40 stride 1 1.01-1.07, 56x56 1.21-1.23);
 *   - 2-D layers on the generic row kernel (other kernel sizes, stride
 *     3+, dilations the plane kernels lack) up to P = 2048 (3x3 dilation
 *     2-6 on 33x33 and 45x45: 0.48-0.79, 9x9 0.27, stride 3 0.27-0.29;
 *     65x65 1.46-1.50);
 *   - 3x3 stride 1 dilation 2 and 4 on the dilated plane kernels: the 3x3
 *     rule (AMD EPYC Zen 4, AVX-512, float32, time cl / plane at 1 / 2
 *     threads: 4x256x33x33 1.02 / 1.01, 1x256x33x33 0.94 / 2.11,
 *     1x576x17x17 0.92 / 1.88, 1x960x17x17 d4 0.79 / 1.32, 8x144x28x28
 *     1.01 / 1.08, 1x256x65x65 1.17 / 1.27; the generic row kernel they
 *     replace took 1.6-2.8 times the plane kernels' time);
 *   - 3-D layers whose planes the plane kernels take (one call per depth
 *     tap): the 2-D rule, and 3x3 stride 1 up to P = 196 (2 threads,
 *     float32, 3x3x3: 1x192x16x28x28 cl 4.2-5.7 ms, plane 2.6-3.0;
 *     1x192x16^3 1.1-1.4 / 0.86-0.88; 2x64x8x28x28 0.97-1.8 / 0.69-0.72;
 *     1x64x8x14x14 0.12-0.19 / 0.18-0.20; stride (1,2,2) on 28x28 tied);
 *     other 3-D layers (the generic row kernel) up to P = 1024 per plane
 *     (earlier measurements), while the block's whole volume fits the
 *     buffers;
 *   - never 1-D (or one-row) layers: the row kernel runs them 1.5-4.7x
 *     faster, and never a channel multiplier above 1;
 *   - not few channels, whose block is mostly empty lanes: 7x7 planes,
 *     3x3 with 8/16/32 channels 1.21/1.12/0.95, 7x7 with 8/16 1.19/0.86,
 *     14x14 5x5 with 8 1.66, 7x7 with 24 0.86: 5x5 and larger from 16
 *     channels, smaller kernels from 32.
 */
static int dw_cl_plane_wins(const dw_dims *d, int64_t P, int64_t elsize)
{
    if (d->OW <= 7)
        return 1;
    /* Blocks of 12-16 pixels (AVX-512: 16 sums and 7 weights in registers)
     * and the input rows prefetched move the line for 2-D 5x5 and 7x7
     * layers (AMD EPYC family 26, AVX-512, time cl / plane, 1 and 2
     * threads, 7 alternations, float32 unless said): 7x7 stride 1 28x28
     * 0.54-0.55 (float64 0.60), 56x56 0.70-0.71 (float64 0.91), 112x112
     * 0.95 / 1.35 (float64 0.98), and once the kernel wrote its rows
     * into y itself 4x96x64x64 0.66 / 0.84 (float64 0.77), 1x96x112x112
     * 0.78 / 1.08 (3 channel blocks for 2 threads); 7x7 stride 2 from
     * 56x56 0.71-0.73 (float64 0.79); 5x5 stride 2 from 56x56 0.75-0.84
     * (float64 1.09-1.15), from 112x112 1.18-1.20; 5x5 stride 1 56x56
     * 1.08-1.09 (float64 1.16); 3x3 stays on the plane kernels (1.29-1.6). */
    const int wide = d->ID == 1 && (elsize == 4 ? cc_dw_kern_f32()->cl_pb
                                                : cc_dw_kern_f64()->cl_pb) >= 16;
    switch (d->KH) {
    case 3: /* 3-D (one plane-kernel call per depth tap): stride 1 too */
        return d->sh == 2 ? P <= 144 : d->KD > 1 && P <= 196;
    case 5:
        return P <= (d->sh == 1 || (wide && elsize == 4) ? 784 : 400);
    default:
        return P <= (wide ? 4096 : 784);
    }
}

int cc_dw_cl_applies(const dw_dims *d, int64_t elsize)
{
    if (d->M != 1)
        return 0;
    const int64_t P = d->OH * d->OW, KK = d->KD * d->KH * d->KW;
    const int64_t CB = DW_CL_CB(elsize == 4 ? DW_VMAX_F32 : DW_VMAX_F64);
    /* the per-thread buffers (input volume, output, weights); in double, so
     * no product of the sizes can overflow */
    const double elems = ((double)d->ID * (double)d->IH * (double)dw_cl_width(d) +
                          (double)d->OD * (double)P + (double)KK + 1.0) * (double)CB;
    return elems <= (double)(DW_CL_MAX_BYTES / elsize);
}

int cc_dw_cl_wanted(const dw_dims *d, int64_t elsize)
{
    const int64_t P = d->OH * d->OW, KK = d->KD * d->KH * d->KW;
    if (d->KH < 2 || d->OH < 2 || d->C < (KK >= 25 ? 16 : 32))
        return 0;
    if (dw_plane_spec(d))
        return dw_cl_plane_wins(d, P, elsize);
    return P <= (d->KD == 1 ? 2048 : 1024);
}

#define CC_TEMPLATE "depthwise/dw_cl.inc"
#include "core/instances.h"
