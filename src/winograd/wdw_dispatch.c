/*
 * Depthwise 3x3 Winograd: which problems it takes, the filter transform, and
 * the kernel table of each instruction set (the choice among them is
 * core/isa.c's).
 */
#include "wdw_internal.h"

CC_ISA_DISPATCH(wdw_kern, cc_wdw_kern_f32)

int cc_wdw_geom_ok(const cc_geom *g)
{
    const int64_t lim = (int64_t)1 << 40;
    if (!g || g->batch < 0 || g->batch > lim || g->c_in < 1 || g->c_in > lim)
        return 0;
    if (g->groups != g->c_in || g->c_out != g->c_in)
        return 0;
    if (g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1 || g->stride[0] != 1 ||
        g->pad[0] != 0 || g->dil[0] != 1)
        return 0;
    for (int d = 1; d < 3; d++) {
        if (g->k[d] != 3 || g->stride[d] != 1 || g->dil[d] != 1)
            return 0;
        if (g->in[d] < 1 || g->in[d] > lim || g->out[d] < 1)
            return 0;
        if (g->pad[d] < 0 || g->pad[d] > 2)
            return 0;
        const int64_t pa = g->out[d] + 2 - g->in[d] - g->pad[d];
        if (pa < 0 || pa > 2)
            return 0;
    }
    return 1;
}

void cc_wdw_filter_f32(const float *g, float *u)
{
    /* G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]] */
    double t[4][3];
    for (int b = 0; b < 3; b++) {
        const double g0 = g[b], g1 = g[3 + b], g2 = g[6 + b];
        t[0][b] = g0;
        t[1][b] = 0.5 * (g0 + g1 + g2);
        t[2][b] = 0.5 * (g0 - g1 + g2);
        t[3][b] = g2;
    }
    for (int i = 0; i < 4; i++) {
        const double a = t[i][0], b = t[i][1], c = t[i][2];
        u[4 * i + 0] = (float)a;
        u[4 * i + 1] = (float)(0.5 * (a + b + c));
        u[4 * i + 2] = (float)(0.5 * (a - b + c));
        u[4 * i + 3] = (float)c;
    }
}
