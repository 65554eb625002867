/* Depthwise forward on channels-last arrays, read and written in place:
 * the driver around the "cl" row kernels (dw_nhwc.inc). */
#include <string.h>

#include "dw_internal.h"
#include "core/claim.h"
#include "depthwise.h"
#include "core/isa.h"

/* Channels per step of the current instruction set's "cl" kernel (two
 * vectors; the scalar kernel takes any count): rows pad C to a multiple of
 * it, and where C is one already (C = 144 on AVX2) the kernel writes the
 * output rows in place. */
int64_t cc_dw_nhwc_block(int64_t elsize)
{
    switch (cc_isa_current()) {
    case CC_ISA_AVX2:
        return 2 * 32 / elsize;
    case CC_ISA_AVX512:
        return 2 * 64 / elsize;
    case CC_ISA_NEON:
        return 2 * 16 / elsize;
    default:
        return 1;
    }
}

int cc_dw_nhwc_ok(const cc_geom *g, int64_t elsize)
{
    if (!cc_dw_geom_ok(g) || g->c_out != g->c_in || (elsize != 4 && elsize != 8))
        return 0;
    dw_dims d;
    dw_dims_get(g, &d);
    /* the buffers one thread uses (weights, row ring, output row), sized in
     * double: no product of the sizes can overflow */
    const double Cp = (double)dw_round_up(d.C, cc_dw_nhwc_block(elsize));
    const double span = (double)dw_pow2((d.KH - 1) * d.dh + 1);
    const double elems = ((double)d.KD * d.KH * d.KW + 1.0) * Cp +
                         (double)d.KD * span * (double)dw_cl_width(&d) * Cp + (double)d.OW * Cp;
    return elems * (double)elsize <= (double)DW_NHWC_MAX_BYTES;
}

#define CC_TEMPLATE "depthwise/dw_nhwc.inc"
#include "core/instances.h"
