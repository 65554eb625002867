/*
 * Times the depthwise kernels on common layers (MobileNetV2 3x3, conformer
 * k=31 conv1d): best and median of repeated calls, and the bandwidth that
 * the compulsory traffic (input + output + weights) implies.
 *   dw_bench [threads] [isa] [reps]
 * Built by meson, not by default (tests/c/meson.build):
 *   meson compile -C <build dir> dw_bench
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "depthwise/depthwise.h"
#include "dw_paths.h"
#include "core/isa.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static cc_geom mk(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                  int nsp)
{
    cc_geom g;
    memset(&g, 0, sizeof g);
    g.batch = n, g.c_in = c, g.groups = c, g.c_out = c;
    for (int i = 0; i < 3; i++)
        g.in[i] = g.out[i] = g.k[i] = g.stride[i] = g.dil[i] = 1, g.pad[i] = 0;
    for (int i = 3 - nsp; i < 3; i++) {
        g.in[i] = i == 2 ? w : h;
        g.k[i] = k, g.stride[i] = s, g.pad[i] = p;
        g.out[i] = (g.in[i] + 2 * p - (k - 1) - 1) / s + 1;
    }
    return g;
}

int main(int argc, char **argv)
{
    int nth = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 2 && cc_isa_set(argv[2]) != CC_OK) {
        fprintf(stderr, "isa %s not available\n", argv[2]);
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 50;
    const char *names[] = {"1x32x112x112 s1", "1x96x112x112 s2", "8x144x56x56 s1",
                           "1x576x14x14 s1", "conf 1x256x64", "conf 1x256x256",
                           "conf 1x256x1000", "conf 1x256x4000", "5x5 1x240x28x28 s1",
                           "5x5 1x144x56x56 s2"};
    cc_geom gs[] = {mk(1, 32, 112, 112, 3, 1, 1, 2), mk(1, 96, 112, 112, 3, 2, 1, 2),
                    mk(8, 144, 56, 56, 3, 1, 1, 2),  mk(1, 576, 14, 14, 3, 1, 1, 2),
                    mk(1, 256, 1, 64, 31, 1, 15, 1), mk(1, 256, 1, 256, 31, 1, 15, 1),
                    mk(1, 256, 1, 1000, 31, 1, 15, 1), mk(1, 256, 1, 4000, 31, 1, 15, 1),
                    mk(1, 240, 28, 28, 5, 1, 2, 2), mk(1, 144, 56, 56, 5, 2, 2, 2)};
    printf("isa %s, %d threads\n", cc_isa_name(cc_isa_current()), nth);
    for (int dt = 0; dt < 2; dt++)
        for (unsigned c = 0; c < sizeof gs / sizeof gs[0]; c++) {
            cc_geom *g = &gs[c];
            int64_t nx = g->batch * g->c_in * g->in[0] * g->in[1] * g->in[2];
            int64_t ny = g->batch * g->c_out * g->out[0] * g->out[1] * g->out[2];
            int64_t nw = g->c_out * g->k[0] * g->k[1] * g->k[2];
            size_t es = dt ? 8 : 4;
            char *x = malloc(nx * es), *y = malloc(ny * es), *w = malloc(nw * es),
                 *b = malloc(g->c_out * es), *gw = malloc(nw * es), *dx = malloc(nx * es);
            for (int64_t i = 0; i < nx; i++)
                dt ? (((double *)x)[i] = (i % 7) * 0.1) : (((float *)x)[i] = (i % 7) * 0.1f);
            for (int64_t i = 0; i < ny; i++)
                dt ? (((double *)y)[i] = (i % 5) * 0.1) : (((float *)y)[i] = (i % 5) * 0.1f);
            for (int64_t i = 0; i < nw; i++)
                dt ? (((double *)w)[i] = (i % 3) * 0.1) : (((float *)w)[i] = (i % 3) * 0.1f);
            memset(b, 0, g->c_out * es);
            double t[3][400];
            for (int op = 0; op < 3; op++) {
                for (int r = -3; r < reps; r++) {
                    double t0 = now();
                    if (op == 0)
                        dt ? cc_dw_fwd_f64(g, dw_default_path(g, 8), (double *)x, (double *)w,
                                           (double *)b, (double *)y, nth)
                           : cc_dw_fwd_f32(g, dw_default_path(g, 4), (float *)x, (float *)w,
                                           (float *)b, (float *)y, nth);
                    else if (op == 1)
                        dt ? cc_dw_adj_f64(g, (double *)y, (double *)w, NULL, (double *)dx, nth)
                           : cc_dw_adj_f32(g, (float *)y, (float *)w, NULL, (float *)dx, nth);
                    else
                        dt ? cc_dw_wgrad_f64(g, (double *)x, (double *)y, (double *)gw, nth)
                           : cc_dw_wgrad_f32(g, (float *)x, (float *)y, (float *)gw, nth);
                    if (r >= 0)
                        t[op][r] = now() - t0;
                }
                qsort(t[op], reps, sizeof(double), cmp);
            }
            double bytes = (double)(nx + ny + nw) * es;
            printf("%-5s %-20s fwd %8.4f ms (med %8.4f) %6.1f GB/s | adj %8.4f ms | wgrad %8.4f ms\n",
                   dt ? "f64" : "f32", names[c], t[0][0] * 1e3, t[0][reps / 2] * 1e3,
                   bytes / t[0][0] * 1e-9, t[1][0] * 1e3, t[2][0] * 1e3);
            free(x), free(y), free(w), free(b), free(gw), free(dx);
        }
    return 0;
}
