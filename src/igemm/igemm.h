/*
 * Implicit-GEMM convolution (forward): the im2col matrix is never formed.
 * Input rows are copied once per work item into a padded band, B panels are
 * packed straight from the band (the im2col gather happens inside packing),
 * the weight is packed once per call, and a register-blocked micro-kernel
 * (MR output channels x NR output positions) accumulates into the output.
 *
 * Internal header: the micro-kernel types and the per-ISA tables.  The ISA
 * is core/isa.h's choice, the one every kernel family follows.
 */
#ifndef CC_IGEMM_H
#define CC_IGEMM_H

#include <stdint.h>

#include "core/isa.h"

/* c[i][j] (i < MR rows of stride ldc, j < NR) = sum_k a[k][i] * b[k][j],
 * then, when first != 0, c = acc + (bias ? bias[i] : 0), else c += acc.
 * a: kc x MR packed (MR per k), b: kc x NR packed (NR per k). */
typedef void (*ig_ukr_f32)(int64_t kc, const float *a, const float *b, float *c,
                           int64_t ldc, int first, const float *bias);
typedef void (*ig_ukr_f64)(int64_t kc, const double *a, const double *b, double *c,
                           int64_t ldc, int first, const double *bias);

/* The same product with b read in place: row k of b is the NR elements at
 * b + boff[k] (the implicit-GEMM band, no packing). */
typedef void (*ig_ukri_f32)(int64_t kc, const float *a, const float *b, const int64_t *boff,
                            float *c, int64_t ldc, int first, const float *bias);
typedef void (*ig_ukri_f64)(int64_t kc, const double *a, const double *b, const int64_t *boff,
                            double *c, int64_t ldc, int first, const double *bias);

/* ukri prefetching, spread over its products, npf rows of NR elements pfs
 * elements apart from pf: the next micro-panel's rows of a B read in place
 * (gemm/uk_gemm.inc).  A hint: c is ukri's either way. */
typedef void (*ig_ukrip_f32)(int64_t kc, const float *a, const float *b, const int64_t *boff,
                             float *c, int64_t ldc, int first, const float *bias,
                             const float *pf, int64_t pfs, int64_t npf);
typedef void (*ig_ukrip_f64)(int64_t kc, const double *a, const double *b, const int64_t *boff,
                             double *c, int64_t ldc, int first, const double *bias,
                             const double *pf, int64_t pfs, int64_t npf);

/* ukr and ukri over the first nv vectors of columns only (1 <= nv <= NR /
 * lanes; nv * lanes columns of c written): a panel's partial last
 * micro-tile.  b rows are still NR apart in the packed form. */
typedef void (*ig_ukrn_f32)(int nv, int64_t kc, const float *a, const float *b, float *c,
                            int64_t ldc, int first, const float *bias);
/* ukrn with the A panel's rows where they lie: row i's value k at ar[i][k] */
typedef void (*ig_ukra_f32)(int nv, int64_t kc, const float *const *ar, const float *b,
                            float *c, int64_t ldc, int first, const float *bias);
typedef void (*ig_ukra_f64)(int nv, int64_t kc, const double *const *ar, const double *b,
                            double *c, int64_t ldc, int first, const double *bias);
typedef void (*ig_ukrn_f64)(int nv, int64_t kc, const double *a, const double *b, double *c,
                            int64_t ldc, int first, const double *bias);
/* The A panel's rows where they lie (ar, as ukra) against a few columns
 * held column by column (column j's kc values at bt + j * kc), by dot
 * products along k: c rows i < nm, columns j < nq (1 <= nq <=
 * IG_TAIL_MAX), c = bias + sum where first (bias may be NULL), else c +=
 * sum.  A last micro-panel of a few positions, which the vector kernels
 * would run as one mostly empty vector per row. */
typedef void (*ig_ukrt_f32)(int nq, int nm, int64_t kc, const float *const *ar, const float *bt,
                            float *c, int64_t ldc, int first, const float *bias);
typedef void (*ig_ukrt_f64)(int nq, int nm, int64_t kc, const double *const *ar,
                            const double *bt, double *c, int64_t ldc, int first,
                            const double *bias);
typedef void (*ig_ukrin_f32)(int nv, int64_t kc, const float *a, const float *b,
                             const int64_t *boff, float *c, int64_t ldc, int first,
                             const float *bias);
typedef void (*ig_ukrin_f64)(int nv, int64_t kc, const double *a, const double *b,
                             const int64_t *boff, double *c, int64_t ldc, int first,
                             const double *bias);

/* ukrin on the first `rows` rows of the A panel (a still MR values per k;
 * rows 1, 2 or 4 and at most MR / 2: the vector kernels round 3 up to 4
 * and clamp to MR / 2, the scalar one takes any) and up to twice the
 * columns: 1 <= nv <= 2 * NR / lanes vectors, nv * lanes columns of c
 * written (the scalar kernel: min(nv, 2 * NR) columns) in `rows` rows.
 * For layers with at most MR / 2 output channels per group, where the full
 * kernel would spend most of its multiply-adds on the panel's zero rows;
 * b is read up to 2 * NR elements past b + boff[k]. */
typedef void (*ig_ukrih_f32)(int rows, int nv, int64_t kc, const float *a, const float *b,
                             const int64_t *boff, float *c, int64_t ldc, int first,
                             const float *bias);
typedef void (*ig_ukrih_f64)(int rows, int nv, int64_t kc, const double *a, const double *b,
                             const int64_t *boff, double *c, int64_t ldc, int first,
                             const double *bias);

/* Packs a B micro-panel of NR positions that lie in runs of consecutive
 * band elements: row k of dst (NR wide) gets
 *   dst[k * NR + j] = band[boff[k] + roff[r] + j]   for rst[r] <= j < rst[r+1]
 * for the nruns runs (rst[0] = 0, rst[nruns] = nq <= NR), and 0 for
 * nq <= j < NR.  The vector versions copy whole vectors: they read up to
 * V - 1 elements past each run and write up to V - 1 elements past a run
 * (into the next run or row, written after it, or past the last row: dst
 * needs V - 1 elements of slack). */
typedef void (*ig_pack_f32)(int64_t kc, const float *band, const int64_t *boff, int nruns,
                            const int64_t *roff, const int *rst, int nq, float *dst);
typedef void (*ig_pack_f64)(int64_t kc, const double *band, const int64_t *boff, int nruns,
                            const int64_t *roff, const int *rst, int nq, double *dst);

/* Weight-gradient micro-kernel (small groups, ig_wgrad.inc):
 * for i < MRW output channels and j < NRW taps, adds lane-wise into the
 * vector acc[i][j] (V lanes; acc is MRW x NRW x V, i-major) the products
 *   gy[i][r * gpitch + c] * band[koff[j] + r * bpitch + c]
 * over rows r < nrows and columns c < w, column c into lane c % V.  gy[i]
 * are MRW row pointers (repeat a valid one for rows past the group: those
 * sums are dropped).  Reads nothing past column w of a row (the last vector
 * of a row is a masked load), so no product involves data outside the
 * output tile. */
typedef void (*ig_ukrw_f32)(int64_t nrows, int64_t w, const float *const *gy, int64_t gpitch,
                            const float *band, int64_t bpitch, const int64_t *koff,
                            float *acc);
typedef void (*ig_ukrw_f64)(int64_t nrows, int64_t w, const double *const *gy, int64_t gpitch,
                            const double *band, int64_t bpitch, const int64_t *koff,
                            double *acc);

/* Winograd F(2x2, 3x3) transforms of a run of nq tiles, and the split of
 * an input row into its windows' two column phases (wino_tr_scalar.inc,
 * wino_tr.inc): with dilation d (1 or 2), e[q] = s[2 d q] and o[q] =
 * s[2 d q + d] for q < n; 1 returned when one of the 2 n values is NaN or
 * infinite.  The split with d = 1 also fills the two column phases of a
 * stride-2 band (ig_band.inc). */
typedef int (*ig_wsplit_f32)(int64_t n, const float *s, int d, float *e, float *o);
typedef int (*ig_wsplit_f64)(int64_t n, const double *s, int d, double *e, double *o);
typedef void (*ig_wtin_f32)(int64_t nq, const float *es, int64_t sl, float *v, int64_t vs);
typedef void (*ig_wtin_f64)(int64_t nq, const double *es, int64_t sl, double *v, int64_t vs);
/* The input transform straight from the input rows (wtin's V for nq tiles:
 * rows[r] input row r of the windows, NULL outside the image; window
 * column c of tile q is element c0 + d (2 q + c) of its row, 0 outside
 * [0, hi); d 1 or 2); 1 returned when a value read is NaN or infinite. */
typedef int (*ig_wtinr_f32)(int64_t nq, const float *const *rows, int64_t c0, int64_t hi, int d,
                            float *v, int64_t vs);
typedef int (*ig_wtinr_f64)(int64_t nq, const double *const *rows, int64_t c0, int64_t hi,
                            int d, double *v, int64_t vs);
/* 1-D Winograd F(2, 3) (winograd/wino1d.h): the input transform of nq
 * tiles from a row s (tile q's window s[2 q .. 2 q + 3], 0 from s[hi] on:
 * nothing there is read), V as wtin's with 4 elements; the output
 * transform into r[2 q], r[2 q + 1]. */
typedef void (*ig_w1tin_f32)(int64_t nq, const float *s, int64_t hi, float *v, int64_t vs);
typedef void (*ig_w1tin_f64)(int64_t nq, const double *s, int64_t hi, double *v, int64_t vs);
typedef void (*ig_w1tout_f32)(int64_t nq, const float *m, int64_t ms, float bv, float *r);
typedef void (*ig_w1tout_f64)(int64_t nq, const double *m, int64_t ms, double bv, double *r);
typedef void (*ig_wtout_f32)(int64_t nq, const float *m, int64_t ms, float bv, float *r0,
                             float *r1);
typedef void (*ig_wtout_f64)(int64_t nq, const double *m, int64_t ms, double bv, double *r0,
                             double *r1);
/* Two runs of dilation 1 at once (the vector kernels fill one vector with
 * two short runs: a 14-wide image's 7 tiles on 16 lanes): wtinr2 is wtinr
 * of run a (na tiles, rows ra, c0 = ca, hi = ha) into v and of run b into
 * v + na; wtout2 is wtout of tiles 0..na-1 into rows a0, a1 and of tiles
 * na..na+nb-1 (m + na) into b0, b1.  Any na, nb >= 1. */
/* Winograd's filter transform of one A panel's rows for nkc GEMM depth
 * indices of one depth tap (winograd/wino_tr_scalar.inc: wtfilt); 1 when a
 * transformed value is NaN or infinite. */
typedef int (*ig_wtfilt_f32)(int64_t rows, int64_t nkc, const float *w, int64_t rs, int64_t ks,
                             int mr, float *d, int64_t xs);
typedef int (*ig_wtfilt_f64)(int64_t rows, int64_t nkc, const double *w, int64_t rs,
                             int64_t ks, int mr, double *d, int64_t xs);
typedef int (*ig_wtinr2_f32)(int64_t na, const float *const *ra, int64_t ca, int64_t ha,
                             int64_t nb, const float *const *rb, int64_t cb, int64_t hb,
                             float *v, int64_t vs);
typedef int (*ig_wtinr2_f64)(int64_t na, const double *const *ra, int64_t ca, int64_t ha,
                             int64_t nb, const double *const *rb, int64_t cb, int64_t hb,
                             double *v, int64_t vs);
typedef void (*ig_wtout2_f32)(int64_t na, int64_t nb, const float *m, int64_t ms, float bv,
                              float *a0, float *a1, float *b0, float *b1);
typedef void (*ig_wtout2_f64)(int64_t na, int64_t nb, const double *m, int64_t ms, double bv,
                              double *a0, double *a1, double *b0, double *b1);

/* The direct mode's kernel writing the output in place (ig_conv.inc): the
 * product of ukrin (half 0: MR rows, 1 <= nv <= NR / lanes) or of ukrih
 * (half = its rows, 1, 2 or 4, at most MR / 2; nv <= 2 NR / lanes) over
 * one K block, plus bias[i] (0 without bias), stored for rows i < nm only:
 * vector j of the wide positions holds the outputs of the lanes set in
 * vm[j] (bit l: lane l), which go in lane order to c + i * ldc + vo[j] ..
 * (one lane per vector on the scalar set).  Nothing else is written. */
typedef void (*ig_ukriy_f32)(int half, int nm, int nv, int64_t kc, const float *a, const float *b,
                             const int64_t *boff, float *c, int64_t ldc, const int64_t *vo,
                             const uint32_t *vm, const float *bias);
typedef void (*ig_ukriy_f64)(int half, int nm, int nv, int64_t kc, const double *a,
                             const double *b, const int64_t *boff, double *c, int64_t ldc,
                             const int64_t *vo, const uint32_t *vm, const double *bias);

/* An A panel: MR rows of a row-major matrix (rows lds apart), columns
 * [0, kc), k-major: dst[k * MR + i] = src[i * lds + k] for i < nm, 0 for
 * nm <= i < MR (the implicit GEMM's packed weight, uk_gemm's packed A). */
typedef void (*ig_packa_f32)(int64_t kc, const float *src, int64_t lds, int nm, float *dst);
typedef void (*ig_packa_f64)(int64_t kc, const double *src, int64_t lds, int nm, double *dst);

/* Rows of n consecutive elements from src (rows sp apart) to dst (rows dp
 * apart), plus bv when add (the direct mode's output rows with the bias;
 * the band's input rows without): dst[r dp + j] = src[r sp + j] (+ bv) for
 * r < nrows, j < n.  Touches nothing else of either (the last vector of a
 * row is masked); src and dst do not overlap. */
typedef void (*ig_rows_f32)(int64_t nrows, int64_t n, const float *src, int64_t sp, float *dst,
                            int64_t dp, int add, float bv);
typedef void (*ig_rows_f64)(int64_t nrows, int64_t n, const double *src, int64_t sp, double *dst,
                            int64_t dp, int add, double bv);

/* Rows of n elements split into their even and odd columns (the band of
 * layers of column stride 2): de[r dp + j] = src[r sp + 2 j] for j <
 * ceil(n / 2), dq[r dp + j] = src[r sp + 2 j + 1] for j < floor(n / 2),
 * r < nrows.  Reads src[r sp + 0 .. n - 1] of each row and writes those
 * elements of each destination row, nothing else (masked tails); no buffer
 * overlaps another. */
typedef void (*ig_rows2_f32)(int64_t nrows, int64_t n, const float *src, int64_t sp, float *de,
                             float *dq, int64_t dp);
typedef void (*ig_rows2_f64)(int64_t nrows, int64_t n, const double *src, int64_t sp,
                             double *de, double *dq, int64_t dp);

/* The same into the four column phases (column stride 4): d<i>[r dp + j] =
 * src[r sp + 4 j + i] for i < 4, r < nrows, j < n; reads src[r sp + 0 ..
 * 4 n - 1] of each row, writes n elements of each destination row. */
typedef void (*ig_rows4_f32)(int64_t nrows, int64_t n, const float *src, int64_t sp, float *d0,
                             float *d1, float *d2, float *d3, int64_t dp);
typedef void (*ig_rows4_f64)(int64_t nrows, int64_t n, const double *src, int64_t sp,
                             double *d0, double *d1, double *d2, double *d3, int64_t dp);

/* The small-plane col2im's rows (gemm/im2col.inc, ig_c2i.inc): c2ip adds
 * two taps' rows into the interleaved places of a stride-2 row,
 * d[r dp + 2 j] += a[r sp + j] and d[r dp + 2 j + 1] += b[r sp + j]; radd
 * adds rows, d[r dp + j] += s[r sp + j]; j < n, r < nrows.  Each reads and
 * writes those elements only. */
typedef void (*ig_c2ip_f32)(int64_t nrows, int64_t n, const float *a, const float *b,
                            int64_t sp, float *d, int64_t dp);
typedef void (*ig_c2ip_f64)(int64_t nrows, int64_t n, const double *a, const double *b,
                            int64_t sp, double *d, int64_t dp);
typedef void (*ig_radd_f32)(int64_t nrows, int64_t n, const float *s, int64_t sp, float *d,
                            int64_t dp);
typedef void (*ig_radd_f64)(int64_t nrows, int64_t n, const double *s, int64_t sp, double *d,
                            int64_t dp);

/* The shifted weight-gradient kernel: up to IG_SNV_MAX vectors of input
 * channels a call, and an accumulator budget per instruction set
 * (IG_SACC_<isa> vectors: CO output channels x NV vectors, CO at most
 * IG_SCO_MAX, a gy row pointer each), leaving registers for NV band
 * vectors and a broadcast. */
#define IG_SNV_MAX 4
#define IG_SCO_MAX 8
#define IG_SACC_SCALAR 16
#define IG_SACC_AVX2 12
#define IG_SACC_AVX512 24
#define IG_SACC_NEON 24

/* Shifted weight-gradient kernel (gemm/shift_conv.inc): for i < nco output
 * channels and the nv * lanes input channels of nv vectors,
 *   c[i * ldc + o] += sum_{r < nrows, j < w}
 *                     gy[i * gstride + r * gpitch + j] * bt[r * bpitch + j * ldb + o],
 * bt the band transposed (a row of input channels per band position, zeros
 * past the group's channels) and shifted by the tap, gy read in place.
 * 1 <= nv <= snv; 1 <= nco <= sco[nv], the output channels a call takes. */
typedef void (*ig_ukrs_f32)(int nv, int nco, int64_t nrows, int64_t w, const float *gy,
                            int64_t gpitch, int64_t gstride, const float *bt, int64_t bpitch,
                            int64_t ldb, float *c, int64_t ldc);
typedef void (*ig_ukrs_f64)(int nv, int nco, int64_t nrows, int64_t w, const double *gy,
                            int64_t gpitch, int64_t gstride, const double *bt, int64_t bpitch,
                            int64_t ldb, double *c, int64_t ldc);

typedef struct ig_kern_f32 {
    int mr, nr;
    ig_ukr_f32 ukr;
    ig_ukri_f32 ukri;
    ig_pack_f32 packr;
    int mrw, nrw, lanes;
    ig_ukrw_f32 ukrw;
    ig_wtin_f32 wtin;
    ig_wtout_f32 wtout;
    ig_rows_f32 rows;
    ig_ukrn_f32 ukrn;
    ig_ukrin_f32 ukrin;
    ig_wsplit_f32 wsplit;
    int snv;
    int sco[IG_SNV_MAX + 1];
    ig_ukrs_f32 ukrs;
    ig_packa_f32 packa;
    ig_wtinr_f32 wtinr;
    ig_w1tin_f32 w1tin;
    ig_w1tout_f32 w1tout;
    ig_wtinr2_f32 wtinr2;
    ig_wtout2_f32 wtout2;
    ig_ukrih_f32 ukrih;
    ig_rows2_f32 rows2;
    ig_rows4_f32 rows4;
    ig_ukriy_f32 ukriy;
    ig_ukrip_f32 ukrip;
    ig_ukra_f32 ukra;
    ig_wtfilt_f32 wtfilt;
    ig_ukrt_f32 ukrt;
    ig_c2ip_f32 c2ip;
    ig_radd_f32 radd;
} ig_kern_f32;

typedef struct ig_kern_f64 {
    int mr, nr;
    ig_ukr_f64 ukr;
    ig_ukri_f64 ukri;
    ig_pack_f64 packr;
    int mrw, nrw, lanes;
    ig_ukrw_f64 ukrw;
    ig_wtin_f64 wtin;
    ig_wtout_f64 wtout;
    ig_rows_f64 rows;
    ig_ukrn_f64 ukrn;
    ig_ukrin_f64 ukrin;
    ig_wsplit_f64 wsplit;
    int snv;
    int sco[IG_SNV_MAX + 1];
    ig_ukrs_f64 ukrs;
    ig_packa_f64 packa;
    ig_wtinr_f64 wtinr;
    ig_w1tin_f64 w1tin;
    ig_w1tout_f64 w1tout;
    ig_wtinr2_f64 wtinr2;
    ig_wtout2_f64 wtout2;
    ig_ukrih_f64 ukrih;
    ig_rows2_f64 rows2;
    ig_rows4_f64 rows4;
    ig_ukriy_f64 ukriy;
    ig_ukrip_f64 ukrip;
    ig_ukra_f64 ukra;
    ig_wtfilt_f64 wtfilt;
    ig_ukrt_f64 ukrt;
    ig_c2ip_f64 c2ip;
    ig_radd_f64 radd;
} ig_kern_f64;

/* The kernels of one instruction set, cc_ig_kern_<f32|f64>_<isa>, made by
 * ig_kernels.c; cc_ig_kern_<f32|f64>(): those of the instruction set in use
 * (core/isa.h). */
CC_ISA_DECLARE(ig_kern_f32, cc_ig_kern_f32)
CC_ISA_DECLARE(ig_kern_f64, cc_ig_kern_f64)
const ig_kern_f32 *cc_ig_kern_f32(void);
const ig_kern_f64 *cc_ig_kern_f64(void);
/* The vector lanes of the kernels in use for elements of elsize bytes. */
static inline int64_t cc_ig_lanes(int64_t elsize) {
    return elsize == 4 ? cc_ig_kern_f32()->lanes : cc_ig_kern_f64()->lanes;
}
/* ... in the driver templates (core/instances.h: CC_SFX) */
#define IG_KERN_T CC_CAT(ig_kern_, CC_SFX)
#define IG_KERN CC_CAT(cc_ig_kern_, CC_SFX)
/* the scalar set's table (always built), for work too narrow for vectors */
#define IG_KERN_SCALAR CC_CAT(CC_CAT(cc_ig_kern_, CC_SFX), _scalar)

/* Register blocks per instruction set (MR rows x NV vectors of V lanes). */
#define IG_MR_SCALAR 4
#define IG_NR_SCALAR 4
#define IG_MR_AVX2 4
#define IG_NV_AVX2 3
#define IG_MR_AVX512 8
#define IG_NV_AVX512 3
#define IG_MR_NEON 8
#define IG_MR_MAX 8 /* bound on any MR (the Winograd filter transform's rows) */
#define IG_NR_MAX 64 /* bound on any NR (the packing's run arrays) */
#define IG_TAIL_MAX 4 /* columns of ukrt */
#define IG_NV_NEON 3
/* weight gradient: MRW channels x NRW taps of vector accumulators, plus MRW
 * gy vectors and one band vector in registers (AVX2: 12 + 3 + 1 = 16) */
#define IG_MRW_MAX 16 /* bound on any MRW (the driver's row-pointer array) */
#define IG_MRW_SCALAR 4
#define IG_NRW_SCALAR 4
#define IG_MRW_AVX2 3
#define IG_NRW_AVX2 4
#define IG_MRW_AVX512 4
#define IG_NRW_AVX512 6
#define IG_MRW_NEON 4
#define IG_NRW_NEON 6

#endif
