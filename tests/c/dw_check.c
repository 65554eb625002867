/*
 * Checks the depthwise kernels (src/depthwise) against a naive reference
 * written here (double accumulation, bounds checks, scatter form for the
 * adjoint), for every instruction set this CPU and build can run, on random
 * geometries: 1-D/2-D/3-D, strides 1-3, padding 0-3 (asymmetric too),
 * dilation 1-2, multiplier 1-3, inputs smaller than the kernel, the
 * specialised 3x3/5x5 stride-1/2 shapes and long 1-D kernels; forward,
 * adjoint (grad_input) and grad_weight, float32 and float64.  Also checks
 * that grad_weight is bit-identical across calls and thread counts, and
 * that every instruction set agrees with the scalar one.
 *
 *   dw_check [iterations] [seed]     exit status 0 when all pass
 *
 * Built by meson (tests/c/meson.build); tests/test_depthwise_kernels.py runs
 * it (native, and cross-compiled for
 * aarch64 and run under qemu).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depthwise/depthwise.h"
#include "core/isa.h"

#define CHECK_RNG_SEED 88172645463325252ull
#include "check_rng.h"
static double ru(void) { return rud(); }

static int64_t prod3(const int64_t *a) { return a[0] * a[1] * a[2]; }

/* ---- naive reference ----------------------------------------------------- */

static void ref_fwd(const cc_geom *g, const double *x, const double *w, const double *b,
                    double *y)
{
    const int64_t M = g->c_out / g->c_in, KK = prod3(g->k), IS = prod3(g->in),
                  OS = prod3(g->out);
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t co = 0; co < g->c_out; co++)
            for (int64_t o0 = 0; o0 < g->out[0]; o0++)
                for (int64_t o1 = 0; o1 < g->out[1]; o1++)
                    for (int64_t o2 = 0; o2 < g->out[2]; o2++) {
                        double s = b ? b[co] : 0.0;
                        for (int64_t t0 = 0; t0 < g->k[0]; t0++)
                            for (int64_t t1 = 0; t1 < g->k[1]; t1++)
                                for (int64_t t2 = 0; t2 < g->k[2]; t2++) {
                                    int64_t i0 = o0 * g->stride[0] - g->pad[0] + t0 * g->dil[0];
                                    int64_t i1 = o1 * g->stride[1] - g->pad[1] + t1 * g->dil[1];
                                    int64_t i2 = o2 * g->stride[2] - g->pad[2] + t2 * g->dil[2];
                                    if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1] ||
                                        i2 < 0 || i2 >= g->in[2])
                                        continue;
                                    s += w[co * KK + (t0 * g->k[1] + t1) * g->k[2] + t2] *
                                         x[(n * g->c_in + co / M) * IS +
                                           (i0 * g->in[1] + i1) * g->in[2] + i2];
                                }
                        y[(n * g->c_out + co) * OS + (o0 * g->out[1] + o1) * g->out[2] + o2] = s;
                    }
}

/* adjoint by scatter (a different order from the kernels' gather) */
static void ref_adj(const cc_geom *g, const double *gy, const double *w, const double *b,
                    double *dx)
{
    const int64_t M = g->c_out / g->c_in, KK = prod3(g->k), IS = prod3(g->in),
                  OS = prod3(g->out);
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t ci = 0; ci < g->c_in; ci++)
            for (int64_t i = 0; i < IS; i++)
                dx[(n * g->c_in + ci) * IS + i] = b ? b[ci] : 0.0;
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t co = 0; co < g->c_out; co++)
            for (int64_t o0 = 0; o0 < g->out[0]; o0++)
                for (int64_t o1 = 0; o1 < g->out[1]; o1++)
                    for (int64_t o2 = 0; o2 < g->out[2]; o2++) {
                        double v = gy[(n * g->c_out + co) * OS + (o0 * g->out[1] + o1) * g->out[2] + o2];
                        for (int64_t t0 = 0; t0 < g->k[0]; t0++)
                            for (int64_t t1 = 0; t1 < g->k[1]; t1++)
                                for (int64_t t2 = 0; t2 < g->k[2]; t2++) {
                                    int64_t i0 = o0 * g->stride[0] - g->pad[0] + t0 * g->dil[0];
                                    int64_t i1 = o1 * g->stride[1] - g->pad[1] + t1 * g->dil[1];
                                    int64_t i2 = o2 * g->stride[2] - g->pad[2] + t2 * g->dil[2];
                                    if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1] ||
                                        i2 < 0 || i2 >= g->in[2])
                                        continue;
                                    dx[(n * g->c_in + co / M) * IS + (i0 * g->in[1] + i1) * g->in[2] + i2] +=
                                        w[co * KK + (t0 * g->k[1] + t1) * g->k[2] + t2] * v;
                                }
                    }
}

static void ref_wgrad(const cc_geom *g, const double *x, const double *gy, double *gw)
{
    const int64_t M = g->c_out / g->c_in, KK = prod3(g->k), IS = prod3(g->in),
                  OS = prod3(g->out);
    memset(gw, 0, sizeof(double) * (size_t)(g->c_out * KK));
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t co = 0; co < g->c_out; co++)
            for (int64_t o0 = 0; o0 < g->out[0]; o0++)
                for (int64_t o1 = 0; o1 < g->out[1]; o1++)
                    for (int64_t o2 = 0; o2 < g->out[2]; o2++) {
                        double v = gy[(n * g->c_out + co) * OS + (o0 * g->out[1] + o1) * g->out[2] + o2];
                        for (int64_t t0 = 0; t0 < g->k[0]; t0++)
                            for (int64_t t1 = 0; t1 < g->k[1]; t1++)
                                for (int64_t t2 = 0; t2 < g->k[2]; t2++) {
                                    int64_t i0 = o0 * g->stride[0] - g->pad[0] + t0 * g->dil[0];
                                    int64_t i1 = o1 * g->stride[1] - g->pad[1] + t1 * g->dil[1];
                                    int64_t i2 = o2 * g->stride[2] - g->pad[2] + t2 * g->dil[2];
                                    if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1] ||
                                        i2 < 0 || i2 >= g->in[2])
                                        continue;
                                    gw[co * KK + (t0 * g->k[1] + t1) * g->k[2] + t2] +=
                                        v * x[(n * g->c_in + co / M) * IS + (i0 * g->in[1] + i1) * g->in[2] + i2];
                                }
                    }
}

/* ---- random geometry ----------------------------------------------------- */

static void rand_geom(cc_geom *g)
{
    for (;;) {
        int nsp = (int)ri(1, 3);
        int kind = (int)ri(0, 9); /* 0-4: specialised 2-D shapes, 5: long 1-D,
                                     6: 2-D, 8-40 channels, multiplier 1 (the
                                     forward runs small planes channels-last),
                                     7: 2-D 3x3 stride 1 dilation 2 or 4 (the
                                     dilated plane kernels) */
        const int64_t dd7 = ri(0, 1) ? 2 : 4;
        g->batch = ri(1, 3);
        g->c_in = kind == 6 ? ri(8, 40) : ri(1, 4);
        g->groups = g->c_in;
        g->c_out = kind == 6 ? g->c_in : g->c_in * ri(1, 3);
        if (kind == 6)
            nsp = 2;
        for (int i = 0; i < 3; i++) {
            g->in[i] = g->out[i] = g->k[i] = g->stride[i] = g->dil[i] = 1;
            g->pad[i] = 0;
        }
        if (kind <= 4 || kind == 7)
            nsp = 2;
        int ok = 1;
        for (int i = 3 - nsp; i < 3; i++) {
            int64_t k = ri(1, nsp == 3 ? 3 : 5), s = ri(1, 3), d = ri(1, 2), p = ri(0, 3);
            int64_t in = ri(1, nsp == 3 ? 9 : 24);
            if (kind <= 4) { /* 3x3/5x5/7x7, stride 1/2, dilation 1 */
                k = ri(0, 2) ? (kind % 2 ? 5 : 3) : 7;
                s = kind < 2 ? 1 : (kind < 4 ? 2 : s);
                d = 1;
                if (ri(0, 3) == 0)
                    in = ri(20, 70);
            }
            if (kind == 7) {
                k = 3, s = 1, d = dd7, p = ri(0, 2 * dd7 + 1);
                in = ri(1, 40);
            }
            if (kind == 5 && nsp == 1) {
                k = ri(1, 2) == 1 ? 31 : ri(6, 40);
                p = ri(0, k);
                in = ri(1, 300);
            }
            int64_t pa = p + ri(-1, 1); /* padding after, may differ by one */
            if (pa < 0)
                pa = 0;
            int64_t span = in + p + pa - d * (k - 1) - 1;
            if (span < 0) {
                ok = 0;
                break;
            }
            g->k[i] = k, g->stride[i] = s, g->dil[i] = d, g->pad[i] = p, g->in[i] = in;
            g->out[i] = span / s + 1;
        }
        if (kind <= 4) {
            g->k[1] = g->k[2]; /* square kernels, same stride both ways */
            g->stride[1] = g->stride[2];
            g->dil[1] = g->dil[2] = 1;
            int64_t span = g->in[1] + 2 * g->pad[1] - (g->k[1] - 1) - 1;
            if (span < 0)
                ok = 0;
            else
                g->out[1] = span / g->stride[1] + 1;
        }
        if (ok)
            return;
    }
}

/* ---- running ------------------------------------------------------------- */

#define TYPED(T, SFX)                                                          \
    static void to_##SFX(const double *a, T *b, int64_t n)                     \
    {                                                                          \
        for (int64_t i = 0; i < n; i++)                                        \
            b[i] = (T)a[i];                                                    \
    }                                                                          \
    static double relerr_##SFX(const T *a, const double *ref, int64_t n)       \
    {                                                                          \
        double m = 0, e = 0;                                                   \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (fabs(ref[i]) > m)                                              \
                m = fabs(ref[i]);                                              \
            double d = fabs((double)a[i] - ref[i]);                            \
            if (!(d <= e))                                                     \
                e = d; /* NaN counts */                                        \
        }                                                                      \
        return m > 0 ? e / m : e;                                              \
    }

TYPED(float, f32)
TYPED(double, f64)

static int failures = 0, checks = 0;

static void report(const char *what, const char *isa, const char *dt, const cc_geom *g,
                   double err, double tol, int nth)
{
    checks++;
    if (err <= tol)
        return;
    failures++;
    fprintf(stderr,
            "FAIL %s %s %s err=%.3g tol=%.1g threads=%d: N=%lld C=%lld CO=%lld in=(%lld,%lld,%lld) "
            "out=(%lld,%lld,%lld) k=(%lld,%lld,%lld) s=(%lld,%lld,%lld) p=(%lld,%lld,%lld) "
            "d=(%lld,%lld,%lld)\n",
            what, isa, dt, err, tol, nth, (long long)g->batch, (long long)g->c_in,
            (long long)g->c_out, (long long)g->in[0], (long long)g->in[1], (long long)g->in[2],
            (long long)g->out[0], (long long)g->out[1], (long long)g->out[2],
            (long long)g->k[0], (long long)g->k[1], (long long)g->k[2],
            (long long)g->stride[0], (long long)g->stride[1], (long long)g->stride[2],
            (long long)g->pad[0], (long long)g->pad[1], (long long)g->pad[2],
            (long long)g->dil[0], (long long)g->dil[1], (long long)g->dil[2]);
}

#define RUN_TYPE(T, SFX, TOL)                                                              \
    do {                                                                                   \
        T *x = malloc(sizeof(T) * (size_t)(nx + 1)), *w = malloc(sizeof(T) * (size_t)nw);  \
        T *b = malloc(sizeof(T) * (size_t)g.c_out), *bi = malloc(sizeof(T) * (size_t)g.c_in); \
        T *gy = malloc(sizeof(T) * (size_t)(ny + 1)), *y = malloc(sizeof(T) * (size_t)(ny + 1)); \
        T *dx = malloc(sizeof(T) * (size_t)(nx + 1)), *gw = malloc(sizeof(T) * (size_t)nw);   \
        T *gw2 = malloc(sizeof(T) * (size_t)nw);                                           \
        T *ys = malloc(sizeof(T) * (size_t)(ny + 1)), *dxs = malloc(sizeof(T) * (size_t)(nx + 1)); \
        T *gws = malloc(sizeof(T) * (size_t)nw);                                           \
        to_##SFX(dxd, x, nx), to_##SFX(wd, w, nw), to_##SFX(bd, b, g.c_out);              \
        to_##SFX(bid, bi, g.c_in), to_##SFX(gyd, gy, ny);                                  \
        /* the kernels see the rounded inputs: rebuild the references from them */         \
        for (int64_t i = 0; i < nx; i++) dxd2[i] = (double)x[i];                           \
        for (int64_t i = 0; i < nw; i++) wd2[i] = (double)w[i];                            \
        for (int64_t i = 0; i < g.c_out; i++) bd2[i] = (double)b[i];                       \
        for (int64_t i = 0; i < g.c_in; i++) bid2[i] = (double)bi[i];                      \
        for (int64_t i = 0; i < ny; i++) gyd2[i] = (double)gy[i];                          \
        ref_fwd(&g, dxd2, wd2, use_bias ? bd2 : NULL, yref);                               \
        ref_adj(&g, gyd2, wd2, use_bias ? bid2 : NULL, dxref);                             \
        ref_wgrad(&g, dxd2, gyd2, gwref);                                                  \
        for (int ii = 0; ii < CC_ISA_COUNT; ii++) {                                                   \
            if (cc_isa_set(cc_isa_name(ii)) != CC_OK)                                          \
                continue;                                                                  \
            int nth = (int)ri(1, 3);                                                       \
            y[ny] = (T)12345; /* guard element */                                          \
            int rc = 0;                                                                    \
            for (int path = 0; path < 3; path++) { /* every path that applies */           \
                if (!cc_dw_fwd_applies(path, &g, (int64_t)sizeof(T)))                      \
                    continue;                                                              \
                rc = cc_dw_fwd_##SFX(&g, path, x, w, use_bias ? b : NULL, y, nth);         \
                report("fwd-rc", cc_isa_name(ii), #SFX, &g, rc != 0 || y[ny] != (T)12345, 0, nth); \
                report("fwd", cc_isa_name(ii), #SFX, &g, relerr_##SFX(y, yref, ny), TOL, nth);    \
            }                                                                              \
            rc = cc_dw_fwd_##SFX(&g, CC_DW_PATH_ROWS, x, w, use_bias ? b : NULL, y, nth);  \
            report("fwd-rows-rc", cc_isa_name(ii), #SFX, &g, rc != 0, 0, nth);                    \
            dx[nx] = (T)12345;                                                             \
            rc = cc_dw_adj_##SFX(&g, gy, w, use_bias ? bi : NULL, dx, nth);                \
            report("adj-rc", cc_isa_name(ii), #SFX, &g, rc != 0 || dx[nx] != (T)12345, 0, nth);   \
            report("adj", cc_isa_name(ii), #SFX, &g, relerr_##SFX(dx, dxref, nx), TOL, nth);      \
            rc = cc_dw_wgrad_##SFX(&g, x, gy, gw, nth);                                    \
            report("wgrad-rc", cc_isa_name(ii), #SFX, &g, rc != 0, 0, nth);                       \
            report("wgrad", cc_isa_name(ii), #SFX, &g, relerr_##SFX(gw, gwref, nw), TOL, nth);    \
            rc = cc_dw_wgrad_##SFX(&g, x, gy, gw2, (int)ri(1, 4));                         \
            report("wgrad-determinism", cc_isa_name(ii), #SFX, &g,                                \
                   rc != 0 || memcmp(gw, gw2, sizeof(T) * (size_t)nw) != 0, 0, nth);       \
            if (ii == 0) {                                                                 \
                memcpy(ys, y, sizeof(T) * (size_t)ny);                                     \
                memcpy(dxs, dx, sizeof(T) * (size_t)nx);                                   \
                memcpy(gws, gw, sizeof(T) * (size_t)nw);                                   \
            } else {                                                                       \
                for (int64_t i = 0; i < ny; i++) yref2[i] = (double)ys[i];                 \
                report("fwd-vs-scalar", cc_isa_name(ii), #SFX, &g, relerr_##SFX(y, yref2, ny), TOL, nth); \
                for (int64_t i = 0; i < nx; i++) yref2[i] = (double)dxs[i];                \
                report("adj-vs-scalar", cc_isa_name(ii), #SFX, &g, relerr_##SFX(dx, yref2, nx), TOL, nth); \
                for (int64_t i = 0; i < nw; i++) yref2[i] = (double)gws[i];                \
                report("wgrad-vs-scalar", cc_isa_name(ii), #SFX, &g, relerr_##SFX(gw, yref2, nw), TOL, nth); \
            }                                                                              \
        }                                                                                  \
        free(x), free(w), free(b), free(bi), free(gy), free(y), free(dx), free(gw);        \
        free(gw2), free(ys), free(dxs), free(gws);                                         \
    } while (0)

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    if (argc > 2)
        rng_state = 0x9E3779B97F4A7C15ull * (uint64_t)(atoll(argv[2]) + 1);
    printf("isas:");
    for (int i = 0; i < CC_ISA_COUNT; i++)
        if (cc_isa_runs_here(i))
            printf(" %s", cc_isa_name(i));
    printf("\n");
    int64_t paths[3] = {0, 0, 0}; /* the forward paths the defaults want: plane, rows, cl */
    int64_t adjp = 0;              /* adjoints run by the stride-2 plane form */
    for (int it = 0; it < iters; it++) {
        cc_geom g;
        rand_geom(&g);
        adjp += cc_dw_adj_planes(&g);
        for (int64_t es = 4; es <= 8; es += 4) {
            const int path = cc_dw_fwd_wanted(CC_DW_PATH_CL, &g, es)      ? CC_DW_PATH_CL
                             : cc_dw_fwd_wanted(CC_DW_PATH_PLANE, &g, es) ? CC_DW_PATH_PLANE
                             : cc_dw_fwd_wanted(CC_DW_PATH_ROWS, &g, es)  ? CC_DW_PATH_ROWS
                                                                          : -1;
            if (path >= 0)
                paths[path]++;
        }
        const int64_t KK = prod3(g.k);
        const int64_t nx = g.batch * g.c_in * prod3(g.in), ny = g.batch * g.c_out * prod3(g.out);
        const int64_t nw = g.c_out * KK;
        const int use_bias = (int)ri(0, 1);
        double *dxd = malloc(sizeof(double) * (size_t)nx), *wd = malloc(sizeof(double) * (size_t)nw);
        double *bd = malloc(sizeof(double) * (size_t)g.c_out), *bid = malloc(sizeof(double) * (size_t)g.c_in);
        double *gyd = malloc(sizeof(double) * (size_t)ny);
        double *dxd2 = malloc(sizeof(double) * (size_t)nx), *wd2 = malloc(sizeof(double) * (size_t)nw);
        double *bd2 = malloc(sizeof(double) * (size_t)g.c_out), *bid2 = malloc(sizeof(double) * (size_t)g.c_in);
        double *gyd2 = malloc(sizeof(double) * (size_t)ny);
        double *yref = malloc(sizeof(double) * (size_t)ny), *dxref = malloc(sizeof(double) * (size_t)nx);
        double *gwref = malloc(sizeof(double) * (size_t)nw);
        double *yref2 = malloc(sizeof(double) * (size_t)(nx > ny ? (nx > nw ? nx : nw) : (ny > nw ? ny : nw)));
        for (int64_t i = 0; i < nx; i++) dxd[i] = ru();
        for (int64_t i = 0; i < nw; i++) wd[i] = ru();
        for (int64_t i = 0; i < g.c_out; i++) bd[i] = ru();
        for (int64_t i = 0; i < g.c_in; i++) bid[i] = ru();
        for (int64_t i = 0; i < ny; i++) gyd[i] = ru();
        RUN_TYPE(float, f32, 1e-5);
        RUN_TYPE(double, f64, 1e-12);
        free(dxd), free(wd), free(bd), free(bid), free(gyd), free(dxd2), free(wd2), free(bd2);
        free(bid2), free(gyd2), free(yref), free(dxref), free(gwref), free(yref2);
    }
    printf("forward paths: plane %lld, rows %lld, channels-last %lld\n", (long long)paths[0],
           (long long)paths[1], (long long)paths[2]);
    printf("adjoint by stride-2 planes: %lld\n", (long long)adjp);
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
