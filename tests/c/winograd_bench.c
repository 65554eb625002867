/*
 * Times the depthwise 3x3 Winograd kernel (src/winograd) against the direct
 * depthwise kernel (src/depthwise) on the C level (no Python overhead),
 * interleaved, median of many repetitions:
 *
 *   winograd_bench nthreads reps NxCxHxW...    (padding 1, stride 1, bias)
 *
 * One thread: CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID, robust
 * on a shared machine).  More threads: wall time (CLOCK_MONOTONIC).  Prints
 * per shape: median and minimum microseconds of each kernel, and their ratio.
 * Built by meson, not by default (tests/c/meson.build):
 *   meson compile -C <build dir> winograd_bench
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "depthwise/depthwise.h"
#include "dw_paths.h"
#include "core/isa.h"
#include "winograd/wdw.h"

static double now(int nt)
{
    struct timespec ts;
    clock_gettime(nt == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s nthreads reps NxCxHxW...\n", argv[0]);
        return 2;
    }
    const int nt = atoi(argv[1]), reps = atoi(argv[2]);
    cc_isa_init();
    printf("isa: %s; %d thread(s), %s\n", cc_isa_name(cc_isa_current()), nt, nt == 1 ? "thread CPU time" : "wall time");
    for (int a = 3; a < argc; a++) {
        long long n, c, h, w;
        if (sscanf(argv[a], "%lldx%lldx%lldx%lld", &n, &c, &h, &w) != 4)
            return 2;
        cc_geom g;
        memset(&g, 0, sizeof g);
        g.batch = n, g.groups = c, g.c_in = c, g.c_out = c;
        g.in[0] = 1, g.in[1] = h, g.in[2] = w;
        g.out[0] = 1, g.out[1] = h, g.out[2] = w;
        for (int d = 0; d < 3; d++)
            g.k[d] = d ? 3 : 1, g.stride[d] = 1, g.dil[d] = 1, g.pad[d] = d ? 1 : 0;
        const size_t sz = (size_t)(n * c * h * w);
        float *x = malloc(sz * 4), *y = malloc(sz * 4), *wt = malloc((size_t)c * 36),
              *b = malloc((size_t)c * 4);
        for (size_t i = 0; i < sz; i++)
            x[i] = (float)((i * 2654435761u) % 1000) / 500.0f - 1.0f, y[i] = 0;
        for (long long i = 0; i < 9 * c; i++)
            wt[i] = (float)(i % 7) / 7.0f - 0.4f;
        for (long long i = 0; i < c; i++)
            b[i] = 0.1f;
        const int inner = (int)(sz > 2000000 ? 1 : 2000000 / sz);
        double *t[2];
        t[0] = malloc(sizeof(double) * reps), t[1] = malloc(sizeof(double) * reps);
        for (int r = -3; r < reps; r++)
            for (int k = 0; k < 2; k++) {
                const double t0 = now(nt);
                for (int i = 0; i < inner; i++) {
                    if (k == 0)
                        cc_dw_fwd_f32(&g, dw_default_path(&g, 4), x, wt, b, y, nt);
                    else
                        cc_wdw_fwd_f32(&g, x, wt, b, y, nt, NULL);
                }
                if (r >= 0)
                    t[k][r] = (now(nt) - t0) / inner;
            }
        double med[2], mn[2];
        for (int k = 0; k < 2; k++) {
            qsort(t[k], (size_t)reps, sizeof(double), cmp);
            med[k] = t[k][reps / 2];
            mn[k] = t[k][0];
        }
        printf("%-16s direct %9.1f (min %9.1f)  winograd %9.1f (min %9.1f)  wino/direct %.2f\n",
               argv[a], med[0], mn[0], med[1], mn[1], med[1] / med[0]);
        fflush(stdout);
        free(x), free(y), free(wt), free(b), free(t[0]), free(t[1]);
    }
    return 0;
}
