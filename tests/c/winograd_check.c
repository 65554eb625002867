/*
 * Checks the depthwise 3x3 Winograd kernels (src/winograd) against a naive
 * float64 direct convolution written here (errors relative to the largest
 * sum of |terms| of an output, at most 1e-5), for every instruction set this
 * CPU and build can run, on random geometries: sizes 1..45 (odd, even,
 * tiny), padding 0..2 before and after each dim (independently), batch 1-3,
 * channels 1-6, with and without bias, 1 and 3 threads; plus every SIMD set
 * against the scalar one, an exhaustive sweep of small sizes and paddings,
 * canaries around the output (no write outside it), the non-finite flag
 * (0 on finite data; 1 for one NaN or infinity anywhere in the input or
 * the filter) and the geometry checks.
 *
 *   winograd_check [iterations] [seed]     exit status 0 when all pass
 *
 * Built by meson (tests/c/meson.build), run by tests/test_winograd.py
 * (natively; the AVX-512 kernels on SIMDe's emulation; cross-compiled for
 * aarch64 and run under qemu).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/isa.h"
#include "winograd/wdw.h"

#define CHECK_RNG_SEED 88172645463325252ull
#include "check_rng.h"
static float ru(void) { return (float)rud(); }

static const char *isas[CC_ISA_COUNT];
static int nisa;

#define GUARD 64
#define CANARY 12345.0f

/* y = the direct convolution; returns the largest sum of |terms| (|bias|
 * included) over the outputs: the scale errors are measured against (the
 * output itself may cancel to near zero). */
static double ref(const cc_geom *g, const float *x, const float *w, const float *b, double *y)
{
    double scale = 1e-30;
    const int64_t C = g->c_in, IH = g->in[1], IW = g->in[2], OH = g->out[1], OW = g->out[2];
    for (int64_t nc = 0; nc < g->batch * C; nc++) {
        const int64_t c = nc % C;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double s = b ? b[c] : 0.0, sa = fabs(s);
                for (int kh = 0; kh < 3; kh++)
                    for (int kw = 0; kw < 3; kw++) {
                        const int64_t ih = oh - g->pad[1] + kh, iw = ow - g->pad[2] + kw;
                        if (ih < 0 || ih >= IH || iw < 0 || iw >= IW)
                            continue;
                        const double t = (double)w[c * 9 + kh * 3 + kw] * x[(nc * IH + ih) * IW + iw];
                        s += t;
                        sa += fabs(t);
                    }
                y[(nc * OH + oh) * OW + ow] = s;
                scale = fmax(scale, sa);
            }
    }
    return scale;
}

static void geom2(cc_geom *g, int64_t n, int64_t c, int64_t ih, int64_t iw, int64_t pt,
                  int64_t pb, int64_t pl, int64_t pr)
{
    memset(g, 0, sizeof(*g));
    g->batch = n, g->groups = c, g->c_in = c, g->c_out = c;
    g->in[0] = 1, g->in[1] = ih, g->in[2] = iw;
    g->out[0] = 1, g->out[1] = ih + pt + pb - 2, g->out[2] = iw + pl + pr - 2;
    for (int d = 0; d < 3; d++) {
        g->k[d] = d ? 3 : 1;
        g->stride[d] = 1;
        g->dil[d] = 1;
    }
    g->pad[1] = pt, g->pad[2] = pl;
}

static int failures, checks;

/* The larger of two errors, NaN when either is (fmax drops a NaN, and a
 * NaN output must fail). */
static double worse(double e, double f) { return e != e ? e : (f > e || f != f) ? f : e; }


/* Run one geometry on every ISA and thread count; compare with the
 * reference and with the scalar result. */
static void check(const cc_geom *g, int with_bias, const char *what)
{
    const int64_t xs = g->batch * g->c_in * g->in[1] * g->in[2];
    const int64_t ys = g->batch * g->c_in * g->out[1] * g->out[2];
    float *x = malloc(sizeof(float) * (size_t)(xs + 1));
    float *w = malloc(sizeof(float) * (size_t)(9 * g->c_in));
    float *b = malloc(sizeof(float) * (size_t)g->c_in);
    double *yr = malloc(sizeof(double) * (size_t)(ys + 1));
    float *ys0 = malloc(sizeof(float) * (size_t)(ys + 1));
    float *yb = malloc(sizeof(float) * (size_t)(ys + 2 * GUARD));
    for (int64_t i = 0; i < xs; i++)
        x[i] = ru();
    for (int64_t i = 0; i < 9 * g->c_in; i++)
        w[i] = ru();
    for (int64_t i = 0; i < g->c_in; i++)
        b[i] = ru();
    const float *bp = with_bias ? b : NULL;
    const double ymax = ref(g, x, w, bp, yr);
    for (int a = 0; a < nisa; a++) {
        cc_isa_set(isas[a]);
        for (int nt = 1; nt <= 3; nt += 2) {
            float *y = yb + GUARD;
            for (int64_t i = 0; i < ys + 2 * GUARD; i++)
                yb[i] = CANARY;
            int bad = -1;
            int rc = cc_wdw_fwd_f32(g, x, w, bp, y, nt, &bad);
            checks++;
            double err = 0, errs = 0;
            for (int64_t i = 0; i < ys; i++) {
                err = worse(err, fabs(y[i] - yr[i]));
                if (a > 0)
                    errs = worse(errs, fabs((double)y[i] - ys0[i]));
            }
            int canary = 1;
            for (int64_t i = 0; i < GUARD; i++)
                canary = canary && yb[i] == CANARY && yb[GUARD + ys + i] == CANARY;
            if (rc != CC_OK || bad != 0 || !(err / ymax <= 1e-5) || !(errs / ymax <= 1e-5) ||
                !canary) {
                failures++;
                if (failures <= 20)
                    printf("FAIL %s isa=%s nt=%d n=%lld c=%lld in=%lldx%lld out=%lldx%lld "
                           "pad=%lld,%lld bias=%d rc=%d nonfinite=%d rel=%.3g vs_scalar=%.3g "
                           "canary=%d\n",
                           what, isas[a], nt, (long long)g->batch, (long long)g->c_in,
                           (long long)g->in[1], (long long)g->in[2], (long long)g->out[1],
                           (long long)g->out[2], (long long)g->pad[1], (long long)g->pad[2],
                           with_bias, rc, bad, err / ymax, errs / ymax, canary);
            }
            if (a == 0 && nt == 1)
                memcpy(ys0, y, sizeof(float) * (size_t)ys);
        }
    }
    /* one NaN or infinity in the input or the filter: every kernel flags
     * it (every input value is read by some output here) */
    for (int a = 0; a < nisa; a++) {
        cc_isa_set(isas[a]);
        const int inw = rud() < -0.5; /* rud: uniform on [-1, 1) */
        float *arr = inw ? w : x;
        const int64_t n = inw ? 9 * g->c_in : xs;
        const int64_t at = (int64_t)((rud() + 1.0) * 0.5 * (double)n) % n;
        const float keep = arr[at];
        const double r = rud();
        arr[at] = r < -1. / 3 ? INFINITY : r < 1. / 3 ? -INFINITY : NAN;
        int bad = -1;
        const int rc = cc_wdw_fwd_f32(g, x, w, bp, yb + GUARD, 1 + 2 * (a & 1), &bad);
        arr[at] = keep;
        checks++;
        if (rc != CC_OK || bad != 1) {
            failures++;
            if (failures <= 20)
                printf("FAIL %s isa=%s n=%lld c=%lld in=%lldx%lld pad=%lld,%lld: a non-finite "
                       "%s value at %lld not flagged (rc=%d nonfinite=%d)\n",
                       what, isas[a], (long long)g->batch, (long long)g->c_in,
                       (long long)g->in[1], (long long)g->in[2], (long long)g->pad[1],
                       (long long)g->pad[2], inw ? "weight" : "input", (long long)at, rc, bad);
        }
    }
    free(x), free(w), free(b), free(yr), free(ys0), free(yb);
}

static void check_geom_rules(void)
{
    cc_geom g;
    geom2(&g, 1, 4, 8, 8, 1, 1, 1, 1);
    int ok = cc_wdw_geom_ok(&g);
    cc_geom h = g;
    h.c_out = 8; /* multiplier 2 */
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.groups = 1;
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.k[2] = 5, h.out[2] = 6;
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.stride[1] = 2, h.out[1] = 4;
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.dil[2] = 2, h.out[2] = 6;
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.pad[1] = 3, h.out[1] = 12;
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.out[2] = 11; /* padding after 3 */
    ok = ok && !cc_wdw_geom_ok(&h);
    h = g, h.in[0] = 2;
    ok = ok && !cc_wdw_geom_ok(&h);
    float dummy = 0;
    ok = ok && cc_wdw_fwd_f32(&h, &dummy, &dummy, NULL, &dummy, 1, NULL) == CC_ERR_ARG;
    h = g, h.batch = 0;
    int bad = -1;
    ok = ok && cc_wdw_fwd_f32(&h, NULL, NULL, NULL, NULL, 1, &bad) == CC_OK && bad == 0;
    /* filter transform of a delta at the centre */
    float g9[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0}, u[16];
    cc_wdw_filter_f32(g9, u);
    const float want[16] = {0, 0, 0, 0, 0, .25f, -.25f, 0, 0, -.25f, .25f, 0, 0, 0, 0, 0};
    for (int i = 0; i < 16; i++)
        ok = ok && u[i] == want[i];
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL geometry rules / filter transform\n");
    }
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 300;
    rng_state += argc > 2 ? (uint64_t)atoll(argv[2]) * 0x9E3779B97F4A7C15ull : 0;
    if (cc_isa_init() != CC_OK)
        printf("note: CCONV_SIMD not usable here\n");
    for (int i = 0; i < CC_ISA_COUNT; i++)
        if (cc_isa_runs_here(i))
            isas[nisa++] = cc_isa_name(i);
    printf("isas:");
    for (int i = 0; i < nisa; i++)
        printf(" %s", isas[i]);
    printf("\n");
    check_geom_rules();
    /* exhaustive: every small size and padding combination */
    for (int64_t ih = 1; ih <= 7; ih++)
        for (int64_t iw = 1; iw <= 37; iw++)
            for (int p = 0; p < 16; p++) {
                const int64_t pt = p & 1, pb = (p >> 1) & 1, pl = (p >> 2) & 1, pr = p >> 3;
                if (ih + pt + pb < 3 || iw + pl + pr < 3)
                    continue;
                cc_geom g;
                geom2(&g, 1, 1 + (iw % 2), ih, iw, pt, pb, pl, pr);
                check(&g, (int)((ih + iw + p) % 2), "sweep");
            }
    for (int it = 0; it < iters; it++) {
        cc_geom g;
        int64_t ih, iw, pt, pb, pl, pr;
        do {
            ih = ri(1, 45), iw = ri(1, 45);
            pt = ri(0, 2), pb = ri(0, 2), pl = ri(0, 2), pr = ri(0, 2);
        } while (ih + pt + pb < 3 || iw + pl + pr < 3);
        geom2(&g, ri(1, 3), ri(1, 6), ih, iw, pt, pb, pl, pr);
        check(&g, (int)ri(0, 1), "random");
    }
    /* a wide row (several vectors, partial last one) and a tall plane */
    cc_geom g;
    geom2(&g, 1, 2, 5, 203, 1, 1, 1, 1);
    check(&g, 1, "wide");
    geom2(&g, 1, 1, 150, 9, 1, 0, 0, 1);
    check(&g, 1, "tall");
    geom2(&g, 2, 3, 64, 64, 1, 1, 1, 1);
    check(&g, 1, "64x64");
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
