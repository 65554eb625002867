/* Depthwise forward in channels-last layout, for small planes: the driver
 * around the "cl" row kernels (dw_cl.inc). */
#include "dw_internal.h"
#include "../transpose/tr_internal.h"

/*
 * Where channels-last wins (measured, 1 thread, AVX2, float32: its time over
 * the NCHW kernels'; the transposes in and out cost about as much as a 3x3
 * kernel's arithmetic, so it wins where the NCHW kernels are weak):
 *   - 2-D layers the plane kernels take (3x3/5x5/7x7, stride 1/2): output
 *     rows of at most 7 pixels, a vector or less (7x7 planes: 3x3 0.72,
 *     5x5 0.55, 7x7 0.45; 14x14 stride 2: 1.00), and 5x5/7x7 kernels on
 *     planes up to 20x20 (14x14: 0.91 / 0.64; 20x20 7x7 0.86; 28x28: 1.78 /
 *     1.06), but not 3x3 from 8x8 up (8x8 1.31, 14x14 1.79, 28x28 3.7);
 *   - 2-D layers on the generic row kernel (dilation > 1, other kernel
 *     sizes, stride 3+), up to 28x28 outputs (28x28: 5x5 d2 0.58, 9x9 0.37,
 *     3x3 d2 0.78; 56x56: 1.22-1.80);
 *   - 3-D layers (the generic row kernel runs every one with a kernel
 *     deeper than 1) by the same rule, their planes of at most 1024
 *     outputs, while the block's whole volume fits the buffers;
 *   - never 1-D (or one-row) layers: the row kernel runs them 1.5-4.7x
 *     faster, and never a channel multiplier above 1;
 *   - not few channels, whose block is mostly empty lanes: 7x7 planes,
 *     3x3 with 8/16/32 channels 1.21/1.12/0.95, 7x7 with 8/16 1.19/0.86,
 *     14x14 5x5 with 8 1.66, 7x7 with 24 0.86: 5x5 and larger from 16
 *     channels, smaller kernels from 32.
 */
int cc_dw_cl_wanted(const dw_dims *d, int64_t elsize)
{
    const int64_t P = d->OH * d->OW, KK = d->KD * d->KH * d->KW;
    if (d->M != 1 || d->KH < 2 || d->OH < 2 || d->C < (KK >= 25 ? 16 : 32))
        return 0;
    const int want = dw_plane_spec(d) ? d->OW <= 7 || (KK >= 25 && P <= 400) : P <= 1024;
    if (!want)
        return 0;
    const int64_t CB = DW_CL_CB(elsize == 4 ? DW_VMAX_F32 : DW_VMAX_F64);
    /* the per-thread buffers (input volume, output, weights); in double, so
     * no product of the sizes can overflow */
    const double elems = ((double)d->ID * (double)d->IH * (double)dw_cl_width(d) +
                          (double)d->OD * (double)P + (double)KK + 1.0) * (double)CB;
    return elems <= (double)(DW_CL_MAX_BYTES / elsize);
}
#define DW_IMPL "dw_cl.inc"
#include "dw_instances.h"
