/*
 * Choices of the kernels that follow the CPU's vendor rather than its
 * instruction set, made once (at first use) like the instruction set
 * (isa.h): read-only afterwards.
 */
#ifndef CC_CORE_CPU_H
#define CC_CORE_CPU_H

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* "amd", "intel" or "other" (not x86-64, or another vendor). */
const char *cc_cpu_vendor(void);

/* The CPU's family (CPUID leaf 1: base plus extended family; AMD Zen 4 is
 * 25, Zen 5 26), or -1 off x86-64. */
int cc_cpu_family(void);

/* 1 when kernels that read short row streams prefetch them ahead: the
 * implicit GEMM's 16-lane float32 kernels the next work item's input and
 * output rows (igemm/ig_conv.inc, ig_wgrad.inc; its other kernels always),
 * the dense Winograd the next channel's input rows (winograd/wino_conv.inc),
 * else 0.  CCONV_PREFETCH_ROWS=0 or 1 in the environment decides;
 * otherwise on every CPU but Intel's: measured on AMD EPYC (family 26,
 * AVX-512) 1.1-1.6x faster on ResNeXt and MobileNet-stem layers at one
 * thread (the implicit GEMM), 1.1-1.45x on 3x3 layers at two (Winograd),
 * on an Intel Xeon (Sapphire Rapids) the implicit GEMM's 1.1x slower (its
 * fill buffers ran full); again on an Intel Xeon with AMX (AVX-512) at one
 * thread: 0.98-1.02 on most layers, MobileNet's stem 1.09, ResNeXt's 28x28
 * layer 1.05. */
int cc_cpu_prefetch_rows(void);

/* 1 when the float32 GEMMs of the GEMM convolutions run on the implicit
 * GEMM's 16-lane micro-kernels (gemm/uk_gemm.c) rather than OpenBLAS's,
 * else 0.  CCONV_UK_GEMM=0 or 1 in the environment decides; otherwise on
 * every CPU (they run only with 16-lane float32 kernels: uk_gemm.h).
 * Measured on AMD EPYC Zen 4 and on an Intel Xeon (AVX-512, OpenBLAS's
 * SkylakeX kernels on both): there ResNet-50's 256 -> 64 1x1 layer took
 * 0.75 / 0.82 of OpenBLAS's time at 1 / 2 threads, its other 1x1 layers
 * 0.81-0.96, DCGAN's transposed layer 0.93, ViT's patches and a 1-D k2 s2
 * layer 0.96-1.02. */
int cc_cpu_uk_gemm(void);

/* 1 when the AVX-512 build runs depthwise kernels that read rows at
 * unaligned offsets on 256-bit vectors (the AVX2 kernel table's): the 3x3
 * plane kernels of stride 1 (and 2, on rows of 20 outputs or more) and the
 * weight gradient's, else 0.  CCONV_DW_256=0 or 1 in the environment
 * decides; otherwise on AMD CPUs of family 25 (Zen 4), whose AVX-512 splits
 * every 512-bit operation over its 256-bit units and where every unaligned
 * 64-byte load crosses a cache line: there the 256-bit kernels took
 * 0.79-0.96 of the time of the 512-bit ones on MobileNet-like planes of 20
 * to 112 columns at stride 1, 0.83-0.95 at stride 2, and the weight
 * gradient 0.82-0.98, 1 and 2 threads (depthwise/dw_dispatch.c has the
 * figures).  Not on Intel's AVX-512 (512-bit units: on an Intel Xeon the
 * 256-bit kernels took 0.90-0.94 of the time on MobileNetV2's stride-1
 * 112x112 plane, 1.03-1.25 on the 5x5, 7x7, stride-2 and 3-D layers) nor
 * on later AMD families (unmeasured). */
int cc_cpu_dw_256(void);

/* 1 when the depthwise forward runs dilated 3x3 planes whose rows fill
 * their last vector badly by super-rows (depthwise/dw_internal.h:
 * dw_flat_wins), else 0.  CCONV_DW_FLAT=0 or 1 in the environment decides;
 * otherwise on every CPU (the same bits either way: the switch is there to
 * compare the two).  Measured on AMD EPYC Zen 4: DeepLab's 4x256x33x33
 * dilation 2 0.88 of the time row by row at one thread. */
int cc_cpu_dw_flat(void);

/* 1 when the depthwise 3x3 plane kernels of stride 1 and dilation 1 on
 * 256-bit x86 vectors read the input rows where they lie in x, the vectors
 * at a row's edges by masked loads, instead of copying each row into a
 * zero-padded ring buffer first (depthwise/dw2d.inc: plane_direct;
 * dw_kernels.c says which kernel sets), else 0.  CCONV_DW_DIRECT=0 or 1 in
 * the environment decides; otherwise on every CPU (the same bits either
 * way: the switch is there to compare the two).  Measured on AMD EPYC Zen
 * 4 only (figures in depthwise/dw2d.inc); AVX2-only CPUs unmeasured. */
int cc_cpu_dw_direct(void);

/* 1 when the depthwise adjoint of stride 2 in both directions with K x K
 * taps, K = 2 to 5 (grad_input of such convolutions, the forward of such
 * transposed ones), runs plane by plane, several rows a step with the
 * weights in registers (depthwise/dwadj2.inc: adj2p), else 0: row by row
 * (adj2).  CCONV_DW_A2P=0 or 1 in the environment decides; otherwise on
 * every CPU (the two add the same products in different orders: the values
 * differ by float rounding; the switch is there to compare them).
 * Measured on AMD EPYC Zen 4 (0.34-0.59 of the row form's time at 1 and 2
 * threads, AVX-512 and AVX2 kernels: docs/internals.md) and on an Intel
 * Xeon (AVX-512, one thread: 0.44-0.75); ARM unmeasured. */
int cc_cpu_dw_a2p(void);

/* Where the implicit GEMM's direct mode writes its output in place over
 * one K block (igemm/ig_plan.h: inplace) rather than through the wide C
 * block and a row copy: 0 nowhere, 1 on every kernel set, 2 on those of
 * 64-byte vectors (AVX-512, with a compressing store), the default
 * (measured on AMD Zen 4, and on an Intel Xeon's AVX-512: 0.82 of the
 * time on MobileNet's stem, 0.89-0.95 on grouped layers, 0.92 on a 1-D k5
 * layer, 0.99-1.01 elsewhere, one thread).
 * CCONV_IG_INPLACE=0 or 1 in the environment decides (the same bits
 * either way: the switch is there to compare the two). */
int cc_cpu_ig_inplace(void);

/* 1 when the dense Winograd (winograd/wino_conv.h) is the default for
 * float32 3x3 layers of 32 channels or more on images of 14x14 outputs or
 * more with 196 tiles or more in the batch (depths counted as images)
 * under 16-lane kernels, below the older rule for 512-bit units
 * (gemm/gemm_conv.c), else 0.  CCONV_WINO_SMALL=0 or 1 in the
 * environment decides; otherwise on every CPU.  On AMD EPYC Zen 4 (whose
 * AVX-512 runs on 256-bit units) Winograd took 0.58-0.92 of the implicit
 * GEMM's time on such layers at one thread, 0.61-0.91 at two (gemm_conv.c
 * has the figures); on an Intel Xeon (512-bit units) 0.80 / 0.78 (a 4-group
 * 3x3 layer, 1 / 2 threads), 0.90 / 0.85 (ResNeXt's 14x14 layer), 0.95 /
 * 0.89 (a dilated 1-D TCN layer), forward + backward 0.93-1.01.  Later AMD
 * families (512-bit units) unmeasured. */
int cc_cpu_wino_small(void);

/* 1 when the 64-byte-vector (AVX-512) micro-kernels of the implicit GEMM
 * (and of the own GEMM's products that pack B: gemm/uk_gemm.c) run K
 * blocks of 512 rather than 128 (igemm/ig_plan.h: IG_KC_BYTES_WIDE),
 * else 0.  CCONV_LONG_KC=0 or 1 in the environment decides; otherwise on
 * every CPU: measured on AMD EPYC Zen 4, where each micro-kernel call's C
 * tile and pipeline fill cost 8% of a call at kc 128 and the layers ran in
 * 0.92-0.99 of the time, and on an Intel Xeon (AVX-512), 0.88-1.01, but
 * ResNet-50's 7x7 stride-2 stem 1.04-1.21 (ig_plan.h has the figures).
 * The K blocks change the order of the sums, so the values differ by float
 * rounding between the two. */
int cc_cpu_long_kc(void);

/* The same for the own GEMM's products of few A panels (up to 96 rows),
 * which read B in place (gemm/uk_gemm.inc; its other products take
 * cc_cpu_long_kc's blocks): CCONV_UK_LONG_KC=0 or 1 decides; otherwise on
 * every CPU but Intel's: on an Intel Xeon (48 KiB L1) ResNet-50's 256 ->
 * 64 1x1 layer took 1.09-1.13 of the time with the long blocks
 * (uk_gemm.c); on AMD Zen 4 0.97-0.98. */
int cc_cpu_uk_long_kc(void);

/* 1 when the own GEMM's products that read B in place (gemm/uk_gemm.inc)
 * prefetch the next B micro-panel's rows inside the micro-kernel calls,
 * one row every few products (igemm.h: ukrip), else 0: then between the
 * calls, a call's share at once.  CCONV_UK_SPREAD_PF=0 or 1 decides;
 * otherwise on every CPU: on an Intel Xeon (AVX-512, 2026-12-06) the
 * prefetches issued at once stalled on full fill buffers (7% of a
 * one-thread profile of ResNet-50's 256 -> 64 1x1 layer), and spread they
 * took 0.79-0.95 of the time on 1x1 layers of 16-96 output channels at one
 * and two threads, their grad_input 0.42-0.91 (uk_gemm.inc).  AMD EPYC Zen
 * 4 (2026-12-07), spread / between, 9-11 alternations call by call, 1 / 2
 * threads: 4x64x56x56 -> 16 0.87 / 0.87, 1x256x56x56 -> 64 0.96 / 0.96,
 * 2x512x28x28 -> 96 0.97 / 0.97, 8x64x56x56 -> 256 1.00 / 1.00, but
 * 8x256x56x56 -> 64 1.01 / 1.03; grad_input at 1 thread 0.98-1.03 (16
 * channels 1.02, 8x64x56x56 -> 256 1.03). */
int cc_cpu_uk_spread_pf(void);

/* 1 when the implicit GEMM's 16-lane float32 kernels (AVX-512) run strided
 * stems (at most 4 input channels, output rows of 48 columns and more) in
 * direct mode, reading B from the band, rather than packing it
 * (igemm/ig_plan.h has the figures), else 0.  CCONV_IG_STEM_DIRECT=0 or 1
 * decides; otherwise on every CPU: measured on an Intel Xeon 0.88-0.99 of
 * the time on ResNet-50's, a video and ConvNeXt's stems; on AMD EPYC Zen 4
 * (2026-12-07, 15 alternations call by call, direct / packed, 1 / 2
 * threads) ResNet-50's stem 0.98 / 0.99 at batch 1 and 0.95 / 0.96 at 8,
 * ConvNeXt's 4x4 patches to 96 0.94 / 0.91 and to 128 0.94 at 2, a 5x5
 * stride-2 stem 0.90 at 2, MobileNet's 3x3 stride-2 stem 1.00 / 1.00, the
 * 3x7x7 video stem 1.00 / 1.00, a 7x7 stride-2 stem on 128x128 (64 output
 * columns) 1.01 / 1.03 (process against process, which had found the
 * packed mode as fast, the scatter is +-5%). */
int cc_cpu_ig_stem_direct(void);

/* 1 when the implicit GEMM's packed mode may read a float32 weight's rows
 * where they lie rather than packing them, where each packed panel would
 * run against few B micro-panels (igemm/ig_plan.h: IG_AIN_MAX_USES, and
 * the figures), else 0.  CCONV_IG_WEIGHT_INPLACE=0 or 1 decides;
 * otherwise on every CPU: it spares a pass over the weight (read and
 * written) that few uses do not repay, whatever the vendor (measured on an
 * Intel Xeon with AVX-512; on AMD EPYC Zen 4, 2026-12-07, in place /
 * packed, 9 alternations call by call, 1 / 2 threads: 1x512x7x7 -> 512 3x3
 * 0.71 / 0.79, 1x256x14x14 -> 256 0.91 / 0.93, 1x1 layers 1x1024x14x14 ->
 * 256 0.92 / 0.91, 1x512x7x7 -> 2048 0.82 / 0.82, 1x1024x14x14 -> 2048
 * stride 2 0.79 / 0.82, 1x1024x2x2 -> 1024 0.42; larger images 0.99-1.00). */
int cc_cpu_ig_weight_inplace(void);

/* 1 when the GEMM convolutions' products of non-overlapping patches that
 * run on the own GEMM (gemm/uk_gemm.c) and pack B there pack its
 * micro-panels straight from the input (gemm/patch_pack.h: the taps of a
 * line moved by the transpose kernel) rather than from an im2col matrix,
 * else 0; the same products in the same order, so the same bits.
 * CCONV_PATCH_PACK=0 or 1 decides; otherwise on every CPU: on AMD EPYC
 * Zen 4 (2026-12-07, 11 alternations call by call, packed / im2col, 1 / 2
 * threads) ViT-B/16's 16x16 patches (8 images) 0.97 / 0.97, the same to
 * 128 channels 0.93 / 0.93, 5x5 patches of 24 channels to 128 0.87 /
 * 0.82, 8x8 of 32 channels 0.90 / 0.87, 4x4 of 16 channels 0.95 / 0.93, a
 * 1-D k8 stride-8 layer 0.95 / 0.95; the Intel kinds unmeasured (the same
 * kernels and blocks). */
int cc_cpu_patch_pack(void);

/* 1 when the implicit GEMM's direct mode may run a float32 stem's tiles
 * (strided, at most 4 input channels, 64-byte vectors) over a band of one
 * block per column tap, with no computed column dropped, where the phase
 * band's dropped columns and partial micro-tiles would cost more than 6%
 * (igemm/ig_plan.h: kwb, and the figures), else 0; the same products in
 * the same order, so the same bits.  CCONV_IG_KW_BAND=0 or 1 decides;
 * otherwise on every CPU: on AMD EPYC Zen 4 (2026-12-07, 9 alternations
 * call by call, 1 / 2 threads) a 3x7x7 (1, 2, 2) video stem 0.964 /
 * 0.964, a 7x7 stride-2 stem on 128x128 0.966 / 0.970; the Intel kinds
 * unmeasured (the same kernels). */
int cc_cpu_ig_kw_band(void);

/* 1 when the float64 GEMMs of the GEMM convolutions that pack B (more than
 * 12 A panels of 8 rows) run on the implicit GEMM's 8-lane float64
 * micro-kernels (AVX-512: gemm/uk_gemm.c) rather than OpenBLAS's, else 0;
 * the products of fewer rows, which would read B in place, stay on
 * OpenBLAS (1x1 layers: 1.01-1.11 of its time on an Intel Xeon, 1.10-1.17
 * on AMD Zen 4).  CCONV_UK_GEMM_F64=0 or 1 decides; otherwise on every
 * CPU: on an Intel Xeon (AVX-512, 2026-12-06), 1 / 2 threads, DCGAN's
 * transposed layer 0.78 / 0.77 of OpenBLAS's time, UNet's 0.98 / 0.97,
 * ViT's patches 0.98 / 1.02 (uk_gemm.c); on AMD EPYC Zen 4 (2026-12-07, 9
 * alternations call by call) DCGAN's 0.88 / 0.84, UNet's 0.87 / 0.90, ViT's
 * 1.03 / 1.00, 3x3 on 8x256x14x14 and a 1-D k2 stride-2 layer 0.99-1.00. */
int cc_cpu_uk_gemm_f64(void);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
