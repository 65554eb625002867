/*
 * Checks the implicit-GEMM micro-kernels (src/igemm) of every instruction
 * set this build has against a naive double-precision product written here
 * and against the scalar kernel: random depths kc (including 1 and odd
 * values), ldc wider than the tile, first/accumulate, with and without a
 * bias, float32 and float64; the packing of runs; the weight-gradient
 * kernel (rows narrower and wider than a vector, every tail length); the
 * Winograd F(2x2, 3x3) input and output transforms (runs of 1-40 tiles,
 * every tail length) against the matrix products B^T d B and A^T M A
 * formed here, and the split of an input row into its windows' column
 * phases (dilation 1 and 2, with its NaN/infinity flag); the row copy of the band and the direct
 * mode's output, and its split into 2 and 4 column phases (rows2, rows4); the transposing pack of an A panel (every kc % V, partial
 * panels); the
 * kernels reading the band in place (ukri) and those of a partial last
 * micro-tile (ukrn, ukrin: the first nv vectors of columns); the half-row
 * kernel of layers with few channels a group (ukrih); the dot-product
 * kernel of a last micro-panel of a few columns (ukrt); the small-plane
 * col2im's pair and row adds (c2ip, radd).
 *
 *   ig_check [iterations] [seed]     exit status 0 when all pass
 *
 * Built by meson (tests/c/meson.build; tests/test_igemm.py runs it natively,
 * with AVX-512 on SIMDe and for aarch64 under qemu).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "igemm/igemm.h"
#include "core/isa.h"

#define CHECK_RNG_SEED 0x9E3779B97F4A7C15ull
#include "check_rng.h"
static double ru(void) { return rud(); }

typedef struct {
    const char *name;
    int mr, nr;
    ig_ukr_f32 f32;
    ig_ukr_f64 f64;
    ig_pack_f32 p32;
    ig_pack_f64 p64;
    int mrw, nrw, lanes;
    ig_ukrw_f32 w32;
    ig_ukrw_f64 w64;
    ig_wtin_f32 ti32;
    ig_wtin_f64 ti64;
    ig_wtout_f32 to32;
    ig_wtout_f64 to64;
    ig_rows_f32 rw32;
    ig_rows_f64 rw64;
    ig_rows2_f32 r2_32;
    ig_rows2_f64 r2_64;
    ig_rows4_f32 r4_32;
    ig_rows4_f64 r4_64;
    ig_ukri_f32 i32;
    ig_ukri_f64 i64;
    ig_ukrn_f32 n32;
    ig_ukrn_f64 n64;
    ig_ukrin_f32 in32;
    ig_ukrin_f64 in64;
    ig_wsplit_f32 ws32;
    ig_wsplit_f64 ws64;
    ig_packa_f32 pa32;
    ig_packa_f64 pa64;
    ig_wtinr_f32 tr32;
    ig_wtinr_f64 tr64;
    ig_w1tin_f32 w1i32;
    ig_w1tin_f64 w1i64;
    ig_w1tout_f32 w1o32;
    ig_w1tout_f64 w1o64;
    ig_wtinr2_f32 t2r32;
    ig_wtinr2_f64 t2r64;
    ig_wtout2_f32 t2o32;
    ig_wtout2_f64 t2o64;
    ig_ukrih_f32 ih32;
    ig_ukrih_f64 ih64;
    ig_ukrip_f32 ip32;
    ig_ukrip_f64 ip64;
    ig_ukra_f32 a32;
    ig_ukra_f64 a64;
    ig_ukrt_f32 t32;
    ig_ukrt_f64 t64;
    ig_c2ip_f32 cp32;
    ig_c2ip_f64 cp64;
    ig_radd_f32 ra32;
    ig_radd_f64 ra64;
} isa_t;

/* One entry per instruction set this build and CPU run and element type,
 * from the kernel tables (igemm.h), in cc_isa order. */
static isa_t isas[2 * CC_ISA_COUNT];
static int n_isas;

static void collect_isas(void)
{
    for (int i = 0; i < CC_ISA_COUNT; i++) {
        /* AVX-512 on SIMDe runs on AVX2 CPUs */
        if (!cc_isa_runs_here(i) || cc_isa_set(cc_isa_name(i)) != CC_OK)
            continue;
        const ig_kern_f32 *k = cc_ig_kern_f32();
        const ig_kern_f64 *d = cc_ig_kern_f64();
        isas[n_isas++] = (isa_t){.name = cc_isa_name(i), .mr = k->mr, .nr = k->nr, .f32 = k->ukr,
                                 .p32 = k->packr, .mrw = k->mrw, .nrw = k->nrw, .lanes = k->lanes,
                                 .w32 = k->ukrw, .ti32 = k->wtin, .to32 = k->wtout, .rw32 = k->rows,
                                 .i32 = k->ukri, .n32 = k->ukrn, .in32 = k->ukrin,
                                 .ws32 = k->wsplit, .pa32 = k->packa, .tr32 = k->wtinr,
                                 .w1i32 = k->w1tin, .w1o32 = k->w1tout, .t2r32 = k->wtinr2,
                                 .t2o32 = k->wtout2, .ih32 = k->ukrih, .ip32 = k->ukrip, .a32 = k->ukra,
                                 .r2_32 = k->rows2, .r4_32 = k->rows4, .t32 = k->ukrt,
                                 .cp32 = k->c2ip, .ra32 = k->radd};
        isas[n_isas++] = (isa_t){.name = cc_isa_name(i), .mr = d->mr, .nr = d->nr, .f64 = d->ukr,
                                 .p64 = d->packr, .mrw = d->mrw, .nrw = d->nrw, .lanes = d->lanes,
                                 .w64 = d->ukrw, .ti64 = d->wtin, .to64 = d->wtout, .rw64 = d->rows,
                                 .i64 = d->ukri, .n64 = d->ukrn, .in64 = d->ukrin,
                                 .ws64 = d->wsplit, .pa64 = d->packa, .tr64 = d->wtinr,
                                 .w1i64 = d->w1tin, .w1o64 = d->w1tout, .t2r64 = d->wtinr2,
                                 .t2o64 = d->wtout2, .ih64 = d->ukrih, .ip64 = d->ukrip, .a64 = d->ukra,
                                 .r2_64 = d->rows2, .r4_64 = d->rows4, .t64 = d->ukrt,
                                 .cp64 = d->c2ip, .ra64 = d->radd};
    }
}

static int check(const isa_t *isa, int f64, int64_t kc, int64_t ldc, int first, int with_bias)
{
    const int mr = isa->mr, nr = isa->nr;
    double *a = malloc(sizeof(double) * (size_t)(kc * mr)), *b = malloc(sizeof(double) * (size_t)(kc * nr));
    double *c0 = malloc(sizeof(double) * (size_t)(mr * ldc)), *bias = malloc(sizeof(double) * (size_t)mr);
    double *ref = malloc(sizeof(double) * (size_t)(mr * ldc));
    void *ct = malloc(8 * (size_t)(mr * ldc)), *at = malloc(8 * (size_t)(kc * mr)), *bt = malloc(8 * (size_t)(kc * nr));
    void *biast = malloc(8 * (size_t)mr);
    if (!a || !b || !c0 || !bias || !ref || !ct || !at || !bt || !biast) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (int64_t i = 0; i < kc * mr; i++) a[i] = ru();
    for (int64_t i = 0; i < kc * nr; i++) b[i] = ru();
    for (int64_t i = 0; i < mr * ldc; i++) c0[i] = ru();
    for (int i = 0; i < mr; i++) bias[i] = ru();
    /* round the inputs to the kernel's precision so both sides see the same numbers */
    for (int64_t i = 0; i < kc * mr; i++) { if (f64) ((double *)at)[i] = a[i]; else { ((float *)at)[i] = (float)a[i]; a[i] = ((float *)at)[i]; } }
    for (int64_t i = 0; i < kc * nr; i++) { if (f64) ((double *)bt)[i] = b[i]; else { ((float *)bt)[i] = (float)b[i]; b[i] = ((float *)bt)[i]; } }
    for (int64_t i = 0; i < mr * ldc; i++) { if (f64) ((double *)ct)[i] = c0[i]; else { ((float *)ct)[i] = (float)c0[i]; c0[i] = ((float *)ct)[i]; } }
    for (int i = 0; i < mr; i++) { if (f64) ((double *)biast)[i] = bias[i]; else { ((float *)biast)[i] = (float)bias[i]; bias[i] = ((float *)biast)[i]; } }
    double scale = 0;
    for (int i = 0; i < mr; i++)
        for (int64_t j = 0; j < ldc; j++) {
            double v = c0[i * ldc + j];
            if (j < nr) {
                double s = 0;
                for (int64_t k = 0; k < kc; k++) s += a[k * mr + i] * b[k * nr + j];
                v = first ? s + (with_bias ? bias[i] : 0.0) : v + s;
            }
            ref[i * ldc + j] = v;
            if (fabs(v) > scale) scale = fabs(v);
        }
    if (f64)
        isa->f64(kc, at, bt, ct, ldc, first, with_bias ? biast : NULL);
    else
        isa->f32(kc, at, bt, ct, ldc, first, with_bias ? biast : NULL);
    double worst = 0;
    for (int64_t i = 0; i < mr * ldc; i++) {
        double got = f64 ? ((double *)ct)[i] : ((float *)ct)[i];
        double e = fabs(got - ref[i]);
        if (i % ldc >= nr && got != ref[i]) e = INFINITY; /* outside the tile: untouched */
        if (e > worst) worst = e;
    }
    const double tol = (f64 ? 1e-14 : 2e-6) * (double)(kc + 1) * (scale + 1);
    int bad = !(worst <= tol);
    if (bad)
        printf("FAIL %s %s kc=%lld ldc=%lld first=%d bias=%d err=%g tol=%g\n", isa->name,
               f64 ? "f64" : "f32", (long long)kc, (long long)ldc, first, with_bias, worst, tol);
    free(a); free(b); free(c0); free(bias); free(ref); free(ct); free(at); free(bt); free(biast);
    return bad;
}

/* 1 when an MR x ldc tile c (float64 or float32) is off the reference:
 * its largest error against ref in the first nrows rows and ncol columns
 * (*worst; infinite where an element outside them changed) past the
 * tolerance of a depth-kc product of that scale (*tol). */
static int tile_bad(int f64, const void *c, const double *ref, int64_t n, int64_t ldc,
                    int64_t ncol, int64_t nrows, int64_t kc, double scale, double *worst,
                    double *tol)
{
    *worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double got = f64 ? ((const double *)c)[i] : (double)((const float *)c)[i];
        double e = fabs(got - ref[i]);
        if ((i % ldc >= ncol || i / ldc >= nrows) && got != ref[i])
            e = INFINITY; /* past the columns or rows: untouched */
        if (e > *worst) *worst = e;
    }
    *tol = (f64 ? 1e-14 : 2e-6) * (double)(kc + 1) * (scale + 1);
    return !(*worst <= *tol);
}

/* ukrn / ukrin (the first nv vectors of columns) and ukri (all of them, b
 * read in place): against a naive product over those columns, b rows at
 * random offsets of a band (ukri, ukrin) or NR apart (ukrn); c's columns
 * past nv * lanes must be untouched.  ind == 2: ukrih, the first hrows
 * (1, 2 or 4, at most MR / 2) rows over up to 2 * NR columns (nv up to
 * twice as many vectors), the other rows of c untouched.  ind == 3: ukrip
 * (ukri prefetching random rows of the band as it goes).  ind == 4: ukra
 * (ukrn with the A panel's rows where they lie, kc values each, rows a
 * random pitch apart). */
static int check_n(const isa_t *isa, int f64, int64_t kc, int ind, int nv, int first, int with_bias,
                   int hrows)
{
    const int mr = isa->mr, nr = isa->nr, half = ind == 2, pfk = ind == 3, ain = ind == 4;
    if (pfk) /* all the vectors */
        nv = nr / isa->lanes;
    const int nvmax = (half ? 2 : 1) * nr / isa->lanes, nrows = half ? hrows : mr;
    const int ncol = nv >= nvmax ? (half ? 2 : 1) * nr : nv * isa->lanes;
    const int64_t ldc = 2 * nr + ri(0, 20), nband = kc * 2 * nr + 64;
    const size_t es = f64 ? 8 : 4;
    double *a = malloc(sizeof(double) * (size_t)(kc * mr)), *band = malloc(sizeof(double) * (size_t)nband);
    double *ref = malloc(sizeof(double) * (size_t)(mr * ldc)), *bias = malloc(sizeof(double) * (size_t)mr);
    int64_t *boff = malloc(sizeof(int64_t) * (size_t)kc);
    char *at = malloc(es * (size_t)(kc * mr)), *bt = malloc(es * (size_t)nband);
    char *ct = malloc(es * (size_t)(mr * ldc)), *biast = malloc(es * (size_t)mr);
    if (!a || !band || !ref || !bias || !boff || !at || !bt || !ct || !biast) { fprintf(stderr, "out of memory\n"); exit(2); }
#define PUT(buf, i, v) do { if (f64) ((double *)(buf))[i] = (v); else ((float *)(buf))[i] = (float)(v); } while (0)
#define GET(buf, i) (f64 ? ((double *)(buf))[i] : (double)((float *)(buf))[i])
    for (int64_t i = 0; i < kc * mr; i++) { PUT(at, i, ru()); a[i] = GET(at, i); }
    for (int64_t i = 0; i < nband; i++) { PUT(bt, i, ru()); band[i] = GET(bt, i); }
    for (int i = 0; i < mr; i++) { PUT(biast, i, ru()); bias[i] = GET(biast, i); }
    for (int64_t k = 0; k < kc; k++) boff[k] = ind && !ain ? ri(0, nband - ncol) : k * nr;
    /* ukra's A: row i at arow + i * apitch, its kc values in order */
    const int64_t apitch = kc + ri(0, 40);
    char *arow = malloc(es * (size_t)(mr * apitch));
    const void *ar[16];
    if (!arow) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (int64_t i = 0; i < mr * ldc; i++) { PUT(ct, i, ru()); ref[i] = GET(ct, i); }
    for (int i = 0; i < mr; i++) {
        for (int64_t k = 0; k < kc; k++) PUT(arow, i * apitch + k, a[k * mr + i]);
        ar[i] = f64 ? (const void *)((double *)arow + i * apitch) : (const void *)((float *)arow + i * apitch);
    }
    /* ukrip's prefetches: npf rows of NR elements pfs apart, inside the band */
    const int64_t pfs = ri(1, nr), room = (nband - nr) / pfs;
    const int64_t npf = ri(0, kc + 3 < room ? kc + 3 : room);
    const int64_t pf0 = ri(0, nband - nr - npf * pfs);
    double scale = 1;
    for (int i = 0; i < nrows; i++)
        for (int j = 0; j < ncol; j++) {
            double sum = 0;
            for (int64_t k = 0; k < kc; k++) sum += a[k * mr + i] * band[boff[k] + j];
            double *v = &ref[i * ldc + j];
            *v = first ? sum + (with_bias ? bias[i] : 0.0) : *v + sum;
            if (fabs(*v) > scale) scale = fabs(*v);
        }
    const void *bi = with_bias ? biast : NULL;
    if (f64) {
        if (ain) isa->a64(nv, kc, (const double *const *)ar, (double *)bt, (double *)ct, ldc, first, bi);
        else if (half) isa->ih64(hrows, nv, kc, (double *)at, (double *)bt, boff, (double *)ct, ldc, first, bi);
        else if (!ind) isa->n64(nv, kc, (double *)at, (double *)bt, (double *)ct, ldc, first, bi);
        else if (pfk) isa->ip64(kc, (double *)at, (double *)bt, boff, (double *)ct, ldc, first,
                                bi, (double *)bt + pf0, pfs, npf);
        else if (nv >= nvmax) isa->i64(kc, (double *)at, (double *)bt, boff, (double *)ct, ldc, first, bi);
        else isa->in64(nv, kc, (double *)at, (double *)bt, boff, (double *)ct, ldc, first, bi);
    } else {
        if (ain) isa->a32(nv, kc, (const float *const *)ar, (float *)bt, (float *)ct, ldc, first, bi);
        else if (half) isa->ih32(hrows, nv, kc, (float *)at, (float *)bt, boff, (float *)ct, ldc, first, bi);
        else if (!ind) isa->n32(nv, kc, (float *)at, (float *)bt, (float *)ct, ldc, first, bi);
        else if (pfk) isa->ip32(kc, (float *)at, (float *)bt, boff, (float *)ct, ldc, first,
                                bi, (float *)bt + pf0, pfs, npf);
        else if (nv >= nvmax) isa->i32(kc, (float *)at, (float *)bt, boff, (float *)ct, ldc, first, bi);
        else isa->in32(nv, kc, (float *)at, (float *)bt, boff, (float *)ct, ldc, first, bi);
    }
#undef PUT
#undef GET
    double worst, tol;
    const int bad = tile_bad(f64, ct, ref, mr * ldc, ldc, ncol, nrows, kc, scale, &worst, &tol);
    if (bad)
        printf("FAIL %s %s %s rows=%d nv=%d kc=%lld ldc=%lld first=%d bias=%d err=%g tol=%g\n",
               ain ? "ukra" : half ? "ukrih" : pfk ? "ukrip" : ind ? (nv >= nvmax ? "ukri" : "ukrin") : "ukrn", isa->name, f64 ? "f64" : "f32", nrows, nv,
               (long long)kc, (long long)ldc, first, with_bias, worst, tol);
    free(a); free(band); free(ref); free(bias); free(boff); free(at); free(bt); free(ct); free(biast);
    free(arow);
    return bad;
}

/* ukrt: rows i < nm of A (row i's kc values at ar[i], rows a random pitch
 * apart, the rows from nm to MR zeros as the driver's) against nq <=
 * IG_TAIL_MAX columns (column j at bt + j * kc), against a naive product;
 * c's other rows and columns untouched.  Every kc % lanes. */
static int check_t(const isa_t *isa, int f64, int64_t kc, int nq, int nm, int first,
                   int with_bias)
{
    const int mr = isa->mr;
    const int64_t ldc = nq + ri(0, 9), apitch = kc + ri(0, 40);
    const size_t es = f64 ? 8 : 4;
    double *a = malloc(sizeof(double) * (size_t)(mr * apitch)), *b = malloc(sizeof(double) * (size_t)(kc * nq));
    double *ref = malloc(sizeof(double) * (size_t)(mr * ldc)), *bias = malloc(sizeof(double) * (size_t)mr);
    char *at = malloc(es * (size_t)(mr * apitch + kc)), *bt = malloc(es * (size_t)(kc * nq));
    char *ct = malloc(es * (size_t)(mr * ldc)), *biast = malloc(es * (size_t)mr);
    if (!a || !b || !ref || !bias || !at || !bt || !ct || !biast) { fprintf(stderr, "out of memory\n"); exit(2); }
#define PUT(buf, i, v) do { if (f64) ((double *)(buf))[i] = (v); else ((float *)(buf))[i] = (float)(v); } while (0)
#define GET(buf, i) (f64 ? ((double *)(buf))[i] : (double)((float *)(buf))[i])
    for (int64_t i = 0; i < mr * apitch; i++) { PUT(at, i, ru()); a[i] = GET(at, i); }
    for (int64_t k = 0; k < kc; k++) PUT(at, mr * apitch + k, 0.0); /* the zero row */
    for (int64_t i = 0; i < kc * nq; i++) { PUT(bt, i, ru()); b[i] = GET(bt, i); }
    for (int i = 0; i < mr; i++) { PUT(biast, i, ru()); bias[i] = GET(biast, i); }
    for (int64_t i = 0; i < mr * ldc; i++) { PUT(ct, i, ru()); ref[i] = GET(ct, i); }
    const void *ar[16];
    for (int i = 0; i < mr; i++) {
        const int64_t o = (i < nm ? i * apitch : mr * apitch);
        ar[i] = f64 ? (const void *)((double *)at + o) : (const void *)((float *)at + o);
    }
    double scale = 1;
    for (int i = 0; i < nm; i++)
        for (int j = 0; j < nq; j++) {
            double sum = 0;
            for (int64_t k = 0; k < kc; k++) sum += a[i * apitch + k] * b[j * kc + k];
            double *v = &ref[i * ldc + j];
            *v = first ? sum + (with_bias ? bias[i] : 0.0) : *v + sum;
            if (fabs(*v) > scale) scale = fabs(*v);
        }
    const void *bi = with_bias ? biast : NULL;
    if (f64) isa->t64(nq, nm, kc, (const double *const *)ar, (double *)bt, (double *)ct, ldc, first, bi);
    else isa->t32(nq, nm, kc, (const float *const *)ar, (float *)bt, (float *)ct, ldc, first, bi);
#undef PUT
#undef GET
    double worst, tol;
    const int bad = tile_bad(f64, ct, ref, mr * ldc, ldc, nq, nm, kc, scale, &worst, &tol);
    if (bad)
        printf("FAIL ukrt %s %s nq=%d nm=%d kc=%lld ldc=%lld first=%d bias=%d err=%g tol=%g\n",
               isa->name, f64 ? "f64" : "f32", nq, nm, (long long)kc, (long long)ldc, first,
               with_bias, worst, tol);
    free(a); free(b); free(ref); free(bias); free(at); free(bt); free(ct); free(biast);
    return bad;
}

/* packr: a panel of nq <= NR positions in random runs (lengths 1 to NR,
 * random band offsets), every row copied exactly and zeros past nq, against
 * a naive loop; dst has V - 1 elements of slack (the vector versions' last
 * vector), which must be all that changes past the panel */
static int check_pack(const isa_t *isa, int f64, int64_t kc, int nq)
{
    const int nr = isa->nr, slack = isa->lanes > 1 ? isa->lanes - 1 : 0;
    const int64_t nband = 4096;
    double *band = malloc(sizeof(double) * (size_t)nband);
    float *band32 = malloc(sizeof(float) * (size_t)nband);
    int64_t *boff = malloc(sizeof(int64_t) * (size_t)kc);
    const size_t ndst = (size_t)(kc * nr + slack + 16);
    double *dst64 = malloc(sizeof(double) * ndst);
    float *dst32 = malloc(sizeof(float) * ndst);
    if (!band || !band32 || !boff || !dst64 || !dst32) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (int64_t i = 0; i < nband; i++) { band[i] = (double)i; band32[i] = (float)i; }
    for (size_t i = 0; i < ndst; i++) { dst64[i] = -1.0; dst32[i] = -1.0f; }
    for (int64_t k = 0; k < kc; k++) boff[k] = ri(0, 1000);
    int64_t roff[IG_NR_MAX];
    int rst[IG_NR_MAX + 1], nruns = 0;
    for (int j = 0; j < nq;) {
        /* short runs (output rows of 1-4) half the time */
        const int len = (int)ri(1, ri(0, 1) ? nq - j : (nq - j < 4 ? nq - j : 4));
        rst[nruns] = j;
        roff[nruns++] = ri(0, 1000);
        j += len;
    }
    rst[nruns] = nq;
    if (f64) isa->p64(kc, band, boff, nruns, roff, rst, nq, dst64);
    else isa->p32(kc, band32, boff, nruns, roff, rst, nq, dst32);
    int bad = 0;
    for (int64_t k = 0; k < kc && !bad; k++)
        for (int j = 0, r = 0; j < nr; j++) {
            while (r < nruns && j >= rst[r + 1]) r++;
            const double want = j < nq ? (double)(boff[k] + roff[r] + j) : 0.0;
            const double got = f64 ? dst64[k * nr + j] : (double)dst32[k * nr + j];
            if (got != want) {
                printf("FAIL packr %s %s kc=%lld nq=%d runs=%d k=%lld j=%d: %g != %g\n", isa->name,
                       f64 ? "f64" : "f32", (long long)kc, nq, nruns, (long long)k, j, got, want);
                bad = 1;
                break;
            }
        }
    for (size_t i = (size_t)(kc * nr + slack); i < ndst && !bad; i++)
        if ((f64 ? dst64[i] : (double)dst32[i]) != -1.0) {
            printf("FAIL packr %s %s kc=%lld nq=%d: wrote %zu elements past the panel\n", isa->name,
                   f64 ? "f64" : "f32", (long long)kc, nq, i - (size_t)(kc * nr));
            bad = 1;
        }
    free(band); free(band32); free(boff); free(dst64); free(dst32);
    return bad;
}

/* The row-copy checks' buffers: src[i] = i, every dst element -1 (untouched
 * ones stay so). */
static void index_and_marks(int f64, char *src, int64_t ns, char *dst, int64_t nd)
{
    for (int64_t i = 0; i < ns; i++) {
        if (f64) ((double *)src)[i] = (double)i;
        else ((float *)src)[i] = (float)i;
    }
    for (int64_t i = 0; i < nd; i++) {
        if (f64) ((double *)dst)[i] = -1.0;
        else ((float *)dst)[i] = -1.0f;
    }
}

/* rows: nrows rows of n elements copied (or with bv added) between pitches;
 * the source is allocated to end at its last row's last element (a read past
 * it is caught by ASan), and nothing of dst outside the rows changes */
static int check_rows(const isa_t *isa, int f64, int64_t nrows, int64_t n)
{
    const size_t es = f64 ? 8 : 4;
    const int64_t sp = n + ri(0, 9), dp = n + ri(0, 9), add = ri(0, 1);
    const int64_t ns = (nrows - 1) * sp + n, nd = nrows * dp + 8;
    char *src = malloc(es * (size_t)ns), *dst = malloc(es * (size_t)nd);
    if (!src || !dst) { fprintf(stderr, "out of memory\n"); exit(2); }
    const double bv = add ? 0.25 : 0.0;
    index_and_marks(f64, src, ns, dst, nd);
    if (f64) isa->rw64(nrows, n, (const double *)src, sp, (double *)dst, dp, (int)add, bv);
    else isa->rw32(nrows, n, (const float *)src, sp, (float *)dst, dp, (int)add, (float)bv);
    int bad = 0;
    for (int64_t i = 0; i < nd && !bad; i++) {
        const int64_t r = i / dp, j = i % dp;
        const double want = r < nrows && j < n ? (double)(r * sp + j) + bv : -1.0;
        const double got = f64 ? ((double *)dst)[i] : ((float *)dst)[i];
        if (got != want) {
            printf("FAIL rows %s %s nrows=%lld n=%lld sp=%lld dp=%lld add=%lld at %lld: %g != %g\n",
                   isa->name, f64 ? "f64" : "f32", (long long)nrows, (long long)n, (long long)sp,
                   (long long)dp, (long long)add, (long long)i, got, want);
            bad = 1;
        }
    }
    free(src); free(dst);
    return bad;
}

/* rows2 / rows4 (nph = 2 / 4): nrows rows (sp apart, the source ending at
 * the row's last element: a read past it is caught by ASan) split into
 * their nph column phases, the destinations of a row ph apart in one
 * buffer filled with -1 first: exactly each phase's elements of each row
 * written, nothing else.  rows2's rows are n elements (odd n: one more in
 * phase 0 than in phase 1), rows4's 4 n. */
static int check_split(const isa_t *isa, int f64, int64_t nrows, int64_t n, int nph)
{
    const size_t es = f64 ? 8 : 4;
    const int64_t len = nph == 2 ? n : 4 * n;             /* elements of a row */
    const int64_t gap = ri(0, 5), ph = (len + nph - 1) / nph + gap; /* phase i at dst + i * ph */
    const int64_t sp = len + ri(0, 9), dp = nph * ph + ri(0, 9);
    const int64_t ns = (nrows - 1) * sp + len, nd = nrows * dp + 8;
    char *src = malloc(es * (size_t)ns), *dst = malloc(es * (size_t)nd);
    if (!src || !dst) { fprintf(stderr, "out of memory\n"); exit(2); }
    index_and_marks(f64, src, ns, dst, nd);
    if (f64) {
        double *d = (double *)dst;
        if (nph == 2) isa->r2_64(nrows, n, (const double *)src, sp, d, d + ph, dp);
        else isa->r4_64(nrows, n, (const double *)src, sp, d, d + ph, d + 2 * ph, d + 3 * ph, dp);
    } else {
        float *d = (float *)dst;
        if (nph == 2) isa->r2_32(nrows, n, (const float *)src, sp, d, d + ph, dp);
        else isa->r4_32(nrows, n, (const float *)src, sp, d, d + ph, d + 2 * ph, d + 3 * ph, dp);
    }
    int bad = 0;
    for (int64_t i = 0; i < nd && !bad; i++) {
        const int64_t r = i / dp, j = i % dp, phase = j / ph, at = j % ph;
        double want = -1.0;
        if (r < nrows && phase < nph && at < (len - phase + nph - 1) / nph)
            want = (double)(r * sp + nph * at + phase);
        const double got = f64 ? ((double *)dst)[i] : ((float *)dst)[i];
        if (got != want) {
            printf("FAIL rows%d %s %s nrows=%lld n=%lld sp=%lld dp=%lld gap=%lld at %lld: %g != %g\n",
                   nph, isa->name, f64 ? "f64" : "f32", (long long)nrows, (long long)n,
                   (long long)sp, (long long)dp, (long long)gap, (long long)i, got, want);
            bad = 1;
        }
    }
    free(src); free(dst);
    return bad;
}

/* The small-plane col2im's row adds: c2ip (pairs: d[r dp + 2 j] += a[r sp
 * + j], d[r dp + 2 j + 1] += b[r sp + j]) or radd (d[r dp + j] += a[r sp +
 * j]), j < n, r < nrows, on integers (exact sums); the sources end at their
 * last row's last element and dst at the last written one (reads past them
 * are caught by ASan); nothing else of dst changes. */
static int check_c2i(const isa_t *isa, int f64, int64_t nrows, int64_t n, int pairs)
{
    const size_t es = f64 ? 8 : 4;
    const int64_t w = pairs ? 2 * n : n; /* elements of a destination row */
    const int64_t sp = n + ri(0, 9), dp = w + ri(0, 9);
    const int64_t ns = (nrows - 1) * sp + n, nd = (nrows - 1) * dp + w;
    char *a = malloc(es * (size_t)ns), *b = malloc(es * (size_t)ns), *dst = malloc(es * (size_t)nd);
    if (!a || !b || !dst) { fprintf(stderr, "out of memory\n"); exit(2); }
    index_and_marks(f64, a, ns, dst, nd);
    for (int64_t i = 0; i < ns; i++) {
        if (f64) ((double *)b)[i] = 1000.0 + (double)i;
        else ((float *)b)[i] = 1000.0f + (float)i;
    }
    if (f64) {
        if (pairs) isa->cp64(nrows, n, (const double *)a, (const double *)b, sp, (double *)dst, dp);
        else isa->ra64(nrows, n, (const double *)a, sp, (double *)dst, dp);
    } else {
        if (pairs) isa->cp32(nrows, n, (const float *)a, (const float *)b, sp, (float *)dst, dp);
        else isa->ra32(nrows, n, (const float *)a, sp, (float *)dst, dp);
    }
    int bad = 0;
    for (int64_t i = 0; i < nd && !bad; i++) {
        const int64_t r = i / dp, j = i % dp;
        double want = -1.0;
        if (j < w) {
            const int64_t at = r * sp + (pairs ? j / 2 : j);
            want += pairs && j % 2 ? 1000.0 + (double)at : (double)at;
        }
        const double got = f64 ? ((double *)dst)[i] : ((float *)dst)[i];
        if (got != want) {
            printf("FAIL %s %s %s nrows=%lld n=%lld sp=%lld dp=%lld at %lld: %g != %g\n",
                   pairs ? "c2ip" : "radd", isa->name, f64 ? "f64" : "f32", (long long)nrows,
                   (long long)n, (long long)sp, (long long)dp, (long long)i, got, want);
            bad = 1;
        }
    }
    free(a); free(b); free(dst);
    return bad;
}

/* packa: an MR-row panel of nm rows (rows lds apart, the source ending at
 * the last row's kc-th element: a read past it is caught by ASan), k-major,
 * rows past nm zero; nothing written past the panel */
static int check_packa(const isa_t *isa, int f64, int64_t kc, int nm)
{
    const size_t es = f64 ? 8 : 4;
    const int mr = isa->mr;
    const int64_t lds = kc + ri(0, 1) * ri(0, 20);
    const int64_t ns = (nm - 1) * lds + kc, nd = kc * mr + 8;
    char *src = malloc(es * (size_t)ns), *dst = malloc(es * (size_t)nd);
    if (!src || !dst) { fprintf(stderr, "out of memory\n"); exit(2); }
    for (int64_t i = 0; i < ns; i++) {
        if (f64) ((double *)src)[i] = (double)i + 0.5;
        else ((float *)src)[i] = (float)i + 0.5f;
    }
    for (int64_t i = 0; i < nd; i++) {
        if (f64) ((double *)dst)[i] = -1.0;
        else ((float *)dst)[i] = -1.0f;
    }
    if (f64) isa->pa64(kc, (const double *)src, lds, nm, (double *)dst);
    else isa->pa32(kc, (const float *)src, lds, nm, (float *)dst);
    int bad = 0;
    for (int64_t q = 0; q < nd && !bad; q++) {
        const int64_t k = q / mr, i = q % mr;
        const double want = q >= kc * mr ? -1.0 : i < nm ? (double)(i * lds + k) + 0.5 : 0.0;
        const double got = f64 ? ((double *)dst)[q] : ((float *)dst)[q];
        if (got != want) {
            printf("FAIL packa %s %s kc=%lld nm=%d lds=%lld at %lld: %g != %g\n", isa->name,
                   f64 ? "f64" : "f32", (long long)kc, nm, (long long)lds, (long long)q, got, want);
            bad = 1;
        }
    }
    free(src); free(dst);
    return bad;
}

/* ukrw: the lane sums of the accumulators (which started from random
 * values) against a naive sum over rows and columns.  gy and the band are
 * allocated exactly (rows of w valid columns at their pitches, the band
 * padded only as far as the taps reach), so a read past column w of a row
 * lands in the next row (gy) or in memory the naive sum never uses; gy and
 * band values past each row's w columns are NaN, so any use of them shows. */
static int check_w(const isa_t *isa, int f64, int64_t nrows, int64_t w)
{
    const int mrw = isa->mrw, nrw = isa->nrw, L = isa->lanes;
    const int64_t gpitch = w + ri(0, 5), bpitch = w + ri(0, 5);
    int64_t koff[16];
    int64_t maxoff = 0;
    for (int j = 0; j < nrw; j++) {
        koff[j] = ri(0, 40);
        if (koff[j] > maxoff) maxoff = koff[j];
    }
    const int64_t ng = (nrows - 1) * gpitch + w, nb = maxoff + (nrows - 1) * bpitch + w;
    double *g = malloc(sizeof(double) * (size_t)(mrw * ng)), *b = malloc(sizeof(double) * (size_t)nb);
    double *a0 = malloc(sizeof(double) * (size_t)(mrw * nrw * L));
    void *gt = malloc(8 * (size_t)(mrw * ng)), *bt = malloc(8 * (size_t)nb), *at = malloc(8 * (size_t)(mrw * nrw * L));
    if (!g || !b || !a0 || !gt || !bt || !at) { fprintf(stderr, "out of memory\n"); exit(2); }
    const double nan = NAN;
    for (int64_t i = 0; i < mrw * ng; i++) g[i] = (i % ng) % gpitch < w ? ru() : nan;
    for (int64_t i = 0; i < nb; i++) b[i] = ru();
    for (int64_t i = 0; i < mrw * nrw * L; i++) a0[i] = ru();
    for (int64_t i = 0; i < mrw * ng; i++) { if (f64) ((double *)gt)[i] = g[i]; else { ((float *)gt)[i] = (float)g[i]; g[i] = ((float *)gt)[i]; } }
    for (int64_t i = 0; i < nb; i++) { if (f64) ((double *)bt)[i] = b[i]; else { ((float *)bt)[i] = (float)b[i]; b[i] = ((float *)bt)[i]; } }
    for (int64_t i = 0; i < mrw * nrw * L; i++) { if (f64) ((double *)at)[i] = a0[i]; else { ((float *)at)[i] = (float)a0[i]; a0[i] = ((float *)at)[i]; } }
    const void *rows[16];
    for (int i = 0; i < mrw; i++)
        rows[i] = f64 ? (const void *)((double *)gt + i * ng) : (const void *)((float *)gt + i * ng);
    if (f64)
        isa->w64(nrows, w, (const double *const *)rows, gpitch, bt, bpitch, koff, at);
    else
        isa->w32(nrows, w, (const float *const *)rows, gpitch, bt, bpitch, koff, at);
    double worst = 0, scale = 1;
    for (int i = 0; i < mrw; i++)
        for (int j = 0; j < nrw; j++) {
            double want = 0, got = 0;
            for (int l = 0; l < L; l++) {
                want += a0[(i * nrw + j) * L + l];
                got += f64 ? ((double *)at)[(i * nrw + j) * L + l] : ((float *)at)[(i * nrw + j) * L + l];
            }
            for (int64_t r = 0; r < nrows; r++)
                for (int64_t c = 0; c < w; c++)
                    want += g[i * ng + r * gpitch + c] * b[koff[j] + r * bpitch + c];
            const double e = fabs(got - want);
            if (!(e <= worst)) worst = e; /* NaN stays */
            if (fabs(want) > scale) scale = fabs(want);
        }
    const double tol = (f64 ? 1e-14 : 2e-6) * (double)(nrows * w + L + 1) * scale;
    int bad = !(worst <= tol);
    if (bad)
        printf("FAIL ukrw %s %s rows=%lld w=%lld err=%g tol=%g\n", isa->name, f64 ? "f64" : "f32",
               (long long)nrows, (long long)w, worst, tol);
    free(g); free(b); free(a0); free(gt); free(bt); free(at);
    return bad;
}

/* The Winograd transforms of a run of nq tiles against B^T d B and
 * A^T M A formed here from the matrices (wino_conv.h), in double. */
static const double BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
static const double AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/* out[i][j] = sum_k a[i][k] b[k][j] (b[j][k] when bt) for i < m, j < n,
 * k < 4 */
static void mul4(int m, int n, const double a[][4], const double b[][4], int bt, double out[][4])
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a[i][k] * (bt ? b[j][k] : b[k][j]);
            out[i][j] = s;
        }
}

static int check_wt(const isa_t *isa, int f64, int64_t nq)
{
    const int64_t sl = nq + 1 + ri(0, 5), vs = nq + ri(0, 7), es = f64 ? 8 : 4;
    double *in = malloc(sizeof(double) * (size_t)(8 * sl)), *m = malloc(sizeof(double) * (size_t)(16 * vs));
    char *tin = malloc((size_t)(8 * sl * es)), *tv = malloc((size_t)(16 * vs * es));
    char *tm = malloc((size_t)(16 * vs * es)), *tr = malloc((size_t)(2 * (2 * nq + 1) * es));
    const double bv = ru();
    for (int64_t i = 0; i < 8 * sl; i++) in[i] = ru();
    for (int64_t i = 0; i < 16 * vs; i++) m[i] = ru();
    for (int64_t i = 0; i < 8 * sl; i++) {
        if (f64) ((double *)tin)[i] = in[i]; else ((float *)tin)[i] = (float)in[i];
    }
    for (int64_t i = 0; i < 16 * vs; i++) {
        if (f64) ((double *)tm)[i] = m[i]; else ((float *)tm)[i] = (float)m[i];
    }
    memset(tv, 0, (size_t)(16 * vs * es));
    /* sentinel past the run: the kernels must not write there */
    for (int64_t i = 0; i < 2 * (2 * nq + 1); i++) {
        if (f64) ((double *)tr)[i] = 12345.0; else ((float *)tr)[i] = 12345.0f;
    }
    if (f64) {
        isa->ti64(nq, (const double *)tin, sl, (double *)tv, vs);
        isa->to64(nq, (const double *)tm, vs, bv, (double *)tr, (double *)tr + 2 * nq + 1);
    } else {
        isa->ti32(nq, (const float *)tin, sl, (float *)tv, vs);
        isa->to32(nq, (const float *)tm, vs, (float)bv, (float *)tr, (float *)tr + 2 * nq + 1);
    }
#define GETV(buf, i) (f64 ? ((double *)(buf))[i] : (double)((float *)(buf))[i])
    const double tol = f64 ? 1e-13 : 2e-6;
    double worst = 0;
    for (int64_t q = 0; q < nq; q++) {
        double d[4][4], t[4][4], v[4][4], mm[4][4], u[4][4], y[4][4];
        for (int r = 0; r < 4; r++) /* window column c = phase c % 2, place q + c / 2 */
            for (int c = 0; c < 4; c++) d[r][c] = GETV(tin, (2 * r + c % 2) * sl + q + c / 2);
        for (int x = 0; x < 16; x++) mm[x / 4][x % 4] = GETV(tm, x * vs + q);
        mul4(4, 4, BT, d, 0, t); /* V = B^T d B */
        mul4(4, 4, t, BT, 1, v);
        mul4(2, 4, AT, mm, 0, u); /* Y = A^T M A */
        mul4(2, 2, u, AT, 1, y);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                const double e = fabs(GETV(tv, (i * 4 + j) * vs + q) - v[i][j]);
                if (e > worst) worst = e;
            }
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                const double e = fabs(GETV(tr, i * (2 * nq + 1) + 2 * q + j) - (y[i][j] + bv));
                if (e > worst) worst = e;
            }
    }
    for (int i = 0; i < 2; i++) /* the element after each output row is untouched */
        if (GETV(tr, i * (2 * nq + 1) + 2 * nq) != 12345.0) worst = 1e30;
    /* tiles past nq are not written: v stays 0 there */
    for (int x = 0; x < 16; x++)
        for (int64_t q = nq; q < vs; q++)
            if (GETV(tv, x * vs + q) != 0) worst = 1e30;
#undef GETV
    int bad = !(worst <= tol * 8);
    if (bad)
        printf("FAIL wino transforms %s %s nq=%lld err=%g\n", isa->name, f64 ? "f64" : "f32",
               (long long)nq, worst);
    free(in); free(m); free(tin); free(tv); free(tm); free(tr);
    return bad;
}

/* The row split of Winograd's input transform, dilation d = 1 or 2:
 * e[q] = s[2 d q] and o[q] = s[2 d q + d] exactly, nothing written past n,
 * and the flag set exactly when one of those 2 n values is NaN or infinite
 * (NaNs and infinities in every element not read must not count). */
static int check_wsplit(const isa_t *isa, int f64, int64_t n, int d)
{
    const int64_t es = f64 ? 8 : 4, len = 2 * d * n + 8;
    char *src = malloc((size_t)(len * es)), *e = malloc((size_t)((n + 4) * es));
    char *o = malloc((size_t)((n + 4) * es));
    char *used = calloc((size_t)len, 1);
    const int kind = (int)ri(0, 4); /* 0-1 finite, 2 NaN, 3 +inf, 4 -inf */
    const int64_t at = 2 * d * ri(0, n - 1) + d * ri(0, 1); /* a value read */
#define PUTS(buf, i, v) (f64 ? (void)(((double *)(buf))[i] = (v)) : (void)(((float *)(buf))[i] = (float)(v)))
#define GETS(buf, i) (f64 ? ((double *)(buf))[i] : (double)((float *)(buf))[i])
    for (int64_t q = 0; q < n; q++) used[2 * d * q] = used[2 * d * q + d] = 1;
    for (int64_t i = 0; i < len; i++) /* not read: NaN and infinities */
        PUTS(src, i, used[i] ? ru() * (i % 7 == 3 ? 1e30 : 1.0) : i % 2 ? NAN : -INFINITY);
    if (kind >= 2) PUTS(src, at, kind == 2 ? NAN : kind == 3 ? INFINITY : -INFINITY);
    for (int64_t i = 0; i < n + 4; i++) {
        PUTS(e, i, 777.0);
        PUTS(o, i, 777.0);
    }
    const int flag = f64 ? isa->ws64(n, (const double *)src, d, (double *)e, (double *)o)
                         : isa->ws32(n, (const float *)src, d, (float *)e, (float *)o);
    int bad = flag != (kind >= 2);
    for (int64_t q = 0; q < n; q++) {
        const double se = GETS(src, 2 * d * q), so = GETS(src, 2 * d * q + d);
        const double ge = GETS(e, q), go = GETS(o, q);
        if (!((ge == se || (ge != ge && se != se)) && (go == so || (go != go && so != so)))) bad = 1;
    }
    for (int64_t i = n; i < n + 4; i++)
        if (GETS(e, i) != 777.0 || GETS(o, i) != 777.0) bad = 1;
#undef PUTS
#undef GETS
    if (bad)
        printf("FAIL wino row split %s %s n=%lld d=%d kind=%d flag=%d\n", isa->name,
               f64 ? "f64" : "f32", (long long)n, d, kind, flag);
    free(src); free(e); free(o); free(used);
    return bad;
}

/* Winograd's input transform read straight from the rows (wtinr): the
 * same bits as the row split and wtin of the same windows (values outside
 * [0, hi) and of NULL rows 0), nothing written past nq tiles, and the flag
 * set exactly when a value read is NaN or infinite.  The rows lie inside
 * buffers whose elements outside [0, hi), and those between the windows'
 * columns with d = 2, are NaN or infinite: reading one would set the flag
 * or change V. */
static int check_wtinr(const isa_t *isa, int f64, int64_t nq, int d)
{
    const int64_t es = f64 ? 8 : 4, W = ri(1, 2 * d * nq + 8), pad = 40;
    const int64_t c0 = ri(-3 * d, W / 2), hi = W < c0 + d * (2 * nq + 1) + 1 ? W : c0 + d * (2 * nq + 1) + 1;
    const int64_t vs = nq + ri(0, 7), sl = nq + 1, len = W + 2 * pad;
    char *buf = malloc((size_t)(4 * len * es)), *tv = malloc((size_t)(16 * vs * es));
    char *rv = malloc((size_t)(16 * vs * es)), *sp = malloc((size_t)(8 * sl * es));
    const int kind = (int)ri(0, 4); /* 0-1 finite, 2 NaN, 3 +inf, 4 -inf in a value read */
#define PUTS(b, i, v) (f64 ? (void)(((double *)(b))[i] = (v)) : (void)(((float *)(b))[i] = (float)(v)))
#define GETS(b, i) (f64 ? ((double *)(b))[i] : (double)((float *)(b))[i])
    const void *rows[4];
    int64_t nread = 0;
    for (int r = 0; r < 4; r++) {
        char *row = buf + (size_t)((r * len + pad) * es);
        rows[r] = ri(0, 5) == 0 ? NULL : row;
        for (int64_t i = -pad; i < W + pad; i++) {
            const int64_t rel = i - c0;
            const int read = rows[r] && i >= 0 && i < hi && rel >= 0 && rel % d == 0;
            nread += read;
            PUTS(row, i, read ? ru() : i % 2 ? NAN : -INFINITY);
        }
    }
    if (kind >= 2 && nread > 0) { /* one value read made non-finite */
        int64_t k = ri(0, nread - 1);
        for (int r = 0; r < 4 && k >= 0; r++)
            for (int64_t i = 0; i < hi && k >= 0; i++)
                if (rows[r] && i - c0 >= 0 && (i - c0) % d == 0 && k-- == 0)
                    PUTS((char *)rows[r], i, kind == 2 ? NAN : kind == 3 ? INFINITY : -INFINITY);
    }
    /* the reference: split rows, zeros outside [0, hi), through wtin */
    for (int r = 0; r < 4; r++)
        for (int64_t q = 0; q < sl; q++)
            for (int ph = 0; ph < 2; ph++) {
                const int64_t at = c0 + d * (2 * q + ph);
                PUTS(sp, (2 * r + ph) * sl + q,
                     rows[r] && at >= 0 && at < hi ? GETS((const char *)rows[r], at) : 0.0);
            }
    for (int64_t i = 0; i < 16 * vs; i++) {
        PUTS(tv, i, 777.0);
        PUTS(rv, i, 777.0);
    }
    int flag;
    if (f64) {
        isa->ti64(nq, (const double *)sp, sl, (double *)rv, vs);
        flag = isa->tr64(nq, (const double *const *)rows, c0, hi, d, (double *)tv, vs);
    } else {
        isa->ti32(nq, (const float *)sp, sl, (float *)rv, vs);
        flag = isa->tr32(nq, (const float *const *)rows, c0, hi, d, (float *)tv, vs);
    }
    int bad = flag != (kind >= 2 && nread > 0);
    if (kind < 2 || nread == 0) /* finite: the same bits */
        bad |= memcmp(tv, rv, (size_t)(16 * vs * es)) != 0;
    for (int x = 0; x < 16; x++) /* nothing past the run */
        for (int64_t q = nq; q < vs; q++)
            if (GETS(tv, x * vs + q) != 777.0) bad = 1;
#undef PUTS
#undef GETS
    if (bad)
        printf("FAIL wino input from rows %s %s nq=%lld d=%d W=%lld c0=%lld kind=%d flag=%d\n",
               isa->name, f64 ? "f64" : "f32", (long long)nq, d, (long long)W, (long long)c0, kind,
               flag);
    free(buf); free(tv); free(rv); free(sp);
    return bad;
}

/* Two runs of dilation 1 at once (wtinr2, wtout2): the same bits as wtinr
 * and wtout on each run (checked above against the row split and the
 * formulas), nothing written past the na + nb tiles of V nor past either
 * run's 2 n output columns, and the flag set exactly when a value one of
 * the runs reads is NaN or infinite.  Each run's rows lie in buffers whose
 * elements outside its [0, hi) are NaN or infinite.  Short runs (both
 * within half a vector) take the one-vector path, longer ones the
 * fallback. */
static int check_wt2(const isa_t *isa, int f64, int64_t na, int64_t nb)
{
    const int64_t es = f64 ? 8 : 4, pad = 40, n[2] = {na, nb};
    const int64_t vs = na + nb + ri(0, 7);
    int64_t W[2], c0[2], hi[2], len[2], nread = 0;
    char *buf[2];
    const void *rows[2][4];
    const int kind = (int)ri(0, 4); /* 0-1 finite, 2 NaN, 3 +inf, 4 -inf in a value read */
#define PUTS(b, i, v) (f64 ? (void)(((double *)(b))[i] = (v)) : (void)(((float *)(b))[i] = (float)(v)))
#define GETS(b, i) (f64 ? ((double *)(b))[i] : (double)((float *)(b))[i])
    for (int s = 0; s < 2; s++) {
        W[s] = ri(1, 2 * n[s] + 8);
        c0[s] = ri(-3, W[s] / 2);
        hi[s] = W[s] < c0[s] + 2 * n[s] + 2 ? W[s] : c0[s] + 2 * n[s] + 2;
        len[s] = W[s] + 2 * pad;
        buf[s] = malloc((size_t)(4 * len[s] * es));
        for (int r = 0; r < 4; r++) {
            char *row = buf[s] + (size_t)((r * len[s] + pad) * es);
            rows[s][r] = ri(0, 5) == 0 ? NULL : row;
            for (int64_t i = -pad; i < W[s] + pad; i++) {
                const int read = rows[s][r] && i >= 0 && i < hi[s] && i >= c0[s];
                nread += read;
                PUTS(row, i, read ? ru() : i % 2 ? NAN : -INFINITY);
            }
        }
    }
    if (kind >= 2 && nread > 0) { /* one value read made non-finite */
        int64_t k = ri(0, nread - 1);
        for (int s = 0; s < 2; s++)
            for (int r = 0; r < 4 && k >= 0; r++)
                for (int64_t i = c0[s] < 0 ? 0 : c0[s]; i < hi[s] && k >= 0; i++)
                    if (rows[s][r] && k-- == 0)
                        PUTS((char *)rows[s][r], i, kind == 2 ? NAN : kind == 3 ? INFINITY : -INFINITY);
    }
    char *tv = malloc((size_t)(16 * vs * es)), *rv = malloc((size_t)(16 * vs * es));
    char *m = malloc((size_t)(16 * vs * es));
    const int64_t ol[2] = {2 * na + 8, 2 * nb + 8}; /* output rows with room past them */
    char *to = malloc((size_t)(2 * (ol[0] + ol[1]) * es)), *ro = malloc((size_t)(2 * (ol[0] + ol[1]) * es));
    const double bv = ru();
    for (int64_t i = 0; i < 16 * vs; i++) {
        PUTS(tv, i, 777.0);
        PUTS(rv, i, 777.0);
        PUTS(m, i, ru());
    }
    for (int64_t i = 0; i < 2 * (ol[0] + ol[1]); i++) {
        PUTS(to, i, 12345.0);
        PUTS(ro, i, 12345.0);
    }
    /* output rows: a0 a1 b0 b1, ol[s] elements each */
    const int64_t oa0 = 0, oa1 = ol[0], ob0 = 2 * ol[0], ob1 = 2 * ol[0] + ol[1];
    int flag, rflag;
    if (f64) {
        double *T = (double *)to, *R = (double *)ro;
        rflag = isa->tr64(na, (const double *const *)rows[0], c0[0], hi[0], 1, (double *)rv, vs);
        rflag |= isa->tr64(nb, (const double *const *)rows[1], c0[1], hi[1], 1, (double *)rv + na, vs);
        flag = isa->t2r64(na, (const double *const *)rows[0], c0[0], hi[0], nb,
                          (const double *const *)rows[1], c0[1], hi[1], (double *)tv, vs);
        isa->to64(na, (const double *)m, vs, bv, R + oa0, R + oa1);
        isa->to64(nb, (const double *)m + na, vs, bv, R + ob0, R + ob1);
        isa->t2o64(na, nb, (const double *)m, vs, bv, T + oa0, T + oa1, T + ob0, T + ob1);
    } else {
        float *T = (float *)to, *R = (float *)ro;
        rflag = isa->tr32(na, (const float *const *)rows[0], c0[0], hi[0], 1, (float *)rv, vs);
        rflag |= isa->tr32(nb, (const float *const *)rows[1], c0[1], hi[1], 1, (float *)rv + na, vs);
        flag = isa->t2r32(na, (const float *const *)rows[0], c0[0], hi[0], nb,
                          (const float *const *)rows[1], c0[1], hi[1], (float *)tv, vs);
        isa->to32(na, (const float *)m, vs, (float)bv, R + oa0, R + oa1);
        isa->to32(nb, (const float *)m + na, vs, (float)bv, R + ob0, R + ob1);
        isa->t2o32(na, nb, (const float *)m, vs, (float)bv, T + oa0, T + oa1, T + ob0, T + ob1);
    }
    const int nonfinite = kind >= 2 && nread > 0;
    int bad = flag != nonfinite || rflag != nonfinite;
    if (!nonfinite) /* the same bits as wtinr on each run */
        bad |= memcmp(tv, rv, (size_t)(16 * vs * es)) != 0;
    for (int x = 0; x < 16; x++) /* nothing past the two runs */
        for (int64_t q = na + nb; q < vs; q++)
            if (GETS(tv, x * vs + q) != 777.0) bad = 1;
    /* the outputs: wtout's bits, sentinels past 2 n untouched (compared
     * with the reference buffer, which holds the sentinels there too) */
    bad |= memcmp(to, ro, (size_t)(2 * (ol[0] + ol[1]) * es)) != 0;
    for (int64_t i = 2 * na; i < ol[0]; i++)
        if (GETS(to, oa0 + i) != 12345.0 || GETS(to, oa1 + i) != 12345.0) bad = 1;
    for (int64_t i = 2 * nb; i < ol[1]; i++)
        if (GETS(to, ob0 + i) != 12345.0 || GETS(to, ob1 + i) != 12345.0) bad = 1;
#undef PUTS
#undef GETS
    if (bad)
        printf("FAIL wino two runs %s %s na=%lld nb=%lld kind=%d flag=%d\n", isa->name,
               f64 ? "f64" : "f32", (long long)na, (long long)nb, kind, flag);
    free(buf[0]); free(buf[1]); free(tv); free(rv); free(m); free(to); free(ro);
    return bad;
}

/* 1-D Winograd F(2, 3)'s transforms: V = B^T d of tiles whose windows are
 * s[2 q .. 2 q + 3], zeros from s[hi] on (NaN there must not be read), and
 * Y = A^T M + bv, each against the formulas evaluated in the element type
 * in the kernels' order (the same bits); nothing written past nq tiles of
 * v or 2 nq elements of the output. */
static int check_w1(const isa_t *isa, int f64, int64_t nq)
{
    const int64_t es = f64 ? 8 : 4, vs = nq + ri(0, 7), hi = 2 * nq + 2 - ri(0, 3);
    const int64_t len = 2 * nq + 2 + 64;
    char *s = malloc((size_t)(len * es)), *v = malloc((size_t)(4 * vs * es));
    char *m = malloc((size_t)(4 * vs * es)), *r = malloc((size_t)((2 * nq + 8) * es));
    const double bv = ru();
#define PUTS(b, i, x) (f64 ? (void)(((double *)(b))[i] = (x)) : (void)(((float *)(b))[i] = (float)(x)))
#define GETS(b, i) (f64 ? ((double *)(b))[i] : (double)((float *)(b))[i])
    for (int64_t i = 0; i < len; i++) PUTS(s, i, i < hi ? ru() : NAN);
    for (int64_t i = 0; i < 4 * vs; i++) {
        PUTS(v, i, 777.0);
        PUTS(m, i, ru());
    }
    for (int64_t i = 0; i < 2 * nq + 8; i++) PUTS(r, i, 777.0);
    if (f64) {
        isa->w1i64(nq, (const double *)s, hi, (double *)v, vs);
        isa->w1o64(nq, (const double *)m, vs, bv, (double *)r);
    } else {
        isa->w1i32(nq, (const float *)s, hi, (float *)v, vs);
        isa->w1o32(nq, (const float *)m, vs, (float)bv, (float *)r);
    }
    int bad = 0;
    for (int64_t q = 0; q < nq; q++) {
        double dd[4], want[4], y[2];
        for (int c = 0; c < 4; c++) dd[c] = 2 * q + c < hi ? GETS(s, 2 * q + c) : 0.0;
        if (f64) {
            want[0] = dd[0] - dd[2], want[1] = dd[1] + dd[2];
            want[2] = dd[2] - dd[1], want[3] = dd[1] - dd[3];
            const double m0 = GETS(m, q), m1 = GETS(m, vs + q), m2 = GETS(m, 2 * vs + q);
            const double m3 = GETS(m, 3 * vs + q);
            y[0] = m0 + m1 + m2 + bv, y[1] = m1 - m2 - m3 + bv;
        } else {
            const float f[4] = {(float)dd[0], (float)dd[1], (float)dd[2], (float)dd[3]};
            want[0] = (float)(f[0] - f[2]), want[1] = (float)(f[1] + f[2]);
            want[2] = (float)(f[2] - f[1]), want[3] = (float)(f[1] - f[3]);
            const float m0 = (float)GETS(m, q), m1 = (float)GETS(m, vs + q);
            const float m2 = (float)GETS(m, 2 * vs + q), m3 = (float)GETS(m, 3 * vs + q);
            const float b = (float)bv;
            const float y0 = ((m0 + m1) + m2) + b, y1 = ((m1 - m2) - m3) + b;
            y[0] = y0, y[1] = y1;
        }
        for (int x = 0; x < 4; x++)
            if (GETS(v, x * vs + q) != want[x]) bad = 1;
        if (GETS(r, 2 * q) != y[0] || GETS(r, 2 * q + 1) != y[1]) bad = 1;
    }
    for (int x = 0; x < 4; x++)
        for (int64_t q = nq; q < vs; q++)
            if (GETS(v, x * vs + q) != 777.0) bad = 1;
    for (int64_t i = 2 * nq; i < 2 * nq + 8; i++)
        if (GETS(r, i) != 777.0) bad = 1;
#undef PUTS
#undef GETS
    if (bad)
        printf("FAIL 1-D wino transforms %s %s nq=%lld hi=%lld\n", isa->name, f64 ? "f64" : "f32",
               (long long)nq, (long long)hi);
    free(s); free(v); free(m); free(r);
    return bad;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    if (argc > 2) rng_state += (uint64_t)atoll(argv[2]) * 0x2545F4914F6CDD1Dull;
    collect_isas();
    const int n = n_isas;
    printf("isas:");
    for (int i = 0; i < n; i++)
        if (i == 0 || strcmp(isas[i].name, isas[i - 1].name) != 0)
            printf(" %s", isas[i].name);
    printf("\n");
    int failures = 0, checks = 0;
    for (int it = 0; it < iters; it++)
        for (int i = 0; i < n; i++)
            for (int f64 = 0; f64 < 2; f64++) {
                if (f64 ? !isas[i].f64 : !isas[i].f32) continue;
                const int64_t kc = it < 4 ? it + 1 : ri(1, 300);
                const int64_t ldc = isas[i].nr + ri(0, 3) * ri(0, 40);
                failures += check(&isas[i], f64, kc, ldc, (int)ri(0, 1), (int)ri(0, 1));
                failures += check_pack(&isas[i], f64, ri(1, 40), (int)ri(1, isas[i].nr));
                failures += check_w(&isas[i], f64, ri(1, 6), it < 40 ? it + 1 : ri(1, 70));
                failures += check_wt(&isas[i], f64, it < 40 ? it + 1 : ri(1, 40));
                failures += check_wsplit(&isas[i], f64, it < 40 ? it + 1 : ri(1, 70), (int)ri(1, 2));
                failures += check_wtinr(&isas[i], f64, it < 40 ? it + 1 : ri(1, 70), (int)ri(1, 2));
                failures += check_w1(&isas[i], f64, it < 40 ? it + 1 : ri(1, 90));
                { /* two runs, mostly short enough to share a vector */
                    const int64_t half = (isas[i].lanes - 2) / 2 > 0 ? (isas[i].lanes - 2) / 2 : 1;
                    const int64_t top = ri(0, 3) ? half : 3 * isas[i].lanes;
                    failures += check_wt2(&isas[i], f64, ri(1, top), ri(1, top));
                }
                failures += check_rows(&isas[i], f64, ri(1, 5), it < 40 ? it + 1 : ri(1, 80));
                failures += check_split(&isas[i], f64, ri(1, 5), it < 70 ? it + 1 : ri(1, 160), 2);
                failures += check_split(&isas[i], f64, ri(1, 5), it < 40 ? it + 1 : ri(1, 80), 4);
                failures += check_n(&isas[i], f64, ri(1, 200), (int)ri(0, 1),
                                    (int)ri(1, isas[i].nr / isas[i].lanes), (int)ri(0, 1), (int)ri(0, 1), 0);
                { /* the row counts 1, 2, 4 that the kernel set has (<= MR / 2) */
                    int hr = 1 << (int)ri(0, 2);
                    while (2 * hr > isas[i].mr) hr /= 2;
                    failures += check_n(&isas[i], f64, ri(1, 200), 2,
                                        (int)ri(1, 2 * isas[i].nr / isas[i].lanes), (int)ri(0, 1),
                                        (int)ri(0, 1), hr);
                }
                failures += check_packa(&isas[i], f64, it < 40 ? it + 1 : ri(1, 300),
                                        (int)(ri(0, 1) ? isas[i].mr : ri(1, isas[i].mr)));
                failures += check_n(&isas[i], f64, it < 4 ? it + 1 : ri(1, 300), 3, 0,
                                    (int)ri(0, 1), 0, 0);
                failures += check_n(&isas[i], f64, it < 4 ? it + 1 : ri(1, 300), 4,
                                    (int)ri(1, isas[i].nr / isas[i].lanes), (int)ri(0, 1),
                                    (int)ri(0, 1), 0);
                failures += check_t(&isas[i], f64, it < 40 ? it + 1 : ri(1, 600),
                                    (int)ri(1, IG_TAIL_MAX), (int)ri(1, isas[i].mr), (int)ri(0, 1),
                                    (int)ri(0, 1));
                failures += check_c2i(&isas[i], f64, ri(1, 5), it < 40 ? it + 1 : ri(1, 80), 1);
                failures += check_c2i(&isas[i], f64, ri(1, 5), it < 40 ? it + 1 : ri(1, 80), 0);
                checks += 19;
            }
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
