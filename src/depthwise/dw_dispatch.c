/*
 * Depthwise kernels: which problems they take, and the kernel table of each
 * instruction set (the choice among them is core/isa.c's).
 */
#include "dw_internal.h"

#include <limits.h>

CC_ISA_DISPATCH(dw_kern_f32, cc_dw_kern_f32)
CC_ISA_DISPATCH(dw_kern_f64, cc_dw_kern_f64)

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
