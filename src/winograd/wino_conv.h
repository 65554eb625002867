/*
 * 3x3 stride-1 convolution by Winograd F(2x2, 3x3) (wino_conv.c), on the
 * implicit GEMM's micro-kernels.  Kernel 3x3, stride 1, dilation 1-4 along
 * height and width, any padding and groups, float32 and float64; 3-D
 * layers with any depth taps, depth stride, dilation and padding (a C3D
 * 3x3x3, a (2+1)-D 1x3x3 kernel).
 *
 * 3-D: an output depth od's 2-D products over its KD input planes (depth
 * od * sd - pd + kd * dd, zeros outside the input) are summed by the GEMMs
 * themselves: their reduction index is kc = kd * cig + ci (U: KD * cig
 * columns, V: KD * cig rows, each row the transform of its depth tap's
 * input plane).  The output depths are cut into chunks of odl, and the
 * tiles are numbered over (image, chunk, tile of the plane): a panel's
 * tiles each stand for odl output depths.  A work item transforms the np
 * input planes its chunks read, once each (V laid out [xi][plane j][ci]
 * [tile], plane j of a tile at depth chunk * odl * sd - pd + j, so the B
 * panel of the chunk's l-th depth is KD * cig rows from plane l * sd on:
 * with depth dilation 1 no copy), then runs each of the odl depths'
 * GEMMs and output transform.  odl is as many depths as keep V within
 * IW_V_BYTES, fewer where the items would not keep the threads busy (odl
 * 1: every input plane transformed once per output depth reading it).
 *
 * The output is cut into 2x2 tiles.  With dilation (dh, dw) the output
 * splits into dh x dw phases (rows a + dh i, columns b + dw j), each an
 * undilated 3x3 convolution of the input's phase (rows a - ph + dh i',
 * columns b - pw + dw j'); a phase's tiles are row-major over it (tiles
 * past its bottom or right edge are computed and clipped), and the phases
 * follow each other (a, then b).  With dilation 3 or 4 on an axis the
 * input is first copied phase by phase, a few images at a time where the
 * whole batch's copy would pass the workspace cap (iw_plan: phased, bs), so
 * that each run's windows lie in one phase image at dilation 1.
 * With U = G g G^T (4x4 per output/input channel pair, G = [1 0 0; 1/2 1/2
 * 1/2; 1/2 -1/2 1/2; 0 0 1]) and V = B^T d B of each tile's 4x4 input
 * window d, the 16 elements xi of the transformed domain are 16 matrix
 * products per group, M_xi (cog x tiles) = U_xi (cog x cig) V_xi (cig x
 * tiles), and the tile is Y = A^T M A + bias.  That is 16 multiply-adds per
 * tile and channel pair against 36 for the direct product.
 *
 * U is made once per call in the micro-kernel's A-panel layout (MR rows,
 * k-major), per (group, xi).  The tiles of the batch are numbered image
 * after image, and a work item is (group, panel of NR consecutive tiles,
 * which may span images: a 7x7 image has 16 tiles, and panels of one
 * image's tiles left a third of a 24-wide panel empty): its input transform
 * writes V as B panels, vb[(xi * cig + ci) * NR + j], 16 x ceil(cog / MR)
 * micro-kernel calls write M, m[(xi * cog_pad + co) * NR + j], and the
 * output transform writes the tiles.  OpenMP over the items, a group's
 * panels one after the other (its U stays in cache).  Where the (group,
 * panel) pairs are too few for the threads, an item is a chunk of a
 * panel's output channels (iw_plan_make: msplit).
 */
#ifndef CC_IG_WINO_H
#define CC_IG_WINO_H
#include "cconv.h"
#include "core/cpu.h"
#include "igemm/ig_plan.h"

typedef struct iw_plan {
    int nt, mr, nr;
    int64_t cig, cog, mpan;     /* channels per group; MR panels per group */
    int64_t kd, ck;             /* depth taps; GEMM depth kd * cig */
    int64_t odl, nchunks, np;   /* output depths per chunk; chunks per image;
                                   input planes a chunk reads */
    int64_t dh, dw;             /* dilation: phases */
    int64_t tw, ntiles;         /* 2x2 tiles: most per tile row, per plane */
    int64_t ttotal;             /* tiles of the batch's (image, chunk) planes */
    int64_t npanels, items;     /* NR-tile panels of the batch; items */
    int64_t msplit, mchunk;     /* items per (group, panel); MR panels of each */
    int64_t ap_elems;           /* U, all groups and xi */
    int64_t vb_elems, mb_elems; /* per thread: V and M of one panel */
    int64_t gb_elems;           /* per thread: one depth's B (depth dilation > 1) */
    int64_t es_elems;           /* per thread: 8 split input rows */
    int64_t per_thread;
    int phased;                 /* the input copied phase by phase (iw_phases_) */
    int64_t hq, wq;             /* phased: rows and columns of a phase image */
    int64_t xph_elems;          /* phased: the copy of bs images */
    int64_t bs;                 /* phased: images copied at a time */
    int pf_rows;                /* prefetch the next channel's input rows */
} iw_plan;

/* One group's U from which the threads share each panel (iw_plan_make). */
#define IW_U_SHARED_BYTES ((int64_t)8 << 20)

/* The largest dilation (each axis): the phases are looked up by a loop. */
#define IW_MAX_DIL 4

/* 3x3 stride 1 dilation 1-4 across each plane (height, width); any depth
 * taps, stride, dilation and padding (2-D: depth 1). */
static inline int cc_wino_applies(const cc_geom *g) {
    return cc_geom_valid(g) && g->out[0] > 0 && g->pad[0] >= 0 &&
           g->k[1] == 3 && g->k[2] == 3 && g->stride[1] == 1 && g->stride[2] == 1 &&
           g->dil[1] >= 1 && g->dil[1] <= IW_MAX_DIL && g->dil[2] >= 1 &&
           g->dil[2] <= IW_MAX_DIL && g->pad[1] >= 0 && g->pad[2] >= 0 && g->out[1] > 0 &&
           g->out[2] > 0;
}

/* Tile rows of output phase a (rows a, a + d, ...) of n rows, and tiles per
 * tile row of phase b likewise. */
static inline int64_t iw_phase_tiles(int64_t n, int64_t d, int64_t a) {
    return a < n ? cc_ceil_div(cc_ceil_div(n - a, d), 2) : 0;
}

/* Phase (a, b), tile row th and tile column q of tile t; *twb: the
 * phase's tiles per tile row. */
static inline void iw_locate(const cc_geom *g, const struct iw_plan *p, int64_t t, int64_t *a,
                             int64_t *b, int64_t *th, int64_t *q, int64_t *twb) {
    for (int64_t pa = 0; pa < p->dh; ++pa) {
        const int64_t tha = iw_phase_tiles(g->out[1], p->dh, pa);
        for (int64_t pb = 0; pb < p->dw; ++pb) {
            const int64_t twp = iw_phase_tiles(g->out[2], p->dw, pb), n = tha * twp;
            if (t < n) {
                *a = pa, *b = pb, *th = t / twp, *q = t % twp, *twb = twp;
                return;
            }
            t -= n;
        }
    }
    *a = *b = *th = *q = *twb = 0; /* not reached for t < ntiles */
}

/* floor(a / b), b > 0 */
static inline int64_t iw_fdiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* The most tiles of a panel (NR of every micro-kernel table; the runs of a
 * panel live on the stack). */
#define IW_NR_MAX IG_NR_MAX

/* A run: tiles [qa, qa + nq) of tile row th of phase (a, b) of plane n
 * (image n / nchunks, output depths from n % nchunks * odl),
 * panel columns [j0, j0 + nq).  Window column c of tile q is input column
 * c0 + dw (2 q + c); for q in [qlo, qhi) both of a tile's phase-0 and
 * phase-1 columns lie inside the image. */
typedef struct iw_run {
    int64_t n, a, b, th, qa, nq, j0, c0, qlo, qhi;
} iw_run;

/* The runs of the panel of NR tiles from batch tile t0 (at most NR of
 * them); the count.  Made once per panel: the input transform goes through
 * them per input channel and the output transform per output channel. */
static inline int iw_panel_runs(const cc_geom *g, const struct iw_plan *p, int64_t t0,
                                iw_run *runs) {
    const int64_t tend = cc_min64(t0 + p->nr, p->ttotal), W = g->in[2], dw = p->dw;
    int k = 0;
    for (int64_t t = t0; t < tend; ++k) {
        iw_run *r = runs + k;
        int64_t twb;
        r->n = t / p->ntiles;
        iw_locate(g, p, t - r->n * p->ntiles, &r->a, &r->b, &r->th, &r->qa, &twb);
        r->nq = cc_min64(twb, r->qa + (tend - t)) - r->qa;
        r->j0 = t - t0;
        r->c0 = r->b - g->pad[2] + 2 * dw * r->qa;
        r->qlo = cc_min64(r->nq + 1, cc_max64(0, -iw_fdiv(r->c0, 2 * dw)));
        r->qhi = cc_max64(r->qlo, cc_min64(r->nq + 1, iw_fdiv(W - 1 - dw - r->c0, 2 * dw) + 1));
        t += r->nq;
    }
    return k;
}

/* 1 when runs k and k + 1 of a panel are both short enough for the
 * instruction set's two-run transforms to put them in one vector of
 * `lanes` (wtinr2, wtout2: 2 nq + 2 <= lanes, 7 tiles on 16 lanes). */
static inline int iw_pair(const iw_run *runs, int k, int nruns, int64_t lanes) {
    return k + 1 < nruns && 2 * runs[k].nq + 2 <= lanes && 2 * runs[k + 1].nq + 2 <= lanes;
}

/* Bytes of V per thread that a run of output depths may fill (the
 * planes it shares with the next depth are transformed once).  With
 * 64-byte vectors (16-lane float32, 8-lane float64 kernels: 48- and
 * 24-tile panels) 512 KB held fewer planes than one depth reads at 43
 * channels or more, so every input plane was transformed once per output
 * depth reading it; 2 MB keeps 8-14 depths' planes (past L2: V's panels
 * then stream from L3, which cost less than transforming every plane 3
 * times).  AMD EPYC Zen 4, 1 thread, 7 alternations, 2 MB / 512 KB time:
 * 2x64x16x28x28 3x3x3 0.84-0.85, 1x32x32x64x64 0.94-0.96, C3D's 128
 * channels on 8 depths 1.00 (its items keep one depth); 1.5 MB 0.95.
 * Narrower vectors keep 512 KB (measured on AMD EPYC AVX2). */
#define IW_V_BYTES ((int64_t)512 << 10)
#define IW_V_BYTES_WIDE ((int64_t)2 << 20)

/* 1 when input plane j of an item's run of odl output depths (the first
 * reading depth * sd + tap * dd, j from its first) is read by one. */
static inline int iw_plane_read(int64_t j, int64_t odl, int64_t sd, int64_t dd, int64_t kd) {
    for (int64_t t = 0; t < kd; ++t) {
        const int64_t r = j - t * dd;
        if (r >= 0 && r % sd == 0 && r / sd < odl) return 1;
    }
    return 0;
}

/* Dilation above 2 on an axis: the input is copied phase by phase (the
 * vector transforms read rows in place at dilation 1 and 2 only).  At
 * dilation 2 the copy did not pay: Intel Xeon (model 167), 1 / 2 threads,
 * copy / in place, 1x512x28x28 0.95 / 0.97, 4x256x28x28 0.94 / 1.00,
 * 1x256x33x33 1.01 / 1.08, 1x128x65x65 1.03 / 1.02, 8x64x32x32 1.10 /
 * 1.11.  At dilation 3-4, copy / rows split run by run: 1x512x28x28 d4 0.90
 * / 0.84, 1x256x33x33 d4 0.86 / 0.77, 4x256x28x28 d3 0.85 / 0.88,
 * 1x128x65x65 d4 0.88 / 0.89. */
static inline int iw_phased_wanted(int64_t dh, int64_t dw) { return dh > 2 || dw > 2; }

static inline void iw_plan_make(const cc_geom *g, int nthreads, int mr, int nr, int lanes,
                                int64_t es, iw_plan *p) {
    p->nt = nthreads < 1 ? 1 : nthreads;
    p->mr = mr;
    p->nr = nr;
    p->cig = g->c_in / g->groups;
    p->cog = g->c_out / g->groups;
    p->mpan = cc_ceil_div(p->cog, mr);
    p->kd = g->k[0];
    p->ck = p->kd * p->cig;
    p->dh = g->dil[1];
    p->dw = g->dil[2];
    p->pf_rows = cc_cpu_prefetch_rows(); /* (core/cpu.h: not on Intel, unmeasured there) */
    p->tw = iw_phase_tiles(g->out[2], p->dw, 0);
    p->ntiles = 0;
    for (int64_t a = 0; a < p->dh; ++a)
        for (int64_t b = 0; b < p->dw; ++b)
            p->ntiles += iw_phase_tiles(g->out[1], p->dh, a) * iw_phase_tiles(g->out[2], p->dw, b);
    /* output depths per chunk: the planes V holds, at least one depth's;
     * fewer while the items would be too few for the threads */
    const int64_t OD = g->out[0], sd = g->stride[0], dd = g->dil[0];
    const int64_t span = (p->kd - 1) * dd + 1; /* planes of one depth */
    /* (less on many CPUs, never below IW_V_BYTES: the Vs of as many
     * threads as the CPUs stay within half the workspace cap, which would
     * otherwise cut the threads, from 14 of them on; by the split thread
     * count, like every split, so that a result does not depend on the
     * thread count asked for) */
    const int64_t vsplit = CC_WORKSPACE_CAP / (2 * (int64_t)cc_split_threads());
    const int64_t vbytes = ig_vector_bytes(lanes, es) >= 64
                               ? cc_max64(IW_V_BYTES, cc_min64(IW_V_BYTES_WIDE, vsplit))
                               : IW_V_BYTES;
    const int64_t fit = vbytes / (16 * cc_max64(1, p->cig) * nr * es);
    int64_t odl = sd >= span || fit <= span ? 1 : cc_min64(OD, (fit - span) / sd + 1);
    /* (the split depends on the problem only: parallel.h) */
    const double macs = cc_geom_macs(g);
    const int64_t want = 2 * cc_items_wanted(macs, CC_GRAIN_GEMM);
    for (; odl > 1; --odl) {
        const int64_t planes = g->batch * cc_ceil_div(OD, odl);
        if (g->groups * cc_ceil_div(planes * p->ntiles, nr) >= want) break;
    }
    p->nchunks = cc_ceil_div(OD, odl);
    p->odl = cc_ceil_div(OD, p->nchunks); /* (the same chunks, less past OD) */
    p->np = (p->odl - 1) * sd + span;
    p->ttotal = g->batch * p->nchunks * p->ntiles;
    p->npanels = cc_ceil_div(p->ttotal, nr);
    /* Too few (group, panel) pairs to share evenly among the threads (a
     * 7x7 image's 16 tiles are one panel, a batch of 8 three; 14x14's 49
     * tiles a panel of 48 and one of 1), or a U of >= 8 MiB a group (384
     * float32 channels, 256 float64), which every thread would stream per
     * panel: each panel's output channels are cut into one chunk of MR
     * panels per thread (>= 64 channels each), and the threads go through
     * the panels together, each transforming a share of the input channels
     * into one V (iw_body_shared_).  Each output channel's sums are the
     * same whatever the chunks, so the results do not depend on the thread
     * count.  Intel Xeon (model 167), 2 threads, together / whole panels
     * per thread: 8x512x14x14 0.81, 16x512x7x7 0.76, 1x512x56x56 0.91,
     * 4x512x28x28 dilation 2 0.88, 8x384x14x14 0.86, 4x384x28x28 0.96,
     * float64 8x256x14x14 0.91, 1x256x28x28 0.80, 4x256x28x28 1.01; below
     * 8 MiB float32 4x256x28x28 0.97, 8x256x28x28 1.03, 2x256x56x56 1.05,
     * 8x128x28x28 1.14, float64 1x128x56x56 1.09 keep whole panels.  AMD
     * unmeasured. */
    const int64_t pairs = g->groups * p->npanels;
    const int64_t most = cc_max64(1, p->mpan * mr / 64);
    const int nt_all = cc_threads_for(macs, CC_GRAIN_GEMM, pairs * most, p->nt);
    const int64_t ubytes = 16 * p->mpan * mr * p->ck * es; /* one group's U */
    const int cut = pairs < 4 * (int64_t)nt_all || ubytes >= IW_U_SHARED_BYTES;
    p->msplit = nt_all > 1 && cut ? cc_min64(most, nt_all) : 1;
    p->mchunk = cc_ceil_div(p->mpan, p->msplit);
    p->msplit = cc_ceil_div(p->mpan, p->mchunk); /* no empty chunk */
    p->items = pairs * p->msplit;
    p->nt = cc_threads_for(macs, CC_GRAIN_GEMM, p->items, p->nt);
    p->ap_elems = g->groups * 16 * p->mpan * mr * p->ck;
    p->vb_elems = ig_round_up(16 * p->np * p->cig * nr, 16);
    p->gb_elems = dd > 1 ? ig_round_up(p->ck * nr, 16) : 0;
    p->mb_elems = ig_round_up(16 * p->mpan * mr * nr, 16);
    p->es_elems = ig_round_up(8 * (p->tw + 2), 16); /* >= 2 rows of 2 (tw + 1) */
    p->per_thread = p->vb_elems + p->mb_elems + p->es_elems + p->gb_elems;
    /* Dilation above 2: the input copied phase by phase (iw_phases_), as
     * many images at a time as fit beside U and the threads' buffers
     * within the workspace cap (bs; none fit: the rows are split per run
     * instead).  The two read the same values into the same transforms, so
     * neither the choice nor bs changes a result. */
    p->hq = cc_ceil_div(g->in[1], p->dh);
    p->wq = cc_ceil_div(g->in[2], p->dw);
    p->phased = 0;
    p->xph_elems = 0;
    p->bs = g->batch;
    if (iw_phased_wanted(p->dh, p->dw) && g->batch > 0) {
        const int64_t img = g->c_in * g->in[0] * p->dh * p->dw * p->hq * p->wq;
        const int64_t base =
            ig_round_up(p->ap_elems * es, 64) + (int64_t)p->nt * p->per_thread * es + 128;
        const int64_t bs = (CC_WORKSPACE_CAP - base) / cc_max64(1, (img + 16) * es);
        if (bs >= 1) {
            p->phased = 1;
            p->bs = cc_min64(bs, g->batch);
            p->xph_elems = ig_round_up(p->bs * img, 16);
        }
    }
    /* fewer threads where their buffers would pass the workspace cap */
    const int64_t fixed =
        ig_round_up(p->ap_elems * es, 64) + ig_round_up(p->xph_elems * es, 64) + 64;
    if (p->nt > 1 && fixed + (int64_t)p->nt * p->per_thread * es > CC_WORKSPACE_CAP)
        p->nt = (int)cc_max64(1, (CC_WORKSPACE_CAP - fixed) / (p->per_thread * es));
}

static inline int64_t iw_plan_bytes(const iw_plan *p, int64_t elsize) {
    return ig_round_up(p->ap_elems * elsize, 64) + ig_round_up(p->xph_elems * elsize, 64) +
           (int64_t)p->nt * p->per_thread * elsize + 64;
}
#endif
