/* Work split of the implicit-GEMM forward (ig_conv.inc) and of the
 * grouped weight gradient (ig_wgrad.inc).
 *
 * A work item is (image, group, output depth, tile of output positions,
 * chunk of output channels).  A tile is either R whole output rows or a
 * piece of one row (R = 1, Wt < Wo), so its positions are contiguous in the
 * output plane and a micro-tile of NR positions is NR consecutive outputs.
 * The band holds, per input channel and depth tap, the (R-1)*sh + exth + 1
 * input rows x (Wt-1)*sw + extw + 1 columns the tile reads, zero padded:
 * the packing reads it without bounds checks.  The band is stored by stride
 * phase: input row rr and column cc of a channel and depth tap go to phase
 * block (rr % sh, cc % sw), row rr / sh, column cc / sw, blocks of rows_ph x
 * Wph.  Output position (r, c) then reads element r * Wph + c of the block
 * of each tap, plus the tap's offset: a row of outputs reads consecutive
 * band elements for every tap, whatever the stride. */
#ifndef CC_IG_PLAN_H
#define CC_IG_PLAN_H

#include "cconv.h"
#include <math.h>

#include "gemm/gemm_plan.h"
#include "core/parallel.h"
#include "core/cpu.h"
#include "igemm.h"

#define IG_TILE_POS 512                  /* output positions per tile, target */
/* The target of layers with at most IG_DIRECT_MAX_COG output channels per
 * group (the direct mode's) on 64-byte vectors: their product per tile is
 * small against the tile's fixed costs (its band, the rows it shares with
 * the next tile, the item).  AMD EPYC Zen 4, 7-11 alternations, 2048 / 512
 * time, 1 / 2 threads: ResNeXt 32x4d at 56x56 0.87 / 0.87, 8 channels a
 * group at 28x28 0.96 / 0.89, 4 a group 0.93 / 0.87, MobileNet's stem 0.97
 * / 0.87, 3 -> 16 and 64 -> 16 3x3 0.96 / 0.87-0.98, a 7x7 stride-2 stem
 * to 24 0.99 / 0.96; 8 a group at stride 2 1.03 / 0.97; layers of more
 * output channels unchanged (0.99-1.01), so they keep 512. */
#define IG_TILE_POS_DIRECT 2048
#define IG_BAND_BYTES ((int64_t)1 << 20) /* band buffer cap, per thread */
/* ... and in packed mode by K block (ig_plan_make), where only a block's
 * channels are touched at a time: the cap bounds memory, not a cache, and
 * at 1 MiB it had cut tiles into short ones that end in partial
 * micro-panels (R3D's 3x3x3 stride-2 layer, 64 channels to 4x28x28: tiles
 * of 6 rows, 168 positions = 3 x 48 + 24; at 2 MiB 12 rows, 336 = 7 x 48).
 * Intel Xeon (model 167, AVX-512), 5 alternations of processes, 2 / 1
 * MiB time, 1 / 2 threads: 1x64x8x56x56 -> 128 s2 0.89 / 0.90,
 * 1x128x16x28x28 -> 256 s2 0.87 / 0.88, 1x256x56x56 -> 256 3x3 s2 0.92 /
 * 1.00, 8x256x56x56 0.92 / 0.92, 1x512x28x28 s2 0.94 / 0.93, 2x384x35x35
 * s2 0.84, 1-D 1024 -> 512 k3 s2 on 4000 0.86, 768 -> 768 on 3000 0.91;
 * 1x320x40x40 -> 320 s2 1.03 (10-row tiles, 200 = 4 x 48 + 8), others
 * 0.99-1.02.  AMD EPYC Zen 4 (1 MiB L2), 1 thread, 9 alternations call by
 * call, 1 / 2 MiB time: the R3D layer 1.05, 1x128x16x28x28 1.10, 256 and
 * 512 channels on 56x56 and 28x28 1.03-1.04, 2x384x35x35 1.19, the 1-D
 * layers 1.09-1.10; 1x320x40x40 0.96, 4x128x56x56 0.99.  4 MiB / 2 MiB
 * there 0.95-1.01 (kept at 2: memory). */
#define IG_BAND_BYTES_KBLOCK ((int64_t)2 << 20)
#define IG_KC_BYTES ((int64_t)24 << 10)  /* a packed B micro-panel (kc x NR), in L1 */
/* With 64-byte vectors (AVX-512: NR 48 float32, 24 float64) a K block of
 * 512 rather than 128: each micro-kernel call loads and stores its 8 x 48
 * C tile and fills and drains the FMA pipeline once, and at kc = 128 that
 * cost 8% of the call (AMD EPYC Zen 4, the 8 x 48 kernel alone on data in
 * cache: 107 GFLOP/s at kc 128, 114 at 256, 116 at 1152 with the B panel
 * in L2, against a peak of 117).  kc 512 / 128 time, 7 alternations, AMD
 * EPYC Zen 4: 1 thread conv3d_stem 0.973, wav2vec_conv1d 0.983, r3d s2
 * 0.986, resnet50_stem 0.985, conv1d_k5_64 0.992, resnet50_3x3_s2 0.998,
 * small groups and stems 0.994-1.001; 2 threads 0.92-0.97; float64
 * conv3d_stem 0.959, others 0.977-1.006.  The AVX2 kernels (NR 24: kc 256
 * already) gained nothing from more (0.975-1.009) and keep 24 KiB.  Intel
 * Xeon (AVX-512, 2 FMA units, 48 KiB L1), 3 alternations, kc 512 / 128:
 * 1 thread conv1d_k5_64 0.876, r3d s2 0.927, wav2vec_conv1d 0.929,
 * grouped 3x3 0.939, conv3d_stem 0.954, ResNeXt 14x14 0.953, a 7x7
 * stride-1 layer of 3 channels 0.88, others 0.97-1.01; 2 threads
 * 0.88-1.00; but 7x7 stride-2 layers lost: ResNet-50's stem (8x3x224x224)
 * 1.04-1.21, 16 channels 1.02-1.07 (5x5 stride 2: 0.96-0.97).  Where
 * core/cpu.h's cc_cpu_long_kc (the implicit GEMM and the own GEMM's packed
 * products) and cc_cpu_uk_long_kc (the own GEMM's products that read B in
 * place) say. */
#define IG_KC_BYTES_WIDE ((int64_t)96 << 10)
#define IG_BAND_WHOLE_BYTES ((int64_t)192 << 10) /* packed mode: larger bands go by K block */
/* Packed mode, float32: the weight read in place where each of its panels
 * runs against at most this many B micro-panels over a call.  Intel Xeon
 * (model 167, AVX-512), call by call, in place / packed, 1 / 2 threads:
 * 3x3 layers 1x512x7x7 -> 512 (2 micro-panels) 0.68 / 0.77, 1x512x14x14
 * (5) 0.78 / 0.84, 1x256x14x14 (5) 0.88 / 0.94, 1x1024x14x14 -> 256 0.79,
 * 4x512x7x7 (8) 0.92, 2x512x14x14 (10) 0.89, 8x512x7x7 (16) 0.96 / 0.90,
 * 1-D 512 -> 512 k3 on 200 positions (5) 0.94; more uses 0.96-1.00
 * (4x256x14x14: 20, 2x256x28x28: 34, ResNet-50's 3x3 stride-2 layer and
 * wav2vec's 1-D layer: 1.00-1.01).  Float64 (8-lane rows) lost on 1-D
 * layers (512 -> 512 k3 on 200-1000 positions: 1.04-1.17) and keeps the
 * packed weight. */
#define IG_AIN_MAX_USES 16

typedef struct ig_plan {
    int ok;                     /* 0: the band cannot fit its cap (no igemm); the rest unset */
    int nt, mr, nr;
    int64_t cig, cog, kk, K;
    int64_t R, Wt, nh, nw;      /* tile rows / columns, tiles along H and W */
    int64_t rows_in, win;       /* band rows and columns a full tile reads */
    int64_t rows_ph, Wph;       /* rows and columns of a phase block */
    int64_t CS;                 /* channel stride of the band: kd * sh * sw blocks */
    int64_t band_elems;
    int64_t npos;               /* positions per tile (R * Wt) */
    int64_t kc;                 /* K block */
    int64_t mpan;               /* MR panels per group (ceil(cog / mr)) */
    int64_t chunk, nchunks;     /* MR panels per item, items along channels */
    int64_t items;
    int64_t ap_elems;           /* packed weight, all groups (ain: a zero row of K) */
    int ain;                    /* packed mode: the weight's rows read where they lie */
    int64_t bp_elems;           /* packed B micro-panel (direct: wide C block), per thread */
    int64_t per_thread;         /* elements per thread: band + B block + tile */
    int inplace;                /* direct mode: the output written in place (ukriy) */
    int64_t poff_elems;         /* int64 scratch per thread: positions / in-place stores */
    int direct;                 /* 1: B read in place from the band (no packing) */
    int half;                   /* direct, cog <= MR / 2: the half-row kernel (ukrih) */
    int hrows;                  /* its rows: 1, 2 or 4 (>= cog) */
    int64_t ncol;               /* direct: columns per micro-kernel call (NR, 2 NR when half) */
    int64_t ov;                 /* columns shared by consecutive band rows (zeros) */
    int kblocked;               /* packed mode: the band built per K block (its channels) */
    int64_t wvec;               /* > 0: a row's nw pieces spread its wvec vectors (ig_tile_w) */
    int kwb;                    /* direct mode: B read from the tap-column band (below) */
    int64_t kwb_at, kwb_blk, kwb_cs; /* its offset in the band buffer, block, channel stride */
    int lanes;                  /* the kernel set's vector lanes */
} ig_plan;

/* Tile tw of a row of Wo outputs: its first column and its width.  Pieces
 * of Wt columns (the last the rest), or with wvec the row's wvec vectors
 * spread over the nw pieces (piece tw holds vectors [tw wvec / nw, (tw + 1)
 * wvec / nw), the last ending at Wo). */
static inline void ig_tile_w(const ig_plan *p, int64_t Wo, int64_t tw, int64_t *ow0,
                             int64_t *wt) {
    if (p->wvec > 0) {
        const int64_t a = tw * p->wvec / p->nw * p->lanes;
        const int64_t b = (tw + 1) * p->wvec / p->nw * p->lanes;
        *ow0 = a;
        *wt = (b < Wo ? b : Wo) - a;
        return;
    }
    *ow0 = tw * p->Wt;
    *wt = p->Wt < Wo - *ow0 ? p->Wt : Wo - *ow0;
}

/* A forward work item's place: its chunk of output-channel panels, its
 * tile (tw, th: column piece and row block), output depth, group and
 * image; the tile's first output row and rows, first column and width.
 * Items run chunk fastest, then tw, th, depth, group, image. */
typedef struct {
    int64_t ch, tw, th, od, gi, n;
    int64_t oh0, rows, ow0, cols;
} ig_item_at;

static inline ig_item_at ig_item_decode(const cc_geom *g, const ig_plan *p, int64_t it) {
    ig_item_at a;
    int64_t r = it;
    a.ch = r % p->nchunks; r /= p->nchunks;
    a.tw = r % p->nw; r /= p->nw;
    a.th = r % p->nh; r /= p->nh;
    a.od = r % g->out[0]; r /= g->out[0];
    a.gi = r % g->groups;
    a.n = r / g->groups;
    a.oh0 = a.th * p->R;
    a.rows = p->R < g->out[1] - a.oh0 ? p->R : g->out[1] - a.oh0;
    ig_tile_w(p, g->out[2], a.tw, &a.ow0, &a.cols);
    return a;
}

/* Few output channels per group: packing B would cost about as
 * much as the product itself (each packed element is used by cog/MR micro-
 * kernel calls only), so the micro-kernel reads the band directly.  Output
 * positions then run over the band's "wide" rows (pitch Wph; the last
 * columns of each row are computed and dropped). */
#define IG_DIRECT_MAX_COG 32
/* With vectors of at most 256 bits (AVX2, NEON, scalar) the direct mode
 * also runs, up to 256 output channels per group (its wide C block,
 * channels x tile, then stays within L2: 512 channels of 5x5 on 28x28 took
 * 1.03), whenever the wide rows waste at most 1/8 of the pitch (or the
 * tiles are one row: 1-D layers, pieces of long rows):
 *   - stride-1 layers.  Measured, AMD EPYC AVX2, 2 threads, 3
 *     alternations, direct / packed time: float32 1-D 0.87-0.98 (64-512
 *     channels, k 3-9, dilation 1 and 4), 3-D 0.82-0.93, 2-D 0.83-1.01
 *     (5x5/7x7 on 28x28, 3x3 on 40x40-112x112, dilations 5-6); float64
 *     0.78-0.95; but a 1x7 kernel on 17x17 (15% of the pitch wasted) 1.06;
 *   - strided layers with at most 4 input channels per group (stems: 3
 *     colour channels, large kernels): ResNet-50's 7x7 stride-2 stem
 *     0.73-0.74, a 4x4 stride-4 patch embedding 0.68-0.82, a 3x7x7
 *     (1, 2, 2) video stem 0.92; other strided layers lost (8-48 channels
 *     of 3x3 stride 2 0.93-1.07, 64-512 channels 1.06-1.23, wav2vec 1.22).
 * 64-byte vectors: IG_DIRECT_WIDE_MAX_COG_64. */
#define IG_DIRECT_WASTE_DEN 8
/* Packing B per kept column and tap, in multiply-adds of the product
 * (below: when the direct mode's dropped columns cost more). */
#define IG_PACK_COST 16.0
#define IG_DIRECT_WIDE_MAX_COG 256
/* With 64-byte vectors (16-lane float32, 8-lane float64) the same for
 * stride-1 layers up to 128 output channels.  AMD EPYC Zen 4, 7-15
 * alternations, direct / packed time, 1 / 2 threads: 1-D k3 dilation 4 128
 * channels 0.96 / 0.95, k5 64 channels 0.97 / 0.97; 1 thread: 3x3 16 -> 64
 * on 112x112 0.94, 1x3x3 48 -> 64 0.96, 128 channels 5x5 1.00, float64
 * 0.94-1.00; but 250 channels 5x5 1.01.  Strided stems stay packed: a 7x7
 * stride-2 one 0.96 at 1 thread but 1.035 at 2, 4x4 stride-4 patches to
 * 96 and 128 channels 1.01 and 1.05. */
#define IG_DIRECT_WIDE_MAX_COG_64 128
#define IG_DIRECT_STRIDED_MAX_CIG 4
/* ... and on 64-byte vectors for float32 stems (strided, at most 4 input
 * channels) whose output rows have at least IG_DIRECT_STEM_MIN_WO columns,
 * where core/cpu.h's cc_cpu_ig_stem_direct says (every CPU; its figures
 * on AMD Zen 4 there).
 * Intel Xeon (model 167, AVX-512), direct / packed time, the two
 * alternating call by call in one process (process against process the
 * scatter here is +-5%, which had hidden it), 1 / 2 threads: ResNet-50's
 * 7x7 stride-2 stem 0.91-0.94 / 0.96, the 3x7x7 (1, 2, 2) video stem
 * 0.96-0.99 / 0.97, ConvNeXt's 4x4 stride-4 patches 0.95-1.02 / 0.96-1.02,
 * 3x3 stride 2 on 224x224 and 128x128 images 0.90 / 0.93 and 0.88 /
 * 0.97, 5x5 stride 2 0.94, 4x4 stride-4 patches to 128 channels 0.98-0.99;
 * but 7x7 stride 2 on 128x128 images (64 output columns) 1.00-1.04 / 1.03,
 * and 32 output columns 1.01-1.09 (below the bound).  float64 lost
 * (ResNet-50's stem 1.07, the patches 1.11) and stays packed. */
#define IG_DIRECT_STEM_MIN_WO 48
/* A float32 stem's direct-mode tiles read a band per column tap
 * (ig_plan_make_r_: kwb) where their computed columns per output exceed
 * those of tiles of whole micro-tiles over that band by this fraction */
#define IG_KWB_MIN_WASTE 0.06
/* The weight gradient of an ungrouped convolution runs on igemm up to this
 * many output channels (ig_wgrad.c). */
#define IG_WGRAD_UNGROUPED_MAX_COG 8

static inline int64_t ig_round_up(int64_t a, int64_t b) { return cc_ceil_div(a, b) * b; }
/* a piece of a row: a whole number of NR-position micro-panels, at least one */
static inline int64_t ig_round_down_nr_(int64_t w, int64_t nr) { return w < nr ? w : w / nr * nr; }
/* Bytes of one vector of the kernel set (lanes of elsize bytes): 64 on the
 * 16-lane float32 and 8-lane float64 kernels (AVX-512), which several rules
 * of the plans tell apart from the narrower sets. */
static inline int64_t ig_vector_bytes(int lanes, int64_t elsize) { return (int64_t)lanes * elsize; }
/* The K block of a micro-kernel call with NR columns: IG_KC_BYTES_WIDE's
 * (512 rows) on 64-byte vectors where `wide`, else IG_KC_BYTES's; at
 * least 16 rows.  The implicit GEMM (ig_kc: cc_cpu_long_kc) and the own
 * GEMM (gemm/uk_gemm.inc: the same, or cc_cpu_uk_long_kc for its products
 * that read B in place) decide `wide`. */
static inline int64_t ig_kc_of(int lanes, int64_t elsize, int64_t nr, int wide) {
    const int64_t bytes =
        ig_vector_bytes(lanes, elsize) >= 64 && wide ? IG_KC_BYTES_WIDE : IG_KC_BYTES;
    return cc_max64(16, bytes / (elsize * nr));
}
static inline int64_t ig_kc(int lanes, int64_t elsize, int64_t nr) {
    return ig_kc_of(lanes, elsize, nr, cc_cpu_long_kc());
}

/* The plan's tiles of R output rows (given Wt and the band's pitch Wph):
 * their count, input rows (whole and per stride phase), a channel's band
 * size (CS) and positions. */
static inline void ig_plan_rows_(const cc_geom *g, int64_t R, ig_plan *p) {
    const int64_t sh = g->stride[1];
    p->R = R;
    p->nh = cc_ceil_div(g->out[1], R);
    p->rows_in = cc_rows_in(g, R);
    p->rows_ph = cc_ceil_div(p->rows_in, sh);
    p->CS = g->k[0] * sh * g->stride[2] * p->rows_ph * p->Wph;
    p->npos = R * p->Wt;
}

/* The plan with tiles of force_r rows where force_r > 0 (ig_plan_make),
 * its band within band_cap bytes */
static inline void ig_plan_make_r_(const cc_geom *g, int nthreads, int64_t elsize, int mr, int nr,
                                   int lanes, int64_t force_r, int64_t band_cap, int kwb_ok,
                                   ig_plan *p) {
    const int64_t Ho = g->out[1], Wo = g->out[2];
    const int64_t exth = (g->k[1] - 1) * g->dil[1], extw = (g->k[2] - 1) * g->dil[2];
    const int64_t sh = g->stride[1], sw = g->stride[2], kd = g->k[0];
    p->nt = nthreads < 1 ? 1 : nthreads;
    p->mr = mr;
    p->nr = nr;
    p->cig = g->c_in / g->groups;
    p->cog = g->c_out / g->groups;
    p->kk = g->k[0] * g->k[1] * g->k[2];
    p->K = p->cig * p->kk;
    const int64_t outer = g->batch * g->groups * g->out[0];
    /* tiles: whole rows when a row is short, else pieces of one row */
    const int64_t tpos = ig_vector_bytes(lanes, elsize) >= 64 && p->cog <= IG_DIRECT_MAX_COG
                             ? IG_TILE_POS_DIRECT
                             : IG_TILE_POS;
    int64_t R, Wt;
    if (Wo >= tpos) {
        /* pieces of whole micro-panels: wav2vec's 799 outputs were two
         * pieces of 400, 432 columns each on NR = 48; 384 + 384 + 31 take
         * 816 */
        R = 1;
        Wt = ig_round_down_nr_(cc_ceil_div(Wo, cc_ceil_div(Wo, tpos)), nr);
    } else {
        Wt = Wo;
        const int64_t nh = cc_max64(1, cc_ceil_div(Ho * Wo, tpos));
        R = cc_ceil_div(Ho, nh);
    }
    /* enough items for the threads: fewer rows, then narrower pieces, but
     * not tiles narrower than a micro-panel (NR positions), which would run
     * mostly padding (a 4x4 output in rows of 4 on NR = 24: 1x96x7x7 s2 ->
     * 192 took 0.52-0.81 ms on 2 threads against 0.29-0.33 on one); the
     * output channels are split below instead */
    /* (the split depends on the problem only, not on the thread count: the
     * tiles decide the micro-tiles and the packing mode: parallel.h) */
    const double macs = cc_geom_macs(g);
    const int64_t want = cc_items_wanted(macs, CC_GRAIN_GEMM), split = cc_ceil_div(want, 2);
    /* Halving the rows must not add more than 10% of micro-panel columns
     * when splitting the output channels instead (chunks of >= 4 MR-row
     * panels, below) gives every thread an item: a 14x14 image in one tile
     * is 196 positions in 240 columns on NR = 48, in two tiles of 7 rows
     * 288.  1x512x14x14 -> 512 on AVX-512, 2 threads, took 8.2 ms on the two
     * tiles (1T: 9.0), torch 3.3. */
    const int64_t max_chunks = cc_ceil_div(p->cog, mr) / 4;
    while (want > 1 && outer * cc_ceil_div(Ho, R) * cc_ceil_div(Wo, Wt) < want) {
        const int64_t R2 = cc_ceil_div(R, 2);
        const double cols = (double)cc_ceil_div(Ho, R) * (double)ig_round_up(R * Wt, nr);
        const double cols2 = (double)cc_ceil_div(Ho, R2) * (double)ig_round_up(R2 * Wt, nr);
        const int chan_split =
            (double)max_chunks * (double)outer * (double)cc_ceil_div(Ho, R) * (double)cc_ceil_div(Wo, Wt) >= (double)split;
        if (R > 1 && R2 * Wt >= nr && (!chan_split || cols2 <= 1.1 * cols)) R = R2;
        else if (R == 1 && Wt > 2 * (int64_t)nr) /* (a tile of several rows is whole rows) */
            Wt = ig_round_down_nr_(cc_ceil_div(Wt, 2), nr);
        else break;
    }
    if (force_r > 0 && R > 1 && Wt == Wo) R = cc_min64(force_r, R);
    /* the band within its cap, sized in double: strides, dilations and
     * padding are parameters, not memory, and a stride of 2^31 made the
     * int64 products wrap (a band of "0" bytes, then a crash).  A band that
     * cannot fit leaves the plan not ok (igemm does not run); one that fits
     * bounds every product below. */
    p->ok = 0;
    for (;;) {
        const double rin = (double)(R - 1) * sh + (double)exth + 1;
        const double win = (double)(Wt - 1) * sw + (double)extw + 1;
        const double blk = ceil(rin / sh) * sh * ceil(win / sw) * sw;
        if ((double)p->cig * kd * blk * elsize <= (double)band_cap) {
            p->ok = 1;
            break;
        }
        if (R > 1) R = cc_ceil_div(R, 2);
        else if (Wt > (int64_t)nr) Wt = cc_ceil_div(Wt, 2);
        else break;
    }
    if (!p->ok) return;
    p->Wt = Wt;
    p->nw = cc_ceil_div(Wo, Wt);
    p->win = cc_cols_in(g, Wt);
    p->Wph = cc_ceil_div(p->win, sw);
    ig_plan_rows_(g, R, p);
    p->band_elems = p->cig * p->CS;
    p->kc = cc_max64(16, cc_min64(p->K, ig_kc(lanes, elsize, nr)));
    p->mpan = cc_ceil_div(p->cog, mr);
    /* the columns consecutive band rows may share in direct mode (stride
     * 1, whole rows: below), and the pitch that mode would run */
    const int64_t pl = g->pad[2], pr = p->win - pl - g->in[2];
    const int64_t ov = sw == 1 && Wt == Wo ? cc_max64(0, cc_min64(pl, pr)) : 0;
    const int64_t pitch = p->Wph - ov;
    p->direct = p->cog <= IG_DIRECT_MAX_COG;
    const int narrow = ig_vector_bytes(lanes, elsize) <= 32;
    /* strided stems on 64-byte vectors: float32, rows of IG_DIRECT_STEM_MIN_WO
     * outputs and more (below) */
    const int stem64 =
        !narrow && elsize == 4 && Wo >= IG_DIRECT_STEM_MIN_WO && cc_cpu_ig_stem_direct();
    if (!p->direct &&
        p->cog <= (narrow ? IG_DIRECT_WIDE_MAX_COG : IG_DIRECT_WIDE_MAX_COG_64) &&
        ((sh == 1 && sw == 1) || ((narrow || stem64) && p->cig <= IG_DIRECT_STRIDED_MAX_CIG)))
        p->direct = R == 1 || (pitch - Wt) * IG_DIRECT_WASTE_DEN <= pitch;
    if (p->direct && R > 1) {
        /* Direct mode computes (R - 1) * pitch + Wt positions for R * Wt
         * outputs: a wide kernel over narrow tiles is mostly dropped
         * columns (a 6x233 kernel on 233-wide rows, one output column in a
         * pitch of 233: 0.4 GFLOP/s, 15x torch's time), and there packing B
         * costs less.  Per tap and column, direct costs about cog
         * multiply-adds, packed about cog + IG_PACK_COST on the columns
         * it keeps (AMD EPYC AVX2, 1 thread, packed / direct time: 2-D
         * tiles at 1.3-2x waste with 4 channels 1.4-2.4, with 16 0.8-1.4,
         * with 32 0.6-1.2; at 33x waste 0.07-0.5). */
        const double wide = (double)ig_round_up((R - 1) * pitch + Wt, nr);
        const double used = (double)ig_round_up(R * Wt, nr);
        if (wide * (double)p->cog > used * ((double)p->cog + IG_PACK_COST)) p->direct = 0;
    }
    /* Direct mode, stride 1, whole rows: a row's right padding and the next
     * row's left padding are both zeros, so the rows may overlap there
     * (pitch win - ov).  The micro-kernel runs over pitch-wide rows, so
     * this drops ov computed-and-discarded columns per row: ResNeXt 14x14,
     * 3x3 pad 1: pitch 15 instead of 16, 216 positions instead of 240 for
     * 196 outputs.  The last row's ov zeros lie past the band (band_elems
     * counts them). */
    p->ov = 0;
    if (p->direct && ov > 0) {
        p->ov = ov;
        p->Wph = pitch;
        ig_plan_rows_(g, R, p);
        p->band_elems = p->cig * p->CS + p->ov;
    }
    /* At most MR / 2 output channels a group (ResNeXt's 4 on the 8-row
     * AVX-512 and NEON kernels, 1-2 on the 4-row AVX2 and scalar ones): the
     * direct mode runs the half-row kernel (ukrih) over twice the columns,
     * none of its multiply-adds on the panel's zero rows.  AMD EPYC Zen 4,
     * half-row / full kernel time, 3 alternations of processes, 1 / 2
     * threads: ResNeXt 32x4d at 56x56 0.61 / 0.63, 4 channels a group at
     * 28x28 0.59 / 0.60, 64 -> 3 3x3 at 128x128 0.55 / 0.57, 64 -> 1 at
     * 256x256 0.60 / 0.61, 1-D 64 -> 4 k5 0.56 / 0.57, 3-D 16 -> 1 0.54 /
     * 0.57; 5 channels (the full kernel) 0.96-1.01.  Its AVX2 kernels (2 x
     * 6 vectors), 1 thread: 64 -> 1 0.73, 32 -> 2 0.67, 3-D 16 -> 1 0.61.
     * It runs the fewest rows of 1, 2, 4 that hold the channels: 1 and 2
     * rows against 4, same machine, 1 / 2 threads: 64 -> 1 3x3 at 256x256
     * 0.62 / 0.66, 32 -> 2 0.62 / 0.67, 1-D 64 -> 1 k9 0.59 / 0.55, 8 -> 1
     * k31 0.54 / 0.54, 16 -> 2 k15 0.57 / 0.61, 3-D 16 -> 1 0.58 / 0.60, 2
     * channels a group 0.67 / 0.82; AVX2's 1 row against 2: 0.90-1.02. */
    p->half = p->direct && 2 * p->cog <= mr;
    p->hrows = p->cog <= 1 ? 1 : p->cog <= 2 ? 2 : 4;
    p->ncol = p->half ? 2 * (int64_t)nr : nr;
    /* Direct mode, strided stems on 64-byte vectors, tiles of whole rows:
     * the micro-kernel runs over the phase blocks' rows, pitch Wph, whose
     * last (kw - 1) dw / sw places a row are computed and dropped (a
     * 3x7x7 (1, 2, 2) video stem's 56-wide rows: pitch 59), and a tile's
     * (R - 1) Wph + Wt wide positions end in a partial micro-tile (8 rows:
     * 469 in 480 columns for 448 outputs).  Where those cost more than
     * IG_KWB_MIN_WASTE over tiles of whole micro-tiles, the tile's phase
     * band is copied once more, into a block per column tap of the tile's
     * width (ig_kwband.inc), and the tiles take the most rows up
     * to R, and at least half, that fill whole micro-tiles: no position
     * dropped.  The same products in the same order: the same bits.  AMD
     * EPYC Zen 4, 9 alternations call by call, with / without, 1 / 2
     * threads: the video stem 0.964 / 0.964 (one clip 0.960 at 1), a 7x7
     * stride-2 stem on 128x128 (64 columns: 512 outputs in 576 columns)
     * 0.966 / 0.970, a 3x7x7 stem on 160x160 0.974 / 0.980; where the
     * waste is small the copies lost (ResNet-50's stem, 2.9%: 1.026;
     * MobileNet's 3x3 stride-2 stem to 32 channels, 1.8%: 1.061; a 5x5
     * stride-2 one to 24 1.056).  The AVX2 kernels lost on the video stem
     * and the 128x128 one alike (1.056: a narrower product per band
     * element) and do not take it.  cc_cpu_ig_kw_band (core/cpu.h)
     * decides. */
    p->kwb = 0;
    p->kwb_at = p->kwb_blk = p->kwb_cs = 0;
    if (kwb_ok && p->direct && !narrow && elsize == 4 && sw > 1 && R > 1 && Wt == Wo &&
        p->Wph > Wt &&
        p->cig <= IG_DIRECT_STRIDED_MAX_CIG && cc_cpu_ig_kw_band()) {
        int64_t Rk = R;
        for (int64_t r = R; 2 * r >= R; --r)
            if ((r * Wt) % p->ncol == 0) {
                Rk = r;
                break;
            }
        /* computed columns per output, as the tiles are and with the band */
        const double cur = (double)ig_round_up((R - 1) * p->Wph + Wt, p->ncol) / (double)(R * Wt);
        const double kwc = (double)ig_round_up(Rk * Wt, p->ncol) / (double)(Rk * Wt);
        if (cur > kwc * (1.0 + IG_KWB_MIN_WASTE)) {
            R = Rk;
            ig_plan_rows_(g, R, p);
            p->kwb = 1;
            p->kwb_blk = p->rows_ph * Wt;
            p->kwb_cs = kd * sh * g->k[2] * p->kwb_blk;
            /* after the phase band, so that the kernel's reads past the
             * band's end fall in the zeroed slack (ig_conv.inc) */
            p->kwb_at = ig_round_up(p->cig * p->CS, 64 / elsize);
            p->band_elems = p->kwb_at + p->cig * p->kwb_cs;
        }
    }
    /* A large band in packed mode is built one K block at a time, the
     * input channels that block reads (ig_conv.inc): blocks of whole
     * channels, or whole channels cut into equal blocks, so that no
     * channel is copied twice.  The whole band of a 128-channel ResNet-50
     * 3x3 stride-2 tile is 0.9 MiB: beside the packed weight it did not
     * stay in a 1 MiB L2, and its copy in and the packing's reads went to
     * the L3.  AMD EPYC Zen 4, AVX-512, block / whole band time, 30
     * alternations: 1 thread resnet50_3x3_s2 0.955, wav2vec_conv1d 0.959,
     * r3d_conv3d_s2 0.953; 2 threads 0.99; stems with bands of 40-120 KiB
     * lost (shorter K blocks of their 49-147 taps: 1.03-1.06), and keep
     * the whole band. */
    /* One row in packed mode cut into pieces: as many pieces as a multiple
     * of the split threads, the row's vectors spread evenly over them
     * (whole micro-panels first, the rest a partial one), rather than
     * pieces of whole micro-panels and a short last one.  wav2vec's 799
     * outputs were pieces of 192 + 192 + 192 + 192 + 31 columns: 4 and 5
     * micro-panels' worth on the two threads of a 2-CPU machine, and 863
     * outputs 8 against 10 (2 threads, 1.12 of torch's time where 768
     * outputs, 4 x 192, took 0.91).  AMD EPYC Zen 4, AVX-512, 11
     * alternations call by call, spread / whole-panel pieces, 2 threads:
     * 512 -> 512 k3 s2 on 1599 and 1727 samples 0.975 and 0.905, 256 ->
     * 256 k5 on 3000 0.960, 512 -> 1024 k3 on 1000 0.977, 128 -> 256 on
     * 5001 0.991, 768 outputs 0.997; 1 thread 0.996-1.003.  The pieces are
     * no wider than Wt, the band sized for it; the split depends on the
     * CPUs, not on the call's threads. */
    p->wvec = 0;
    p->lanes = lanes;
    if (!p->direct && R == 1 && p->nw > 1 && outer * p->nh == 1) {
        const int64_t nsplit = cc_ceil_div(want, 2);
        const int64_t n = cc_ceil_div(p->nw, nsplit) * nsplit;
        const int64_t vec = cc_ceil_div(Wo, lanes);
        if (n <= vec && cc_ceil_div(vec, n) * lanes <= Wt) {
            p->wvec = vec;
            p->nw = n;
        }
    }
    p->kblocked = !p->direct && p->band_elems * elsize > IG_BAND_WHOLE_BYTES;
    if (p->kblocked) {
        if (p->kk <= p->kc)
            p->kc = p->kc / p->kk * p->kk;
        else
            p->kc = cc_ceil_div(p->kk, cc_ceil_div(p->kk, p->kc));
    }
    /* Direct mode over one K block stores the product straight into the
     * output (ukriy): a tile's wide positions are its output positions in
     * rows of pitch Wph, each vector's kept lanes (column < Wt) consecutive
     * outputs (a tile of one row, or of whole rows not overlapping: the
     * padding overlap can make Wph < Wt, see ov above), so the kernel stores
     * them compressed, in place of writing the wide C block that a row copy
     * then moved to y with the bias.  Per thread an offset and a lane mask
     * per vector of wide positions (ig_conv.inc). */
    const int ipl = cc_cpu_ig_inplace();
    p->inplace = p->direct && p->K <= p->kc && (R == 1 || (Wt == Wo && p->Wph >= Wt)) &&
                 (ipl == 1 || (ipl == 2 && ig_vector_bytes(lanes, elsize) >= 64));
    p->poff_elems = p->npos + p->kc;
    if (p->inplace)
        p->poff_elems = cc_max64(p->poff_elems, 2 * (cc_ceil_div((R - 1) * p->Wph + Wt, lanes) + 2));
    /* Split channels only when the tiles alone leave threads idle.  In
     * packed mode into as few chunks as the call's threads share evenly
     * (within 10%): every chunk packs the tile's B again for its panels,
     * and a chunk's sums are the same whatever the chunks, so this one
     * choice may follow the thread count.  Intel Xeon (model 167,
     * AVX-512), call by call against chunks for twice the CPUs, 1 / 2
     * threads: 1x256x14x14 -> 256 3x3 0.90 / 0.89, 1x256x10x10 -> 384 0.89
     * / 0.92, 1x512x14x14 -> 512 0.95 / 0.95, 1x512x7x7 -> 512 0.92 /
     * 0.94, 2x512x7x7 -> 512 0.97 / 0.97.  The direct mode, which reads the
     * band in place (no B to pack again) and claims each thread's next
     * item ahead, keeps chunks for twice the CPUs: with one item a thread,
     * one thread claimed both (1x128x28x28 -> 128 at 2 threads took 1.75x
     * the time). */
    const int64_t base = outer * p->nh * p->nw;
    int64_t nch = 1;
    if (want > 1 && base < want) {
        const int64_t most = cc_max64(1, p->mpan / 4), t = p->nt;
        if (p->direct)
            nch = cc_min64(cc_ceil_div(want, base), most);
        else
            while (nch < most && cc_ceil_div(base * nch, t) * t * 10 > base * nch * 11) ++nch;
    }
    p->chunk = cc_ceil_div(p->mpan, nch);
    p->nchunks = cc_ceil_div(p->mpan, p->chunk);
    p->items = base * p->nchunks;
    p->nt = cc_threads_for(macs, CC_GRAIN_GEMM, p->items, p->nt);
    /* Packed mode reads the weight's rows where they lie (ukra) rather
     * than packing them first where each packed panel would run against
     * few B micro-panels (at most IG_AIN_MAX_USES over the call: small
     * images), the pack then a pass over the weight that its few uses do
     * not repay; float32 (cc_cpu_ig_weight_inplace).  The same products in
     * the same order, but for a last micro-panel of at most IG_TAIL_MAX
     * positions, summed along k by vectors (ukrt: ig_conv.inc). */
    const int64_t uses = g->batch * g->out[0] * p->nh * p->nw * cc_ceil_div(p->npos, nr);
    p->ain = !p->direct && elsize == 4 && uses <= IG_AIN_MAX_USES && cc_cpu_ig_weight_inplace();
    p->ap_elems = p->ain ? p->K : g->groups * p->mpan * mr * p->K;
    /* packed: one B micro-panel (kc x NR, packed just before its calls:
     * ig_conv.inc), and where the weight is read in place the columns of
     * a last micro-panel of a few positions (kc x IG_TAIL_MAX); direct: a
     * wide C block instead (the item's channels x wide positions, whole
     * micro-tiles of ncol), and the band is read up to ncol past its end */
    p->bp_elems = p->direct ? p->chunk * mr * ig_round_up((R - 1) * p->Wph + Wt, p->ncol) + p->ncol
                            : p->kc * (nr + (p->ain ? IG_TAIL_MAX : 0));
    /* band + B block + one MR x NR tile, each rounded to 64 bytes */
    const int64_t al = 64 / elsize;
    p->per_thread = ig_round_up(p->band_elems, al) + ig_round_up(p->bp_elems, al) +
                    ig_round_up((int64_t)mr * nr, al);
    /* fewer threads rather than another method where their buffers would
     * pass the workspace cap (the method must not depend on the count) */
    const int64_t fixed = ig_round_up(p->ap_elems * elsize, 64) + ig_round_up(p->K * 8, 64) + 64;
    const int64_t per = p->per_thread * elsize + ig_round_up(p->poff_elems * 8, 64);
    if (p->nt > 1 && fixed + (int64_t)p->nt * per > CC_WORKSPACE_CAP)
        p->nt = (int)cc_max64(1, (CC_WORKSPACE_CAP - fixed) / per);
}

/* Over an image's tiles of R whole rows of Wo outputs, the packed mode's
 * micro-panels (NR positions, the last of a tile partial) and the columns
 * they compute (each tile's positions rounded up to the lanes: a partial
 * micro-panel runs whole vectors only). */
static inline int64_t ig_tile_cols_(int64_t Ho, int64_t Wo, int64_t R, int64_t q) {
    const int64_t rest = Ho % R;
    return Ho / R * ig_round_up(R * Wo, q) + (rest ? ig_round_up(rest * Wo, q) : 0);
}

/* The forward's plan.  Packed mode, tiles of whole rows: of the row counts
 * from R (the target's) down to 3R/4, the one whose tiles compute the fewest
 * columns in fewer micro-panels (each panel streams the whole packed
 * weight of its K block), where that saves at least 1% of the columns.
 * ResNet-50's 3x3 stride-2 layer (28x28 outputs, NR = 48 on AVX-512) ran
 * tiles of 14 rows, 392 positions: 8 micro-panels and one of 8 columns in a
 * 16-lane vector, 18 panels and 800 columns for 784 outputs; tiles of 12,
 * 12 and 4 rows run 17 and 784.  Intel Xeon (model 167, AVX-512), time
 * with the rule / without, the two alternating call by call in one
 * process: resnet50_3x3_s2 0.967-0.975 at 1 thread, 0.975-0.983 at 2;
 * 2x64x56x56 -> 128 s2 0.948-0.958 / 0.973, 2x256x28x28 -> 256 0.973 /
 * 0.963, 1x96x72x72 -> 160 0.935 / 0.940, 1x32x240x240 -> 64 s2 (120x120
 * outputs) 0.968 / 0.981.  Fewer columns in as many or more panels lost:
 * 35x35 outputs 1.026-1.043 at 1 thread (one image 0.90), 1.02-1.09 at 2
 * (benches/results/heuristics-2026-12-06-intel-xeon-avx512.md). */
static inline void ig_plan_make(const cc_geom *g, int nthreads, int64_t elsize, int mr, int nr,
                                int lanes, ig_plan *p) {
    ig_plan_make_r_(g, nthreads, elsize, mr, nr, lanes, 0, IG_BAND_BYTES, 1, p);
    int64_t cap = IG_BAND_BYTES;
    if (p->ok && !p->direct && p->kblocked) { /* by K block: the larger cap */
        ig_plan q;
        ig_plan_make_r_(g, nthreads, elsize, mr, nr, lanes, 0, IG_BAND_BYTES_KBLOCK, 1, &q);
        if (q.ok && !q.direct && q.kblocked) *p = q, cap = IG_BAND_BYTES_KBLOCK;
    }
    if (!p->ok || p->direct || p->R <= 1 || p->Wt != g->out[2]) return;
    const int64_t Ho = g->out[1], Wo = g->out[2], R0 = p->R;
    const int64_t c0 = ig_tile_cols_(Ho, Wo, R0, lanes), n0 = ig_tile_cols_(Ho, Wo, R0, nr);
    int64_t best = R0, bc = c0;
    for (int64_t R = R0 - 1; 4 * R >= 3 * R0 && R >= 1; --R) {
        const int64_t c = ig_tile_cols_(Ho, Wo, R, lanes);
        if (c < bc && ig_tile_cols_(Ho, Wo, R, nr) < n0) best = R, bc = c;
    }
    if (best == R0 || 100 * bc > 99 * c0) return;
    ig_plan q;
    ig_plan_make_r_(g, nthreads, elsize, mr, nr, lanes, best, cap, 1, &q);
    if (q.ok && !q.direct && q.R == best) *p = q;
}

/* Offset in the band of tap k (input channel, depth/row/column tap) at
 * output position (0, 0): its phase block and place. */
static inline void ig_plan_koff(const cc_geom *g, const ig_plan *p, int64_t *koff) {
    const int64_t sh = g->stride[1], sw = g->stride[2], blk = p->rows_ph * p->Wph;
    if (p->kwb) { /* the tap-column band: block (depth tap, row phase, column tap) */
        int64_t k = 0;
        for (int64_t td = 0; td < g->k[0]; ++td)
            for (int64_t th = 0; th < g->k[1]; ++th) {
                const int64_t rw = th * g->dil[1];
                for (int64_t tw = 0; tw < g->k[2]; ++tw)
                    koff[k++] = p->kwb_at + ((td * sh + rw % sh) * g->k[2] + tw) * p->kwb_blk +
                                (rw / sh) * p->Wt;
            }
        for (int64_t ci = 1; ci < p->cig; ++ci)
            for (int64_t t = 0; t < p->kk; ++t) koff[ci * p->kk + t] = koff[t] + ci * p->kwb_cs;
        return;
    }
    /* one channel's taps, then the others' shifted by the channel stride
     * (a division per tap was 3% of a 1x256x14x14 3x3 call: 2304 taps) */
    int64_t k = 0;
    for (int64_t td = 0; td < g->k[0]; ++td)
        for (int64_t th = 0; th < g->k[1]; ++th) {
            const int64_t rw = th * g->dil[1];
            for (int64_t tw = 0; tw < g->k[2]; ++tw) {
                const int64_t cw = tw * g->dil[2];
                koff[k++] = ((td * sh + rw % sh) * sw + cw % sw) * blk + (rw / sh) * p->Wph +
                            cw / sw;
            }
        }
    for (int64_t ci = 1; ci < p->cig; ++ci)
        for (int64_t t = 0; t < p->kk; ++t) koff[ci * p->kk + t] = koff[t] + ci * p->CS;
}

/* Bytes of workspace: packed weight + tap offsets (int64) + per-thread buffers. */
static inline int64_t ig_plan_bytes(const ig_plan *p, int64_t elsize) {
    return ig_round_up(p->ap_elems * elsize, 64) + ig_round_up(p->K * 8, 64) +
           (int64_t)p->nt * (p->per_thread * elsize + ig_round_up(p->poff_elems * 8, 64)) + 64;
}

/* Weight gradient with few output channels per group (ig_wgrad.inc).
 * The band geometry is the forward's; a work item is (group, chunk of taps)
 * and runs every image and tile of its group, so each weight element is
 * summed by one thread in a fixed order (the result does not depend on the
 * thread count).  Per thread: the band and the vector accumulators (cog
 * rounded up to MRW x the chunk's taps x V). */
typedef struct ig_wplan {
    ig_plan p;
    int nt, mrw, nrw, lanes;
    int64_t nkb, kpad;          /* tap blocks of NRW, taps padded to them */
    int64_t copad;              /* channels per group padded to MRW */
    int64_t chunkb, nchunks;    /* tap blocks per item, items per group */
    int64_t items;
    int64_t acc_elems, per_thread;
} ig_wplan;

static inline void ig_wplan_make(const cc_geom *g, int nthreads, int64_t elsize, int mr, int nr,
                                 int mrw, int nrw, int lanes, ig_wplan *w) {
    /* tiles as for one thread: the same summation order for any count */
    ig_plan_make_r_(g, 1, elsize, mr, nr, lanes, 0, IG_BAND_BYTES, 0, &w->p);
    w->nt = nthreads < 1 ? 1 : nthreads;
    if (!w->p.ok) return;
    w->mrw = mrw;
    w->nrw = nrw;
    w->lanes = lanes;
    w->nkb = cc_max64(1, cc_ceil_div(w->p.K, nrw));
    w->kpad = w->nkb * nrw;
    w->copad = cc_ceil_div(w->p.cog, mrw) * mrw;
    const double macs = cc_geom_macs(g);
    const int64_t want = cc_items_wanted(macs, CC_GRAIN_GEMM);
    int64_t nch = 1;
    if (g->groups < want)
        nch = cc_min64(w->nkb, cc_ceil_div(want, g->groups));
    w->chunkb = cc_ceil_div(w->nkb, nch);
    w->nchunks = cc_ceil_div(w->nkb, w->chunkb);
    w->items = g->groups * w->nchunks;
    w->nt = cc_threads_for(macs, CC_GRAIN_GEMM, w->items, w->nt);
    w->acc_elems = w->copad * w->chunkb * nrw * lanes;
    const int64_t al = 64 / elsize;
    w->per_thread = ig_round_up(w->p.band_elems, al) + ig_round_up(w->acc_elems, al);
    /* fewer threads where their buffers would pass the workspace cap */
    const int64_t fixed = ig_round_up(w->kpad * 8, 64) + 64;
    if (w->nt > 1 && fixed + (int64_t)w->nt * w->per_thread * elsize > CC_WORKSPACE_CAP)
        w->nt = (int)cc_max64(1, (CC_WORKSPACE_CAP - fixed) / (w->per_thread * elsize));
}

static inline int64_t ig_wplan_bytes(const ig_wplan *w, int64_t elsize) {
    return ig_round_up(w->kpad * 8, 64) + (int64_t)w->nt * w->per_thread * elsize + 64;
}

#endif
