/*
 * 1-D convolution of 3 taps, stride 1, by Winograd F(2, 3) (wino1d.inc),
 * on the implicit GEMM's micro-kernels: the conv1d layers of TCNs and 1-D
 * CNNs, any dilation, padding and groups, float32 and float64.  Part of
 * the WINOGRAD_3X3 method (wino_conv.c runs it for such geometries).
 *
 * With dilation d the output splits into d phases (positions a, a + d,
 * ...), each an undilated 3-tap convolution of the input's phase a - p +
 * d j.  An image chunk's input is first copied phase by phase into rows
 * of Lp elements (xp[image][channel][phase][j] = x[a - p + d j], zeros
 * outside the input: the padding; dilations 2^k by k rounds of even/odd
 * splits), checked for NaN and infinities on the way, and with dilation >
 * 1 the outputs are written by phase (yp) and interleaved into y after
 * the chunk; a phase's outputs are cut into tiles of 2, and tile q of a phase
 * reads its row's elements 2 q .. 2 q + 3.  With U = G g (4 values per
 * channel pair, G as in 2-D) and V = B^T d of each tile's window, the four
 * elements xi of the transformed domain are 4 matrix products per group,
 * M_xi (cog x tiles) = U_xi (cog x cig) V_xi (cig x tiles), and the
 * tile's outputs are A^T M + bias: 4 multiply-adds per tile and channel
 * pair against 6 for the direct product.  Tiles are numbered over (image,
 * phase, tile); a work item is (group, panel of NR tiles): its input
 * transform writes V as B panels, 4 x ceil(cog / MR) micro-kernel calls
 * write M, its output transform writes the outputs.
 *
 * Float32 error (max |y - ref| / max |ref| against a float64 direct sum of
 * the same float32 inputs, benches/winograd_error.py --1d, recorded in
 * benches/results/winograd-error-1d-2026-12-05.md): 2.6-6.7e-7 on N(0, 1)
 * data at 16-1024 channels, at most 9.1e-7 on U[0, 1) and lognormal data,
 * 1.6e-6 on inputs in the sign pattern of F(4, 3)'s widest B^T row; F(4,
 * 3) reached 3.1e-6 on N(0, 1) data at 256 channels, past the suite's 3e-6
 * bound for Winograd, so cconv keeps F(2, 3).
 */
#ifndef CC_WINO1D_H
#define CC_WINO1D_H
#include "cconv.h"
#include "igemm/ig_plan.h"

typedef struct w1_plan {
    int nt, mr, nr;
    int64_t cig, cog, mpan;   /* channels per group; MR panels per group */
    int64_t d, L, OL;         /* dilation (phases), input and output length */
    int64_t nqa, Lp;          /* most tiles of a phase; its row's elements */
    int64_t timg;             /* tiles of an image (all phases) */
    int64_t nimg;             /* images per chunk (their rows fit xp) */
    int64_t ap_elems;         /* U, all groups and xi */
    int64_t xp_elems;         /* the chunk's phase rows (+ slack) */
    int64_t yp_elems;         /* dilation > 1: the chunk's outputs by phase */
    int64_t sp_elems;         /* per thread: a row's split (dilation 2^k) */
    int64_t vb_elems, mb_elems, es_elems, per_thread;
} w1_plan;

/* A pure conv1d (geometry padded to 3-D with ones: no depth or height
 * extent) of 3 taps at stride 1. */
static inline int cc_wino1d_applies(const cc_geom *g) {
    return cc_geom_valid(g) && g->in[0] == 1 && g->in[1] == 1 && g->out[0] == 1 &&
           g->out[1] == 1 && g->k[0] == 1 && g->k[1] == 1 && g->k[2] == 3 &&
           g->stride[2] == 1 && g->dil[2] >= 1 && g->pad[0] == 0 && g->pad[1] == 0 &&
           g->pad[2] >= 0 && g->out[2] > 0;
}

/* Outputs of phase a: positions a, a + d, ... below OL. */
static inline int64_t w1_phase_len(int64_t OL, int64_t d, int64_t a) {
    return a < OL ? cc_ceil_div(OL - a, d) : 0;
}

/* 1 for dilations 2, 4, 8, ... (their phases are split by rounds of
 * even/odd splits) */
static inline int w1_pow2(int64_t d) { return d > 1 && (d & (d - 1)) == 0; }

/* The most bytes of phase rows (and outputs by phase) one chunk of images
 * may hold. */
#define W1_XP_BYTES ((int64_t)16 << 20)

static inline void w1_plan_make(const cc_geom *g, int nthreads, int mr, int nr, int lanes,
                                int64_t es, w1_plan *p) {
    p->nt = nthreads < 1 ? 1 : nthreads;
    p->mr = mr;
    p->nr = nr;
    p->cig = g->c_in / g->groups;
    p->cog = g->c_out / g->groups;
    p->mpan = cc_ceil_div(p->cog, mr);
    p->d = g->dil[2];
    p->L = g->in[2];
    p->OL = g->out[2];
    p->nqa = cc_ceil_div(w1_phase_len(p->OL, p->d, 0), 2);
    p->Lp = 2 * p->nqa + 2;
    p->timg = 0;
    for (int64_t a = 0; a < p->d && a < p->OL; ++a)
        p->timg += cc_ceil_div(w1_phase_len(p->OL, p->d, a), 2);
    p->ap_elems = g->groups * 4 * p->mpan * mr * p->cig;
    p->vb_elems = ig_round_up(4 * p->cig * nr, 16);
    p->mb_elems = ig_round_up(4 * p->mpan * mr * nr, 16);
    p->es_elems = ig_round_up(2 * nr + 2 * (int64_t)lanes, 16);
    p->sp_elems = w1_pow2(p->d) ? ig_round_up(2 * p->d * p->Lp, 16) : 0;
    p->per_thread = p->vb_elems + p->mb_elems + cc_max64(p->es_elems, p->sp_elems);
    /* images per chunk: their phase rows (and outputs by phase) within
     * W1_XP_BYTES and, beside U and the buffers of as many threads as the
     * CPUs, within the workspace cap (0: not one image fits) */
    const int64_t yimg = p->d > 1 ? g->c_out * p->d * 2 * p->nqa : 0;
    const int64_t img_elems = g->c_in * p->d * p->Lp + yimg;
    const int64_t fixed = ig_round_up(p->ap_elems * es, 64) + 4096;
    const int64_t room = cc_min64(W1_XP_BYTES, CC_WORKSPACE_CAP - fixed -
                                                   (int64_t)cc_split_threads() * p->per_thread * es);
    p->nimg = room > 0 ? cc_min64(g->batch, room / es / cc_max64(1, img_elems)) : 0;
    const int64_t nimg = cc_max64(1, p->nimg);
    p->xp_elems = ig_round_up(nimg * g->c_in * p->d * p->Lp + 4 * (int64_t)lanes + 4, 16);
    p->yp_elems = ig_round_up(nimg * yimg, 16);
    /* (the split depends on the problem only: parallel.h) */
    const int64_t items = g->groups * cc_ceil_div(nimg * p->timg, nr);
    p->nt = cc_threads_for(cc_geom_macs(g), CC_GRAIN_GEMM, items, p->nt);
    /* fewer threads where their buffers would pass the workspace cap */
    const int64_t shared = fixed + (p->xp_elems + p->yp_elems) * es;
    if (p->nt > 1 && shared + (int64_t)p->nt * p->per_thread * es > CC_WORKSPACE_CAP)
        p->nt = (int)cc_max64(1, (CC_WORKSPACE_CAP - shared) / (p->per_thread * es));
}

/* A run: tiles [qa, qa + nq) of phase a of chunk image n, panel columns
 * [j0, j0 + nq). */
typedef struct w1_run {
    int64_t n, a, qa, nq, j0;
} w1_run;

/* The runs of the panel of NR tiles from chunk tile t0 (tiles numbered
 * over (image, phase, tile)); the count. */
static inline int w1_panel_runs(const w1_plan *p, int64_t t0, int64_t ttot,
                                w1_run *runs) {
    const int64_t tend = cc_min64(t0 + p->nr, ttot);
    int k = 0;
    for (int64_t t = t0; t < tend; ++k) {
        w1_run *r = runs + k;
        r->n = t / p->timg;
        int64_t u = t - r->n * p->timg, a = 0, tq = 0;
        for (; a < p->d; ++a, u -= tq) {
            tq = cc_ceil_div(w1_phase_len(p->OL, p->d, a), 2);
            if (u < tq) break;
        }
        r->a = a;
        r->qa = u;
        r->nq = cc_min64(tq - u, tend - t);
        r->j0 = t - t0;
        t += r->nq;
    }
    return k;
}

/* 1 when a chunk of nn images runs image by image: each thread takes whole
 * images through the three steps (phase rows, panels, outputs), so what a
 * step writes is read by the thread that wrote it.  The shared schedule
 * (every step split over all the chunk's rows or panels) hands each
 * thread's phase rows and outputs to the others between the steps; where
 * the cores share no cache that moved the chunk between them twice a call
 * (AMD EPYC Zen 4, two cores 170 ns apart: TCN's 4 x 128 x 1024 layer at
 * two threads 2.65 ms against 1.58 ms with the cores 30 ns apart).  Whole
 * images balance the threads when they divide evenly, or are at least 4
 * a thread. */
static inline int w1_by_image(const w1_plan *p, int64_t nn) {
    return p->nt > 1 && nn >= p->nt && (nn % p->nt == 0 || nn >= 4 * (int64_t)p->nt);
}

/* -1 where one image's phase rows would not fit a chunk. */
static inline int64_t w1_plan_bytes(const w1_plan *p, int64_t es) {
    if (p->nimg < 1) return -1;
    return ig_round_up(p->ap_elems * es, 64) + ig_round_up(p->xp_elems * es, 64) +
           ig_round_up(p->yp_elems * es, 64) +
           (int64_t)p->nt * p->per_thread * es + 64;
}
#endif
