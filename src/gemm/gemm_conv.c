/* Convolution as GEMM: forward (im2col + GEMM), adjoint (GEMM + col2im: the
 * transposed convolution and the plain one's grad_input) and the weight
 * gradient (im2col + GEMM accumulated over the batch), float32 and float64.
 * The bodies are gemm_conv.inc; the work split is gemm_plan.h. */
#include <stdlib.h>
#include <string.h>
#include "core/omp_compat.h"

#include "core/blas.h"
#include "gemm/gemm_small.h"
#include "cconv.h"
#include "igemm/igemm.h"
#include "winograd/wino_conv.h"
#include "winograd/wino1d.h"
#include "gemm_plan.h"
#include "gemm/patch_pack.h"
#include "gemm/uk_gemm.h"
#include "shift_conv.h"
#include "shift_plan.h"

#define CC_TEMPLATE "gemm/gemm_conv.inc"
#include "core/instances.h"

/* float32 on 16-lane vectors (AVX-512): micro-panels of NR = 48 positions
 * and twice the work per instruction, where the rules below differ (the
 * kernel table is chosen once at import, or forced by CCONV_SIMD / tests). */
static inline int cc_wide_f32(int64_t elsize) { return elsize == 4 && cc_ig_lanes(4) >= 16; }

/* Winograd F(2x2, 3x3) (src/winograd/wino_conv.c) for 2-D 3x3 stride-1 layers
 * (dilation 1-4).  With vectors of at most 8 floats (AVX2, NEON) and for
 * float64: >= 32 input and output channels per group on images
 * of >= 196 2x2 tiles (27x27 outputs and up), and with >= 64 on images of
 * >= 100 tiles, or of >= 16 when the batch has >= 128 (its panels of tiles
 * span images).  Its filter transform is made every call and its
 * transforms cost per channel what its GEMMs cost per channel pair, so
 * single small images and small groups stay on igemm.  Measured against
 * igemm, 2 threads, float32, AMD EPYC with AVX2
 * (benches/results/heuristics-2026-11-30-amd-epyc-avx2.md):
 * 56x56 0.48-0.74, 28x28 0.63-0.97 (>= 32 channels), 20x20 0.72-0.96
 * (>= 64), 7x7-14x14 with >= 128 tiles in the batch 0.69-0.93 (>= 64);
 * 7x7-14x14 batch 1 0.98-2.9, 16 channels 0.86-1.34, groups of 4-16
 * channels 1.1-1.8 stay out; dilated layers 0.32-0.95.  float64 (the
 * micro-kernels do half the lanes, the transforms the same adds): >= 32
 * channels on >= 49 tiles, 0.47-0.90 (14x14 batch 1 with 128-256 channels
 * 0.98-1.01).
 * 3-D layers (3x3 planes) count every output depth as an image of the
 * batch.  With one depth tap (a (2+1)-D 1x3x3 kernel) the rule above holds
 * (2 threads, float32, Winograd / igemm time, kernels called directly, 3
 * alternations: 2x64x8x56x56 0.70, 2x128x8x28x28 0.71; 16 channels 1.32,
 * 32 channels on 28x28 1.10 stay out).  With >= 2 depth taps the GEMMs
 * reduce over KD * cig and each item transforms its input planes once for
 * a run of output depths, so smaller layers gain (cc_wino3_wanted). */
/* 3-D, >= 2 depth taps, vectors of at most 8 floats or float64 (the
 * 16-lane rule is the 2-D one, unmeasured on 3-D).  Measured as above,
 * 3x3x3 with padding 1, float32: 16 channels on 64x64 planes 0.75, 24 on
 * 56x56 0.69 (8 channels 0.98, 16 on 28x28 0.96 stay out); >= 32 channels
 * on >= 196 tiles 0.63-0.72 (C3D-like 2x64x16x28x28 0.69, 5 depth taps
 * 0.75, depth stride 2 0.73); >= 49 tiles with >= 392 in the batch
 * 0.77-0.86 (1x128x8x14x14 0.77, 2x32x16x14x14 0.86; 1x64x4x14x14 0.97,
 * x2 1.04 stay out); >= 64 channels on >= 16 tiles with >= 256 in the
 * batch 0.81-0.86 (4x64x8x7x7 0.81, 2x128x8x7x7 0.86; 1x64x8x7x7 1.07,
 * 4x32x8x7x7 1.01 stay out).  float64: >= 16 channels on >= 16 tiles
 * 0.56-0.91 (8 channels 0.95 stays out). */
static int cc_wino3_wanted(const cc_geom *g, int64_t elsize, double tiles, double batch) {
    const int64_t cig = g->c_in / g->groups, cog = g->c_out / g->groups;
    if (cig * g->k[0] < 48 || cog < 16 || tiles < 16) return 0;
    if (elsize == 8) return 1;
    if (tiles >= 784) return 1;
    if (cig < 32 || cog < 32) return 0;
    if (tiles >= 196 || (tiles >= 49 && batch * tiles >= 392.0)) return 1;
    return cig >= 64 && batch * tiles >= 256.0;
}

/* 1-D F(2, 3) (winograd/wino1d.h) against igemm: Winograd / igemm time, 5
 * alternations, AMD EPYC Zen 4, 1 / 2 threads, batch x ceil(L / 2) tiles:
 * >= 128 channels on >= 512 tiles 0.69-0.84 / 0.70-0.81 at dilation 1
 * (16-lane float32: 128x128 L1024 0.75 / 0.81, TCN's 4x128x1024 d4 0.82 /
 * 0.88, 256 channels 0.69-0.76 / 0.69-0.77), 0.71-0.89 / 0.71-0.95 at
 * dilation 4 (with the phases gathered and the outputs written one by one;
 * split and joined by vector rounds since, TCN's layer took 0.76 at one
 * thread);
 * the same on the AVX2 kernels (0.73-0.86 / 0.74-0.94) and in float64
 * (0.69-0.89 / 0.72-0.95).  128 tiles (L 256) 0.82-0.92 / 0.85-1.09 and
 * 64 channels 0.84-1.02 / 0.88-1.15 stay out.  On 512-bit units (Intel's
 * AVX-512, later AMD families: unmeasured) the micro-kernels' share halves
 * against the transforms': 256 channels there. */
static int cc_wino1d_wanted(const cc_geom *g, int64_t elsize) {
    const int64_t cig = g->c_in / g->groups, cog = g->c_out / g->groups;
    const int64_t ch = cig < cog ? cig : cog;
    const double tiles = (double)g->batch * (double)((g->out[2] + 1) / 2);
    const int64_t need = cc_wide_f32(elsize) && !cc_cpu_wino_small() ? 256 : 128;
    return ch >= need && tiles >= 512.0;
}

/* 16 lanes on 256-bit units (AMD Zen 4, core/cpu.h), undilated: the
 * micro-kernels' share of the time is twice that on 512-bit units, so the
 * transforms pay off on smaller layers.  Winograd / igemm time (im2col's
 * where the default was im2col: 7x7 images of >= 128 channels), 7
 * alternations, AMD EPYC Zen 4, 1 / 2 threads:
 *   >= 32 channels on >= 49 tiles per image with >= 196 in the batch
 *   (after the input transform read the rows in place): 2-D 4x32x14x14
 *   0.84 / 0.89, 1x32x28x28 0.75 / 0.85, 4x64x14x14 0.83 / 0.88,
 *   1x64x28x28 0.70 / 0.76, 1x128x28x28 0.61 / 0.67, 4x128x14x14 0.68 /
 *   0.71, 8 groups of 32 on 4x256x14x14 0.85 / 0.85; 3x3x3 2x32x8x14x14
 *   0.73 / 0.79, 1x48x8x14x14 0.58 / 0.62, 2x64x4x14x14 0.70 / 0.73;
 *   fewer tiles in the batch (2x32x14x14 0.92 / 0.91) stay out;
 *   16-31 channels where two tile rows share a vector (tile rows of <= 7
 *   tiles: 14-wide images; wtinr2), same bounds: ResNeXt's 16-channel
 *   groups 8x512x14x14 0.82 / 0.83, 4x512x14x14 0.85 / 0.86, 8x256x14x14
 *   0.80 / 0.83, 4x16x14x14 0.85 / 0.85, 4x24x14x14 0.73 / 0.74; 28-wide
 *   images (4x16x28x28 0.90 / 1.00, 2x512x28x28 in 32 groups 0.95 /
 *   1.03), 2x512x14x14 in 32 groups (98 tiles) 0.93 / 1.12 and 8 channels
 *   (8x256x14x14 in 32 groups 1.14) stay out;
 *   >= 64 channels on images of >= 16 tiles (7x7) with >= 128 tiles in the
 *   batch, their output channels split among the threads where the
 *   panels are few (iw_plan_make): 8x64 0.84 / 0.49, 16x64 0.79 / 0.40,
 *   8x128 0.75 / 0.70, 16x128 0.72 / 0.53, 8x256 0.69 / 0.79, 8x512 0.67
 *   / 0.60-0.76 (against im2col from 128 channels), and larger images of
 *   fewer than 196 tiles in the batch (3x64x14x14 0.68 / 0.82, 3x128 0.59
 *   / 0.68, 3x256 0.54 / 0.57); batch 4 of 7x7 (4x128 0.81 / 0.96, 4x256
 *   0.76 / 1.22) and batch 1-2 (1x512 1.23 / 1.29, 2x256 0.92 / 0.96)
 *   stay out. */
static int cc_small_deep(const cc_geom *g, int64_t elsize);

static int cc_wino_small_wanted(const cc_geom *g, int64_t ch, int64_t tiles, double batch) {
    const int64_t tw = (g->out[2] + 1) / 2; /* tiles per tile row */
    const double all = batch * (double)tiles;
    if (tiles >= 49 && all >= 196.0) return ch >= 32 || (ch >= 16 && 2 * tw + 2 <= 16);
    return tiles >= 16 && ch >= 64 && all >= 128.0;
}

/* Dilation 3 and 4 with 16-lane float32 kernels, the input copied phase
 * by phase (winograd/wino_conv.h: each phase image's rows read in place,
 * short runs two to a vector).  Winograd / igemm time, Intel Xeon (model
 * 167), 5-9 alternations, 1 / 2 threads, C -> C channels (tiles: 2x2 of
 * the output, not of the phases):
 *   >= 256 channels on >= 196 tiles: 1x256x28x28 d4 0.85 / 0.96, d3 0.79
 *   / 0.80, 4x256x28x28 d4 0.80 / 0.85, 1x256x33x33 d4 0.73 / 0.86,
 *   1x512x28x28 d4 (DeepLab's) 0.71-0.72 / 0.88-0.89, d3 0.67 / 0.65,
 *   4x512x33x33 d4 0.50 / 0.58, 65x65 0.43-0.67 / 0.48-0.73;
 *   128 channels on >= 196 tiles with >= 784 in the batch: 4x128x28x28
 *   0.84 / 0.85, 4x128x33x33 0.72 / 0.75, 1x128x65x65 0.77 / 0.89;
 *   512 channels on >= 100 tiles with >= 400 in the batch: 4x512x20x20
 *   0.76 / 0.87, d3 0.66 / 0.79.
 * Left on igemm: 1x128x33x33 d4 0.76 / 1.07, 1x128x28x28 0.90 / 1.13,
 * 1x512x20x20 0.98 / 1.09, 4x256x20x20 d4 0.95 / 1.06, 14x14 images
 * 0.77-1.59 / 1.06-1.95, 64 channels 0.92-1.69 / 0.89-1.73.  (Before the
 * phase copy, with the rows split run by run: 1x512x28x28 d4 0.79 / 1.03,
 * 1x256x33x33 0.85 / 1.11.) */
static int cc_wino_dil34_wanted(const cc_geom *g, int64_t elsize, int64_t ch, int64_t tiles,
                                double batch) {
    if (cc_conv_fwd_wino_phased(g, 1, elsize) < 1) return 0;
    const double all = batch * (double)tiles;
    if (ch >= 128 && tiles >= 196 && (ch >= 256 || all >= 784.0)) return 1;
    return ch >= 512 && tiles >= 100 && all >= 400.0;
}

static int cc_wino_wanted(const cc_geom *g, int64_t elsize) {
    /* small deep layers stay on im2col, but for the rule for 256-bit units */
    const int deep = cc_small_deep(g, elsize);
    if (cc_wino1d_applies(g)) return !deep && cc_wino1d_wanted(g, elsize);
    if (!cc_wino_applies(g)) return 0;
    const int64_t cig = g->c_in / g->groups, cog = g->c_out / g->groups;
    const int64_t tiles = ((g->out[1] + 1) / 2) * ((g->out[2] + 1) / 2);
    /* 3-D: each output depth an image of the batch */
    const double batch = (double)g->batch * (double)g->out[0];
    if (g->k[0] >= 2 && !cc_wide_f32(elsize))
        return !deep && cc_wino3_wanted(g, elsize, (double)tiles, batch);
    if (cc_wide_f32(elsize)) {
        /* 16-lane vectors (AVX-512): the micro-kernels do twice the work per
         * instruction, and the transforms' fixed costs (the filter transform
         * per call, the split and transforms per channel and run of tiles)
         * must be spread over enough channels and tiles.  Measured on a Xeon
         * (Sapphire Rapids class), 1 and 2 threads, Winograd time / igemm
         * time, after the row split and the transforms were vectorised
         * (benches/results/heuristics-wino-2026-12-01-intel-xeon-avx512.md):
         *   >= 32 channels on 56x56 outputs and up: 0.64-0.96;
         *   >= 64 channels on images of >= 49 tiles (14x14) with channels
         *   x tiles of the batch >= 32768: 0.57-0.99 (4x64 28x28 0.86/0.79,
         *   1x256 24x24 0.72, 8x256 14x14 0.68); below it 0.87-2.8 (1x128
         *   28x28 1.0, 4x128 14x14 1.05-1.2, 1x256 20x20 1.07-1.19); 7x7
         *   images (16 tiles) 0.86-1.01 stay out;
         *   dilation 2, >= 64 channels and >= 196 tiles per image: 0.65-0.92
         *   (deeplab's 1x256 33x33 0.71-0.84); 32 channels 1.2-1.35, 9x9
         *   tiles 0.73-1.10. */
        const int64_t dmax = g->dil[1] > g->dil[2] ? g->dil[1] : g->dil[2];
        const int64_t ch = cig < cog ? cig : cog;
        if (dmax > 2) return !deep && cc_wino_dil34_wanted(g, elsize, ch, tiles, batch);
        if (dmax == 1 && cc_cpu_wino_small() && cc_wino_small_wanted(g, ch, tiles, batch)) return 1;
        if (ch < 32 || deep) return 0;
        if (dmax == 1 && tiles >= 784) return 1;
        if (ch < 64 || tiles < 49 || (dmax == 2 && tiles < 196)) return 0;
        return (double)ch * batch * (double)tiles >= 32768.0;
    }
    if (deep || cig < 32 || cog < 32) return 0;
    /* float32 with fewer than 64 output channels per group on fewer than
     * 400 tiles (up to 39x39 outputs): igemm (2 threads, Winograd / igemm
     * time, 28x28 outputs: 32 -> 32 channels 1.05-1.09, groups of 32 1.07-
     * 1.18, 64 -> 32 1.02-1.03; but 32 -> 64 0.76-0.80, 40x40 0.89-0.92) */
    if (elsize == 4 && cog < 64 && tiles < 400) return 0;
    if (tiles >= 196 || (elsize == 8 && tiles >= 49)) return 1;
    if (cig < 64 || cog < 64) return 0;
    return tiles >= 100 || (tiles >= 16 && batch * (double)tiles >= 128.0);
}

/* The implicit GEMM and Winograd stay away from small images with many
 * output channels and a deep reduction when the whole batch has few output
 * positions, or the channels are very many, or a reduction of >= 256 over
 * at most 128 positions in all (a 1x1 stride-2 layer on a 7x7 image was 2x
 * torch's time on igemm, whose weight packing streams the whole weight for
 * 16 positions): igemm's tiles are one image each, and there im2col + one
 * GEMM over the batch wins (measured, 1 and 2 threads:
 * benches/results/heuristics-2026-11-30-amd-epyc-avx2.md).  With 16-lane float32 vectors
 * (AVX-512: micro-panels of 48 positions, a 7x7 image's 49 in 96 columns)
 * the size of the image decides rather than the batch's positions: im2col
 * for images of <= 56 positions with >= 128 output channels (2 threads,
 * igemm time / im2col time: 7x7 with 128-1024 channels, batch 2-8,
 * 1.0-1.55; 8x8 0.91-1.02, 10x10 0.94-1.17, 12x12-14x14 0.71-1.03; 7x7
 * with 64-96 channels 0.82-0.87: benches/results/heuristics-2026-12-01-intel-xeon-avx512.md).
 * float64 on 64-byte vectors (AVX-512: 8 lanes, micro-panels of 24
 * positions) takes the same image-size rule: on an Intel Xeon the im2col
 * rule for few positions in the batch had sent single 14x14 images of
 * 128-256 channels to im2col at 1.5-1.9x igemm's time and 2.0x Winograd's
 * (1x256x14x14 3x3, 1 thread: im2col 6.6 ms, igemm 4.1, Winograd 3.2),
 * 12x12 and 10x10 images 1.4-1.6x igemm's, 1 and 2 threads; 7x7 images
 * of 512 channels tie (7.2 / 7.3 ms at batch 1, 38.2 / 35.6 at 8).
 * AMD Zen 4's float64 there unmeasured. */
static int cc_small_deep(const cc_geom *g, int64_t elsize) {
    const int64_t P = g->out[0] * g->out[1] * g->out[2];
    const int64_t cog = g->c_out / g->groups;
    const int64_t K = g->c_in / g->groups * g->k[0] * g->k[1] * g->k[2];
    const double bp = (double)g->batch * (double)P;
    const int wide = cc_wide_f32(elsize) || (elsize == 8 && cc_ig_lanes(8) >= 8);
    /* One or two float32 images of >= 256 output channels on 16-lane
     * kernels: igemm reads the weight in place there (its packed panels
     * would run once or twice: igemm/ig_plan.h, IG_AIN_MAX_USES) and beats
     * im2col.  Intel Xeon (model 167), igemm / im2col time, 1 / 2 threads:
     * 1x512x7x7 -> 512 0.82 / 0.85, 2x512x7x7 0.93 / 0.91, 1x256x7x7 0.81
     * / 0.88, 2x256x7x7 0.90 / 0.81, 1x1024x7x7 -> 512 0.83 / 0.86,
     * 1x2048x7x7 -> 512 0.74 / 0.84, 1x512x6x6 0.73 / 0.78, 1x512x4x4 0.79
     * / 0.78; 4x512x7x7 0.99 / 1.00 and 1x128x7x7 1.00 / 1.34 stay.  The
     * 1-D layers it frees go to igemm too (not Winograd's F(2, 3)): k3 on
     * 30-56 positions, 256-1024 -> 256-512, 1 / 2 threads 0.56-0.81 /
     * 0.58-0.83 of im2col. */
    if (cc_wide_f32(elsize) && g->batch <= 2 && cog >= 256 && cc_cpu_ig_weight_inplace()) return 0;
    return P < 256 && cog > 32 &&
           ((K >= 1024 && (wide ? P <= 56 && cog >= 128 : bp < 256.0 || (cog >= 512 && P < 100))) ||
            (K >= 256 && bp <= 128.0));
}

/* 1x1 layers that are not read in place (a stride, or padding): their
 * im2col is a strided copy of the input, and with 16-lane float32 kernels
 * (where the own GEMM takes the product: uk_gemm.h) im2col + GEMM beat
 * igemm.  Intel Xeon (AVX-512), igemm / im2col time, 1 / 2 threads:
 * ResNet-50's stride-2 1x1 layers 512 -> 1024 on 28x28 1.29 / 1.36 (one
 * image), 1.15 / 1.18 (8 images), 256 -> 512 on 56x56 1.12 / 1.16, 1024 ->
 * 2048 on 14x14 1.31 / 1.31.  AMD Zen 4 unmeasured (the same two
 * methods, the same own GEMM). */
static int cc_pointwise_im2col(const cc_geom *g, int64_t elsize) {
    if (elsize != 4 || !cc_uk_gemm_runs() || cc_is_1x1(g)) return 0;
    return g->k[0] == 1 && g->k[1] == 1 && g->k[2] == 1;
}

/* Non-overlapping patches (cc_is_patch): im2col + one GEMM beat igemm (AMD
 * EPYC AVX2, 2 threads, im2col / igemm time, 3 alternations: float32
 * 0.68-0.95 -- 8x3x224x224 4x4 stride 4 -> 96 0.68, 16x16 stride 16 -> 768
 * 0.90, 4x256x56x56 2x2 stride 2 -> 512 0.82, 1-D k2 s2 512 -> 512 0.79;
 * float64 0.78-1.03; 1 thread 0.91-1.10), so no other method wants them --
 * except with AVX-512's kernels, where igemm takes float64 patches and
 * float32 ones of a reduction shorter than 64 (AMD EPYC family 25, Zen 4,
 * igemm / im2col time, 1 and 2 threads, 7 alternations: float32 K = 48
 * (3 channels, 4x4) 0.83-0.95, K = 10 0.77; K >= 192 0.93-1.03 and 8x64x4000
 * k4 1.14 / 1.03 stay on im2col; float64 0.77-1.03, median 0.89 over 11
 * layers at 1 and 2 threads; the same winners in the tables of Zen 4 and
 * Zen 5, cconv/kinds/amd-*avx512.json: ConvNeXt's 4x4 patches 1.24-1.30,
 * float64 ViT 16x16 1.18, 1-D k2 s2 1.15-1.42); float32 1-D patches of
 * K = 128-1024 stay on im2col (Zen 4: 0.90-1.14, most above 1).  3-D
 * patches with >= 2 depth taps take igemm with every kernel set (2x2x2
 * patches, K = 64-256, Zen 4, 1 and 2 threads: AVX-512 float32 0.52-0.85,
 * AVX2 float32 0.66-0.87, AVX2 float64 0.81-1.00). */
static int cc_patch_igemm(const cc_geom *g, int64_t elsize) {
    if (g->k[0] >= 2) return 1;
    if (cc_ig_lanes(4) < 16) return 0;
    const int64_t K = g->c_in / g->groups * g->k[0] * g->k[1] * g->k[2];
    return elsize == 8 || K < 64;
}

int cc_conv_fwd_applies(int m, const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_geom_valid(g) || (elsize != 4 && elsize != 8)) return 0;
    switch (m) {
    case CC_M_IM2COL: return 1;
    case CC_M_GEMM_1X1: return cc_is_1x1(g);
    case CC_M_SHIFT: return cc_shift_applies(g);
    case CC_M_IGEMM: return cc_conv_fwd_igemm_workspace(g, nthreads, elsize) >= 0;
    case CC_M_WINO: return cc_conv_fwd_wino_workspace(g, nthreads, elsize) >= 0;
    default: return 0;
    }
}

int cc_conv_fwd_wanted(int m, const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_conv_fwd_applies(m, g, nthreads, elsize)) return 0;
    switch (m) {
    case CC_M_IM2COL:
    case CC_M_GEMM_1X1: return 1;
    case CC_M_SHIFT: return !cc_is_1x1(g) && !cc_is_patch(g) && cc_shift_wanted(g);
    case CC_M_IGEMM:
        return !cc_is_1x1(g) && (!cc_is_patch(g) || cc_patch_igemm(g, elsize)) &&
               !cc_small_deep(g, elsize) && !cc_pointwise_im2col(g, elsize);
    case CC_M_WINO:
        /* (the small deep layers that im2col takes: inside cc_wino_wanted,
         * whose rule for 256-bit units measured Winograd against it) */
        return !cc_is_patch(g) && cc_wino_wanted(g, elsize);
    default: return 0;
    }
}

int cc_conv_fwd_split(const cc_geom *g, int m, int64_t elsize, int64_t split[3]) {
    if ((m != CC_M_IM2COL && m != CC_M_GEMM_1X1) || !cc_conv_fwd_applies(m, g, 1, elsize))
        return CC_ERR_ARG;
    cc_plan pl;
    cc_plan_cols(g, 1, elsize, m == CC_M_GEMM_1X1, &pl);
    split[0] = pl.nb;
    split[1] = pl.ntiles;
    split[2] = pl.nchunks;
    return 0;
}

int64_t cc_conv_fwd_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize) {
    if (!cc_conv_fwd_applies(m, g, nthreads, elsize)) return -1;
    if (m == CC_M_IGEMM) return cc_conv_fwd_igemm_workspace(g, nthreads, elsize);
    if (m == CC_M_WINO) return cc_conv_fwd_wino_workspace(g, nthreads, elsize);
    if (m == CC_M_SHIFT) return cc_conv_fwd_shift_workspace(g, nthreads, elsize);
    const int in_place = m == CC_M_GEMM_1X1;
    int64_t e = elsize == 4 ? cc_conv_fwd_workspace_elems_f32(g, nthreads, in_place)
                            : cc_conv_fwd_workspace_elems_f64(g, nthreads, in_place);
    return e < 0 ? -1 : e * elsize;
}

int cc_conv_adj_applies(int m, const cc_geom *g) {
    if (!cc_geom_valid(g)) return 0;
    return m == CC_M_IM2COL || (m == CC_M_GEMM_1X1 && cc_is_1x1(g));
}

int64_t cc_conv_adj_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize) {
    if (!cc_conv_adj_applies(m, g) || (elsize != 4 && elsize != 8)) return -1;
    const int in_place = m == CC_M_GEMM_1X1;
    int64_t e = elsize == 4 ? cc_conv_adj_workspace_elems_f32(g, nthreads, in_place)
                            : cc_conv_adj_workspace_elems_f64(g, nthreads, in_place);
    return e < 0 ? -1 : e * elsize;
}

int cc_conv_wgrad_applies(int m, const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_geom_valid(g) || (elsize != 4 && elsize != 8)) return 0;
    switch (m) {
    case CC_M_IM2COL: return 1;
    case CC_M_GEMM_1X1: return cc_is_1x1(g);
    case CC_M_SHIFT:
        return cc_shift_wgrad_applies(g) && cc_conv_wgrad_shift_workspace(g, nthreads, elsize) >= 0;
    case CC_M_IGEMM:
        return cc_conv_wgrad_igemm_suits(g, elsize) &&
               cc_conv_wgrad_igemm_workspace(g, nthreads, elsize) >= 0;
    default: return 0;
    }
}

/* The weight gradient's default preferences (the caller tries GEMM_1X1,
 * IGEMM, SHIFT, IM2COL in that order).  SHIFT where the im2col matrix would
 * be many times the input: stride 1 (strided layers: below), several taps,
 * 16-128 input channels per group, 256 output positions in the batch, rows
 * not much narrower than the kernel's reach (cc_shift_shape_ok), whatever
 * the output channels (its kernel broadcasts them); IGEMM then does not
 * run, below 16 input channels it stays.  Measured, AMD EPYC (family 26,
 * AVX-512), 1 and 2 threads, forced methods interleaved, shift / im2col + GEMM: 3x3 on
 * 4x128x28x28 0.82-0.87, 3x3x3 on 1x128x8x14x14 0.75-0.87, 2x64x16x28x28
 * 0.55-0.57, 1x3x3 on 2x64x8x56x56 0.59-0.63, 1-D k5 64 channels
 * 0.55-0.56, dilated 1-D k3 128 channels 0.85-0.90; float64 3x3 128
 * channels 0.72-0.74; shift / igemm, grouped 3x3: 16 input and output
 * channels per group (8x512x14x14, 32 groups) 0.61-0.62, 32 in 8 out
 * (8x256x14x14, 8 groups) 0.43-0.52, 32 in 32 out on 28x28 0.51-0.59;
 * 8 input channels per group lose (resnext 28x28: 2.0x), 256 ties (33x33
 * dilation 2: 0.98-1.03).  Strided layers with at least 256 output
 * positions per image too (the kernel steps through the band by the
 * strides), shift / im2col + GEMM: 3x3 stride 2 on 4x128x56x56
 * 0.70-0.76, 4x64x56x56 0.72-0.77, 8x32x112x112 0.53-0.56; 2x2 stride 2
 * on 4x96x56x56 0.81-0.87; 4x4 stride 4 on 2x32x64x64 0.74-0.97; 3x3x3
 * stride 2 on 1x64x8x28x28 0.81-0.85; 1-D k3 stride 2, 64 channels
 * 0.62-0.63; grouped 3x3 stride 2, 16 per group, against igemm 0.68-0.76;
 * with 14x14 outputs (4x128x28x28 -> 256) 1.01-1.23, so not there.
 * With 8-lane float32 vectors (AVX2) from 8 input channels per group: the
 * AVX2 kernels on the same CPU, shift / igemm, ResNeXt 28x28 0.85-0.95,
 * 28x28 stride 2 0.68-0.89, 14x14 (16 per group) 0.60-0.69; float64 (two
 * 4-lane vectors for 8 channels) lost 1.13-1.20 and keeps 16. */
int cc_conv_wgrad_wanted(int m, const cc_geom *g, int nthreads, int64_t elsize) {
    if (!cc_conv_wgrad_applies(m, g, nthreads, elsize)) return 0;
    const int64_t cig = g->c_in / g->groups;
    const int64_t P = g->out[0] * g->out[1] * g->out[2];
    const int unit = g->stride[0] == 1 && g->stride[1] == 1 && g->stride[2] == 1;
    /* 8 input channels per group fill one float32 vector of 8 lanes */
    const int64_t min_cig = elsize == 4 && cc_ig_lanes(elsize) == 8 ? 8 : 16;
    const int shift = cig <= 128 && cc_shift_shape_ok(g, g->batch * P, min_cig) &&
                      (unit || P >= 256) && cc_conv_wgrad_applies(CC_M_SHIFT, g, nthreads, elsize);
    switch (m) {
    case CC_M_SHIFT: return shift;
    case CC_M_IGEMM: return !shift;
    default: return 1;
    }
}

int64_t cc_conv_wgrad_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize) {
    if (!cc_conv_wgrad_applies(m, g, nthreads, elsize)) return -1;
    if (m == CC_M_IGEMM) return cc_conv_wgrad_igemm_workspace(g, nthreads, elsize);
    if (m == CC_M_SHIFT) return cc_conv_wgrad_shift_workspace(g, nthreads, elsize);
    const int in_place = m == CC_M_GEMM_1X1;
    int64_t e = elsize == 4 ? cc_conv_wgrad_workspace_elems_f32(g, nthreads, in_place)
                            : cc_conv_wgrad_workspace_elems_f64(g, nthreads, in_place);
    return e < 0 ? -1 : e * elsize;
}
