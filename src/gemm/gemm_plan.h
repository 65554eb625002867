/*
 * How a GEMM convolution is split into work: shared by the kernels and by
 * the *_workspace functions, so the scratch size asked for is the one used.
 *
 * A work item is (block of nb images, group, column tile, channel chunk).
 *  - Column tiles keep one im2col tile near CC_TILE_BYTES, so it is still
 *    in L2 when the GEMM packs it.
 *  - When an image has few output positions (P small: late ResNet stages,
 *    DCGAN generators), nb > 1 images share one GEMM, so it has enough
 *    columns to run at speed and the weight is packed once per block.
 *  - Channel chunks (output channels for fwd/wgrad, input channels for the
 *    adjoint) split an item further when there are too few to keep the
 *    threads busy.
 * The split depends on the problem and on cc_split_threads() (core/parallel.h),
 * never on the thread count of the call, so every GEMM has the same blocks
 * whichever thread runs it and the result is the same for any thread count.
 * The items run in an OpenMP loop on cc_threads_for(...) threads (none when
 * that is one), every GEMM single-threaded.
 */
#ifndef CC_GEMM_PLAN_H
#define CC_GEMM_PLAN_H

#include <stdint.h>

#include "cconv.h"
#include "core/parallel.h"

/* Per-thread im2col tile target.  Tiles that stay in L2 while the GEMM packs
 * them measured 10-15% faster than whole-image tiles on ResNet 3x3 and C3D
 * layers (1 thread, AMD EPYC, OpenBLAS Haswell kernels). */
#define CC_TILE_BYTES ((int64_t)1 << 20)
/* im2col/col2im's padded-plane form (im2col.inc): planes of at most
 * CC_PAD_PLANE_MAX padded elements with output lines of at most
 * CC_PAD_LINE_MAX; longer lines go line by line (col2im: in gather form
 * where the whole output is one block, col2im_gather.inc). */
#define CC_PAD_PLANE_MAX 4096
#define CC_PAD_LINE_MAX 16
/* Images are batched into one GEMM while P * nb stays under this. */
#define CC_SMALL_COLS 384
/* Images of CC_SMALL_COLS to CC_MID_COLS columns are batched too (the
 * forward's plan), up to CC_MID_BLOCK_COLS columns a GEMM: each GEMM packs
 * the whole weight and ends in a partial micro-panel, which 2-4 images
 * share instead of each paying them (Zen 4, the 1-D k2 stride-2 layer, 4 x
 * 500 columns, float32: 0.95-0.97 of the forward's time at 1 thread,
 * 0.98-0.99 at 2; float64, on OpenBLAS, 1.00 / 1.01). */
#define CC_MID_COLS 1024
#define CC_MID_BLOCK_COLS 2048
/* ... and while the batched im2col buffer stays under this. */
#define CC_BATCH_BYTES ((int64_t)8 << 20)
/* With several threads, blocks as small as this many columns are preferred
 * to fewer, larger blocks split by output channels. */
#define CC_MIN_BLOCK_COLS 96

typedef struct cc_plan {
    int omp;        /* 1: OpenMP over items, 0: in order on the calling thread */
    int nt;         /* threads (the caller's count until cc_plan_chunks) */
    int64_t want;   /* items the split aims for (cc_items_wanted) */
    int direct;     /* in place (CC_M_GEMM_1X1), 1x1, nb == 1: no im2col */
    int64_t kk;     /* taps per channel: k0*k1*k2 */
    int64_t cig;    /* input channels per group */
    int64_t cog;    /* output channels per group */
    int64_t P;      /* output positions per image */
    int64_t nin;    /* input positions per image */
    int64_t nb;     /* images per item */
    int64_t nblocks;
    int64_t ncols;  /* columns per tile (nb > 1: nb * P, one tile) */
    int64_t ntiles;
    int64_t chunk;  /* channels per chunk */
    int64_t nchunks;
    int64_t items;  /* nblocks * groups * ntiles * nchunks */
    int64_t ws_per_thread; /* elements */
    int64_t ws_threads;    /* per-thread slabs */
    int64_t nseg;   /* weight gradient: segments of the reduction (partial sums) */
    int64_t pps;    /* weight gradient: (block, tile) pairs per segment */
} cc_plan;

static inline int64_t cc_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t cc_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t cc_max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* A geometry the kernels can run: positive groups dividing both channel
 * counts, non-negative sizes, positive kernel, stride and dilation. */
static inline int cc_geom_valid(const cc_geom *g) {
    if (!g || g->batch < 0 || g->groups < 1 || g->c_in < 0 || g->c_out < 0) return 0;
    if (g->c_in % g->groups || g->c_out % g->groups) return 0;
    for (int d = 0; d < 3; ++d)
        if (g->in[d] < 0 || g->out[d] < 0 || g->k[d] < 1 || g->stride[d] < 1 ||
            g->dil[d] < 1 || g->pad[d] < 0)
            return 0;
    return 1;
}

/* The input elements n consecutive outputs of dimension d read: every
 * tap's reach, with the stride.  cc_rows_in and cc_cols_in: a tile's R
 * output rows and Wt output columns (the bands of the implicit GEMM and of
 * the shift method); im2col's padded small planes, whole dimensions. */
static inline int64_t cc_reach_in(const cc_geom *g, int d, int64_t n) {
    return (n - 1) * g->stride[d] + (g->k[d] - 1) * g->dil[d] + 1;
}
static inline int64_t cc_rows_in(const cc_geom *g, int64_t R) { return cc_reach_in(g, 1, R); }
static inline int64_t cc_cols_in(const cc_geom *g, int64_t Wt) { return cc_reach_in(g, 2, Wt); }

static inline int cc_is_1x1(const cc_geom *g) {
    for (int d = 0; d < 3; ++d)
        if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0 || g->in[d] != g->out[d])
            return 0;
    return 1;
}

/* Non-overlapping patches: every kernel dim equal to its stride, no
 * padding, dilation 1 (ViT / ConvNeXt patch embeddings, 2x2 stride-2
 * downsampling).  im2col is then a permutation of x, each element copied
 * once, and the product one GEMM. */
static inline int cc_is_patch(const cc_geom *g) {
    for (int d = 0; d < 3; ++d)
        if (g->k[d] != g->stride[d] || g->pad[d] != 0 || (g->k[d] > 1 && g->dil[d] != 1))
            return 0;
    return 1;
}

/* Patches that cover x exactly (in = out * stride in every dim): the
 * adjoint puts each element of x in one product's element, with no sum
 * over taps and none left over. */
static inline int cc_taps_tile(const cc_geom *g) {
    if (!cc_is_patch(g)) return 0;
    for (int d = 0; d < 3; ++d)
        if (g->in[d] != g->out[d] * g->stride[d]) return 0;
    return 1;
}

/* Common fields and the image batching.  in_place: the method is
 * CC_M_GEMM_1X1, whose GEMMs read x (and write the adjoint's x) in place
 * where a work item holds one image; CC_M_IM2COL always copies.  mid: the
 * forward's plan, which batches images of up to CC_MID_COLS columns where
 * it copies anyway (the adjoint would add a copy of y's rows, the weight
 * gradient change its reduction). */
static inline void cc_plan_common(const cc_geom *g, int nthreads, int64_t elsize,
                                  int in_place, int mid, cc_plan *pl) {
    pl->nt = nthreads < 1 ? 1 : nthreads;
    pl->want = cc_items_wanted(cc_geom_macs(g), CC_GRAIN_GEMM);
    pl->nseg = 1;
    pl->pps = 0;
    pl->kk = g->k[0] * g->k[1] * g->k[2];
    pl->cig = g->c_in / g->groups;
    pl->cog = g->c_out / g->groups;
    pl->P = g->out[0] * g->out[1] * g->out[2];
    pl->nin = g->in[0] * g->in[1] * g->in[2];
    const int64_t K = pl->cig * pl->kk;
    int64_t nb = 1;
    const int64_t upto = mid && !(in_place && cc_is_1x1(g)) ? CC_MID_COLS : CC_SMALL_COLS;
    if (g->batch > 1 && pl->P > 0 && pl->P < upto) {
        const int64_t cols = pl->P < CC_SMALL_COLS ? CC_SMALL_COLS : CC_MID_BLOCK_COLS;
        nb = cc_min64(g->batch, cc_ceil_div(cols, pl->P));
        int64_t cap = K > 0 ? CC_BATCH_BYTES / elsize / (K * pl->P) : nb;
        nb = cc_max64(1, cc_min64(nb, cap));
        /* whole vectors of columns: up to twice the images where that
         * makes the block's columns a multiple of a 64-byte vector.  The
         * last micro-panel of a block ends in a vector part-used (ViT-B/16:
         * 196 patches, 2 images are 24.5 vectors), and fewer, larger
         * blocks pack the weight fewer times (Zen 4, 8 images: 4 images a
         * block 0.98 of the time of 2) */
        const int64_t lanes = 64 / elsize;
        for (int64_t m = nb + 1; (nb * pl->P) % lanes && m <= 2 * nb; ++m)
            if (m <= g->batch && m <= cap && (m * pl->P) % lanes == 0) nb = m;
        /* a block per split thread where blocks keep CC_MIN_BLOCK_COLS
         * columns: otherwise the plans split one block's output channels
         * into chunks, and every chunk redoes the whole block's im2col */
        const int64_t split = cc_ceil_div(pl->want, 2);
        const int64_t per_thread = cc_ceil_div(g->batch, split);
        if (split > 1 && per_thread < nb && per_thread * pl->P >= CC_MIN_BLOCK_COLS)
            nb = per_thread;
        /* equal blocks: 8 images at nb = 6 would be blocks of 6 and 2, and
         * the static schedule gives one thread three times the other's work */
        nb = cc_ceil_div(g->batch, cc_ceil_div(g->batch, nb));
    }
    pl->nb = nb;
    pl->nblocks = cc_ceil_div(g->batch, nb);
    pl->direct = in_place && nb == 1 && cc_is_1x1(g);
}

/* Items the plans split further: blocks of images x groups. */
static inline int64_t cc_plan_base(const cc_geom *g, const cc_plan *pl) {
    return cc_max64(1, pl->nblocks * g->groups);
}

/* Items wanted: two per split thread, none below a grain of work. */
static inline int64_t cc_plan_want(const cc_plan *pl) { return pl->want; }

/* n channels in nch chunks; the items (blocks x groups x ntiles x chunks)
 * and the threads that runs them: the caller's count, within what the items
 * and the work allow. */
static inline void cc_plan_chunks(const cc_geom *g, int64_t n, int64_t nch, int64_t ntiles,
                                  cc_plan *pl) {
    pl->chunk = n > 0 ? cc_ceil_div(n, nch) : 1;
    pl->nchunks = n > 0 ? cc_ceil_div(n, pl->chunk) : 1;
    pl->items = pl->nblocks * g->groups * ntiles * pl->nchunks;
    pl->nt = cc_threads_for(cc_geom_macs(g), CC_GRAIN_GEMM, pl->items, pl->nt);
    pl->omp = pl->nt > 1;
}

/* Items the forward wants: cc_plan_want's two per split thread, but one for
 * a 1x1 layer (kk == 1: its GEMMs read the input in place, or an im2col
 * that is a strided copy of it).  Such items share little or no im2col, and every cut makes a
 * GEMM read an operand again (a column tile the weight, a chunk of output
 * channels the input) and run on smaller blocks; so the items are cut only
 * along the operand that is cheaper to read again (the weight where there
 * are fewer output channels than positions) and only as far as the
 * threads need.  Intel Xeon (AVX-512), one image of ResNet-50's 1024 ->
 * 256 1x1 at 14x14: 4 items of 128 x 98 took 1.16 / 1.28 of the time of 2
 * of 128 x 196 at 1 / 2 threads; its 512 -> 1024 stride-2 1x1 on 28x28
 * (im2col) 1.22 / 1.19. */
static inline int64_t cc_plan_want_fwd(const cc_plan *pl) {
    return pl->kk == 1 && pl->want > 1 ? cc_max64(1, pl->want / 2) : pl->want;
}

/* Column tiles over output positions (forward and weight gradient): a
 * block of nb small images is one tile; one image is cut into tiles whose
 * im2col stays near CC_TILE_BYTES, and into more (of at least 96 columns)
 * when there are fewer than `want` items (fwd1x1: the forward of a 1x1
 * layer, cut only with fewer output channels than positions). */
static inline void cc_plan_tiles(const cc_geom *g, int64_t elsize, int64_t want, int fwd1x1,
                                 cc_plan *pl) {
    const int64_t K = pl->cig * pl->kk;
    const int64_t base = cc_plan_base(g, pl);
    const int64_t P = pl->P > 0 ? pl->P : 1;
    if (pl->nb > 1) {
        pl->ncols = pl->nb * P;
        pl->ntiles = 1;
    } else {
        int64_t maxcols = P;
        if (!pl->direct && K > 0)
            maxcols = cc_min64(P, cc_max64(64, CC_TILE_BYTES / elsize / K));
        int64_t ntiles = cc_ceil_div(P, maxcols);
        if (want > 1 && base * ntiles < want && (!fwd1x1 || pl->cog < P)) {
            int64_t t = cc_min64(cc_ceil_div(want, base), cc_max64(1, P / 96));
            if (t > ntiles) ntiles = t;
        }
        pl->ncols = cc_ceil_div(P, ntiles);
        pl->ntiles = cc_ceil_div(P, pl->ncols);
    }
}

/* Forward: tiles over output positions, chunks over output channels (each
 * chunk redoes its tile's im2col, cheap next to the GEMM when it is needed
 * at all: few, small images). */
static inline void cc_plan_cols(const cc_geom *g, int nthreads, int64_t elsize, int in_place,
                                cc_plan *pl) {
    cc_plan_common(g, nthreads, elsize, in_place, 1, pl);
    const int64_t want = cc_plan_want_fwd(pl);
    cc_plan_tiles(g, elsize, want, pl->kk == 1, pl);
    const int64_t K = pl->cig * pl->kk;
    const int64_t base = cc_plan_base(g, pl);
    int64_t nch = 1;
    /* (blocks of small images that divide evenly over the split threads
     * are not cut by channels: each thread makes its own blocks' im2col and
     * GEMMs.  Cut, a block's im2col was shared by the threads (made by all,
     * read by all), and where the cores share no cache that moved ViT's 4.8
     * MB column buffer between them on every call) */
    const int whole = pl->nb > 1 && (base * pl->ntiles) % cc_split_threads() == 0;
    if (want > 1 && base * pl->ntiles < want && pl->cog >= 32 && !whole)
        nch = cc_max64(1, cc_min64(cc_ceil_div(want, base * pl->ntiles), pl->cog / 16));
    cc_plan_chunks(g, pl->cog, nch, pl->ntiles, pl);
    if (pl->nb > 1)
        pl->ws_per_thread = (K + pl->chunk) * pl->ncols; /* col + result/gather */
    else
        pl->ws_per_thread = pl->direct ? 0 : K * pl->ncols;
    pl->ws_threads = pl->omp ? pl->nt : 1;
}

/* Weight gradient: the output split, the reduction in a fixed order.  The
 * tiles are cut as the forward's for two items per split thread (1x1
 * layers too); an item is (segment, group, chunk of input
 * channels) and runs the (block, tile) pairs of its segment in order, its
 * GEMMs adding into its columns of the weight gradient (segment 0) or of
 * the segment's partial sum, which are added in segment order at the end.
 * A chunk's im2col holds only its channels' rows and its GEMM writes only
 * their columns, so chunks repeat no work; they come first, while they keep
 * CC_WGRAD_MIN_ROWS rows, and segments (a weight-sized partial sum each)
 * where groups and chunks are still too few.  Chunks over output channels
 * made every chunk redo its tile's whole im2col (2x64x7x7, 7x7 kernel: 4
 * chunks, im2col half the time, 3.0 ms against torch's 0.62). */
#define CC_WGRAD_MIN_ROWS 64
static inline void cc_plan_wgrad(const cc_geom *g, int nthreads, int64_t elsize, int in_place,
                                 cc_plan *pl) {
    cc_plan_common(g, nthreads, elsize, in_place, 0, pl);
    const int64_t want = cc_plan_want(pl);
    cc_plan_tiles(g, elsize, want, 0, pl);
    const int64_t pairs = cc_max64(1, pl->nblocks * pl->ntiles);
    int64_t nch = 1;
    if (want > 1 && g->groups < want && pl->cig > 1)
        nch = cc_max64(1, cc_min64(cc_ceil_div(want, g->groups),
                                   pl->cig * pl->kk / CC_WGRAD_MIN_ROWS));
    nch = cc_min64(nch, cc_max64(1, pl->cig));
    pl->chunk = pl->cig > 0 ? cc_ceil_div(pl->cig, nch) : 1;
    pl->nchunks = pl->cig > 0 ? cc_ceil_div(pl->cig, pl->chunk) : 1;
    int64_t nseg = 1;
    if (want > 1 && g->groups * pl->nchunks < want)
        nseg = cc_min64(pairs, cc_ceil_div(want, g->groups * pl->nchunks));
    const int64_t wsz = g->c_out * pl->cig * pl->kk;
    while (nseg > 1 && (nseg - 1) * wsz * elsize > CC_WORKSPACE_CAP / 2) --nseg;
    pl->pps = cc_ceil_div(pairs, nseg);
    pl->nseg = cc_ceil_div(pairs, pl->pps); /* no empty segment */
    pl->items = pl->nseg * g->groups * pl->nchunks;
    pl->nt = cc_threads_for(cc_geom_macs(g), CC_GRAIN_GEMM, pl->items, pl->nt);
    pl->omp = pl->nt > 1;
    const int64_t rows = pl->chunk * pl->kk;
    if (pl->nb > 1)
        pl->ws_per_thread = (rows + pl->cog) * pl->ncols; /* col + gy gather */
    else
        pl->ws_per_thread = pl->direct ? 0 : rows * pl->ncols;
    pl->ws_threads = pl->omp ? pl->nt : 1;
}

/* Adjoint: chunks over input channels, so two items never add into the same
 * image rows; column tiles run in order inside an item. */
static inline void cc_plan_adj(const cc_geom *g, int nthreads, int64_t elsize, int in_place,
                               cc_plan *pl) {
    cc_plan_common(g, nthreads, elsize, in_place, 0, pl);
    const int64_t base = cc_plan_base(g, pl), want = cc_plan_want(pl);
    const int64_t P = pl->P > 0 ? pl->P : 1;
    int64_t nch = 1;
    if (want > 1 && base < want && pl->cig > 1)
        nch = cc_min64(pl->cig, cc_ceil_div(want, base));
    cc_plan_chunks(g, pl->cig, nch, 1, pl); /* column tiles run inside an item */
    const int64_t rows = pl->chunk * pl->kk;
    if (pl->nb > 1) {
        pl->ncols = pl->nb * P;
        pl->ntiles = 1;
        pl->ws_per_thread = (pl->cog + rows) * pl->ncols; /* y gather + col */
    } else {
        int64_t cols = P;
        if (!pl->direct && rows > 0)
            cols = cc_min64(P, cc_max64(64, CC_TILE_BYTES / elsize / rows));
        pl->ncols = cols;
        pl->ntiles = cc_ceil_div(P, cols);
        pl->ws_per_thread = pl->direct ? 0 : rows * pl->ncols;
    }
    pl->ws_threads = pl->omp ? pl->nt : 1;
}

/* Work item it -> images [n0, n0 + nbi), group gi, tile, channels
 * [c0, c0 + nc) of a dimension with nchan channels per group. */
typedef struct cc_item {
    int64_t n0, nbi, gi, tile, c0, nc;
} cc_item;

static inline cc_item cc_decode(const cc_geom *g, const cc_plan *pl, int64_t it,
                                int64_t nchan) {
    cc_item d;
    const int64_t ch = it % pl->nchunks;
    int64_t r = it / pl->nchunks;
    d.tile = r % pl->ntiles;
    r /= pl->ntiles;
    d.gi = r % g->groups;
    const int64_t blk = r / g->groups;
    d.n0 = blk * pl->nb;
    d.nbi = cc_min64(pl->nb, g->batch - d.n0);
    d.c0 = ch * pl->chunk;
    d.nc = cc_min64(pl->chunk, nchan - d.c0);
    return d;
}

#endif
