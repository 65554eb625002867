"""The implicit-GEMM forward (src/igemm, ``_kernels.conv_fwd_igemm``) and
the grouped weight gradient on the same band (``_kernels.conv_wgrad`` when
``wgrad_method`` is 'igemm').

Every instruction set this CPU runs is forced in turn (``_kernels.set_isa``:
each extension module has its own instruction-set choice) and the result is
checked against the float64 NumPy reference of tests/reference.py on random
geometries: 1-D/2-D/3-D, strides 1-3 (the band's column phases), padding,
dilation, groups, bias, tiles narrower than a row and wider than the
micro-kernel, 1 and 2 threads, float32 and float64.  The micro-kernels of
every ISA (AVX-512 on SIMDe, NEON under qemu-aarch64) are checked from C by
tests/c/ig_check.c against a naive product and the scalar kernel.
"""
from __future__ import annotations

import pathlib
import zlib

import math

import numpy as np
import pytest

import cconv

import c_programs

from cconv import _depthwise, _kernels
from cconv._params import make_params

from isa_switch import forced_isa
from methods import fwd_method, wgrad_method
from reference import ref_conv, ref_conv_grad_weight

ROOT = pathlib.Path(__file__).resolve().parents[1]
CDIR = ROOT / "tests" / "c"
ISAS = _depthwise.available_isas()
TOL = {np.float32: 2e-6, np.float64: 1e-13}


def test_isa_switch_reaches_the_igemm_kernels():
    for name in ISAS:
        with forced_isa(name):
            assert _kernels.isa() == name


def run_igemm(x, w, b, stride, padding, dilation, groups, nthreads):
    p = make_params(x.shape, w.shape, None if b is None else b.shape, stride, padding, dilation,
                    False, 0, groups, "test", x.dtype)
    g = p.geom()
    nb = _kernels.igemm_workspace_bytes(g, nthreads, x.itemsize)
    assert nb >= 0
    ws = np.empty(max(nb, 1), np.uint8)
    y = np.full(p.output_shape, np.nan, x.dtype)  # every element must be written
    _kernels.conv_fwd_igemm(g, x.reshape(-1), w.reshape(-1), b, y.reshape(-1), ws, nthreads)
    return y



def check_igemm_forward(rng, name, xs, ws, s, pad, d, groups, dtype, threads, tol=5,
                        same_bits=False):
    """Random x, w and bias of these shapes: run_igemm on instruction set
    ``name`` for each thread count against the float64 reference (max
    error within ``tol`` x TOL of the output's scale; with ``same_bits``,
    every count's output bit-identical to the first's).  Returns x and the
    output's shape (for the weight-gradient checks)."""
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[0]).astype(dtype)
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                   stride=s, pad_before=pad, dilation=d, groups=groups)
    first = None
    with forced_isa(name):
        for nt in threads:
            y = run_igemm(x, w, b, s, pad, d, groups, nt)
            err = np.abs(y - ref).max() / np.abs(ref).max()
            assert err <= tol * TOL[dtype], (name, xs, ws, s, pad, d, groups, nt, err)
            if same_bits and first is not None:
                assert np.array_equal(y, first), (name, xs, ws, nt)
            first = y if first is None else first
    return x, ref.shape

def random_case(rng, nsp, mode="direct"):
    """mode "direct": few output channels per group (the micro-kernel reads
    the band in place); "packed": more than 32, more than 4 input channels
    and a stride above 1 along the last axis (B packed from the band on
    every instruction set); "wide": 33-300 output channels at stride 1, or
    strided with at most 4 input channels (direct on vectors of up to 256
    bits when the wide rows waste little, else packed)."""
    groups = int(rng.choice([1, 1, 2, 3]))
    cig = int(rng.integers(5, 9)) if mode == "packed" else int(rng.integers(1, 7))
    cog = {"direct": lambda: int(rng.integers(1, 14)), "packed": lambda: int(rng.integers(33, 60)),
           "wide": lambda: int(rng.integers(33, 300))}[mode]()
    k = tuple(int(v) for v in rng.integers(1, 4 if nsp > 1 else 6, nsp))
    s = tuple(int(v) for v in rng.integers(1, 4, nsp))
    if mode == "packed":
        s = s[:-1] + (int(rng.integers(2, 4)),)
    elif mode == "wide":
        if rng.random() < 0.5:
            s = (1,) * nsp
        else:
            cig = int(rng.integers(1, 5))
    d = tuple(int(v) for v in rng.integers(1, 3, nsp))
    pad = tuple(int(v) for v in rng.integers(0, 3, nsp))
    hi = {1: 90, 2: 40, 3: 9}[nsp]
    size = tuple(max(int(v), (kk - 1) * dd + 1 - 2 * pp)
                 for v, kk, dd, pp in zip(rng.integers(1, hi, nsp), k, d, pad))
    n = int(rng.integers(1, 4))
    return n, groups, cig, cog, size, k, s, d, pad


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("mode", ["direct", "packed", "wide"])
def test_igemm_random(name, dtype, nsp, mode):
    rng = np.random.default_rng(zlib.crc32(f"{name} {nsp} {np.dtype(dtype).name} {mode}".encode()))
    with forced_isa(name):
        for _ in range(25 if mode == "direct" else 12):
            n, groups, cig, cog, size, k, s, d, pad = random_case(rng, nsp, mode)
            x = rng.standard_normal((n, cig * groups) + size).astype(dtype)
            w = rng.standard_normal((cog * groups, cig) + k).astype(dtype)
            b = rng.standard_normal(cog * groups).astype(dtype) if rng.random() < 0.6 else None
            ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                           None if b is None else b.astype(np.float64),
                           stride=s, pad_before=pad, dilation=d, groups=groups)
            for nt in (1, 2):
                y = run_igemm(x, w, b, s, pad, d, groups, nt)
                err = np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30)
                assert err <= TOL[dtype], (name, x.shape, w.shape, s, pad, d, groups, nt, err)


@pytest.mark.parametrize("name", ISAS)
def test_igemm_small_images_split_channels(name):
    """Small images with many output channels on several threads: the plan
    splits the output channels (chunks of >= 4 MR-row panels: in packed
    mode as few as the call's threads share evenly, so their number
    changes with the thread count) instead of halving the rows where that
    would add micro-panel columns (ig_plan.h), and keeps tiles of several
    rows whole.  Every thread count gives the reference's values,
    bit-identical to one thread (each output is one item's sum)."""
    rng = np.random.default_rng(zlib.crc32(f"small images {name}".encode()))
    with forced_isa(name):
        for n, c, co, h, w_, k in ((1, 8, 96, 14, 14, 3), (2, 5, 130, 7, 7, 3), (1, 3, 72, 17, 17, 3),
                                   (1, 6, 200, 10, 13, 3), (1, 4, 64, 28, 28, 1), (3, 2, 80, 5, 9, 2),
                                   (1, 4, 70, 6, 100, 3)):
            x = rng.standard_normal((n, c, h, w_)).astype(np.float32)
            wt = rng.standard_normal((co, c, k, k)).astype(np.float32)
            b = rng.standard_normal(co).astype(np.float32)
            pad = (k // 2, k // 2)
            ref = ref_conv(x.astype(np.float64), wt.astype(np.float64), b.astype(np.float64),
                           stride=(1, 1), pad_before=pad, dilation=(1, 1), groups=1)
            y1 = run_igemm(x, wt, b, (1, 1), pad, (1, 1), 1, 1)
            err = np.abs(y1 - ref).max() / np.abs(ref).max()
            assert err <= TOL[np.float32], (name, x.shape, co, err)
            for nt in (2, 3, 4):
                assert np.array_equal(run_igemm(x, wt, b, (1, 1), pad, (1, 1), 1, nt), y1), (name, x.shape, co, nt)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_igemm_tiles_of_fewer_panels(name, dtype):
    """Packed layers whose tiles of whole rows run fewer micro-panels and
    columns a few rows shorter (ig_plan.h: ig_plan_make; 28x28 outputs in
    tiles of 12, 12 and 4 rows rather than 14 and 14 on 48-column panels),
    next to ones where they would not (35x35 outputs), strides 1 and 2,
    channels not multiples of the panels, one to three images: the
    reference's values, bit-identical at 1-3 threads."""
    rng = np.random.default_rng(zlib.crc32(f"fewer panels {name} {np.dtype(dtype)}".encode()))
    with forced_isa(name):
        for n, c, co, hw, s in ((2, 40, 72, 56, 2), (1, 36, 150, 28, 1), (1, 12, 40, 144, 2),
                                (3, 20, 48, 54, 1), (1, 24, 40, 70, 2), (2, 16, 100, 35, 1),
                                (1, 10, 36, 240, 2)):
            x = rng.standard_normal((n, c, hw, hw)).astype(dtype)
            wt = rng.standard_normal((co, c, 3, 3)).astype(dtype)
            b = rng.standard_normal(co).astype(dtype)
            ref = ref_conv(x.astype(np.float64), wt.astype(np.float64), b.astype(np.float64),
                           stride=(s, s), pad_before=(1, 1), dilation=(1, 1), groups=1)
            y1 = run_igemm(x, wt, b, (s, s), (1, 1), (1, 1), 1, 1)
            err = np.abs(y1 - ref).max() / np.abs(ref).max()
            assert err <= TOL[dtype], (name, x.shape, co, s, err)
            for nt in (2, 3):
                assert np.array_equal(run_igemm(x, wt, b, (s, s), (1, 1), (1, 1), 1, nt), y1), (name, x.shape, co, nt)


@pytest.mark.parametrize("name", ISAS)
def test_igemm_long_rows_in_pieces(name):
    """Output rows of >= 512 positions run as pieces (ig_plan.h): of whole
    micro-panels, the last piece shorter, or, where one row in packed mode
    is the whole problem, the row's vectors spread over a multiple of the
    split threads' count of pieces (ig_tile_w: 799, 863, 1001 and 3000
    outputs of 1-D layers and a 2-D image of one 1300-output row, pieces of
    unequal vector counts and a last partial vector);
    packed and direct mode, 1-D and 2-D, strides 1-2, against the
    reference and bit-identical for 1-4 threads."""
    rng = np.random.default_rng(zlib.crc32(f"long rows {name}".encode()))
    with forced_isa(name):
        for xs, co, k, s, pad in (((1, 6, 1599), 40, (3,), (2,), (0,)), ((2, 3, 1100), 8, (5,), (1,), (2,)),
                                  ((1, 4, 2, 700), 36, (1, 3), (1, 1), (0, 1)),
                                  ((1, 2, 3, 1030), 5, (3, 3), (1, 2), (1, 1)),
                                  ((1, 5, 520), 50, (3,), (1,), (1,)),
                                  ((1, 64, 1599), 100, (3,), (2,), (0,)),
                                  ((1, 48, 1727), 70, (3,), (2,), (0,)),
                                  ((1, 40, 1001), 130, (3,), (1,), (1,)),
                                  ((1, 24, 3000), 260, (5,), (1,), (2,)),
                                  ((1, 16, 1, 2600), 100, (1, 3), (1, 2), (0, 1))):
            x = rng.standard_normal(xs).astype(np.float32)
            wt = rng.standard_normal((co, xs[1]) + k).astype(np.float32)
            b = rng.standard_normal(co).astype(np.float32)
            nd = (1,) * len(k)
            ref = ref_conv(x.astype(np.float64), wt.astype(np.float64), b.astype(np.float64),
                           stride=s, pad_before=pad, dilation=nd, groups=1)
            y1 = run_igemm(x, wt, b, s, pad, nd, 1, 1)
            err = np.abs(y1 - ref).max() / np.abs(ref).max()
            assert err <= TOL[np.float32], (name, xs, co, err)
            for nt in (2, 3, 4):
                assert np.array_equal(run_igemm(x, wt, b, s, pad, nd, 1, nt), y1), (name, xs, co, nt)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("nsp", [1, 2])
def test_igemm_direct_unequal_padding(name, nsp):
    """Direct mode at stride 1 lets consecutive band rows share their zero
    columns (pitch win - min(left, right pad)): left and right padding of
    every size 0-3 (the stride-1 adjoints and 'same' with even kernels give
    unequal ones), dilation 1-2, 1 and 2 threads, against the reference."""
    rng = np.random.default_rng(zlib.crc32(f"unequal {name} {nsp}".encode()))
    with forced_isa(name):
        for _ in range(30):
            groups = int(rng.choice([1, 2]))
            cig, cog = int(rng.integers(1, 5)), int(rng.integers(1, 14))
            k = tuple(int(v) for v in rng.integers(1, 5, nsp))
            d = tuple(int(v) for v in rng.integers(1, 3, nsp))
            pl = tuple(int(v) for v in rng.integers(0, 4, nsp))
            pr = tuple(int(v) for v in rng.integers(0, 4, nsp))
            size = tuple(int(v) for v in rng.integers(1, 20, nsp))
            out = tuple(s_ + a + b - (kk - 1) * dd for s_, a, b, kk, dd in zip(size, pl, pr, k, d))
            if min(out) < 1:
                continue
            n = int(rng.integers(1, 3))
            dt = np.float32 if rng.random() < 0.5 else np.float64
            x = rng.standard_normal((n, cig * groups) + size).astype(dt)
            w = rng.standard_normal((cog * groups, cig) + k).astype(dt)
            b = rng.standard_normal(cog * groups).astype(dt)
            lead = 3 - nsp
            g = (n, groups, cig * groups, cog * groups, (1,) * lead + size, (1,) * lead + out,
                 (1,) * lead + k, (1, 1, 1), (0,) * lead + pl, (1,) * lead + d)
            ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                           stride=1, pad_before=pl, pad_after=pr, dilation=d, groups=groups)
            for nt in (1, 2):
                nb = _kernels.igemm_workspace_bytes(g, nt, x.itemsize)
                ws = np.empty(max(nb, 1), np.uint8)
                y = np.full((n, cog * groups) + out, np.nan, dt)
                _kernels.conv_fwd_igemm(g, x.reshape(-1), w.reshape(-1), b, y.reshape(-1), ws, nt)
                err = np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30)
                assert err <= TOL[dt], (name, x.shape, w.shape, pl, pr, d, groups, nt, err)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_igemm_direct_every_row_width(name, dtype):
    """Direct mode copies band rows and output rows in 16-byte pieces, the
    last one overlapping the one before: every width 1-21 (shorter than a
    piece, one piece, a piece and a bit, several), input rows with and
    without padding columns, a bias, against the reference."""
    rng = np.random.default_rng(zlib.crc32(f"widths {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        for wid in range(1, 22):
            for pad, k in ((0, 1), (1, 3), (2, 3)):
                x = rng.standard_normal((2, 6, 3, wid)).astype(dtype)
                w = rng.standard_normal((10, 3, 1, k)).astype(dtype)
                b = rng.standard_normal(10).astype(dtype)
                if wid + 2 * pad < k:
                    continue
                ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                               stride=1, pad_before=(0, pad), dilation=1, groups=2)
                for nt in (1, 2):
                    y = run_igemm(x, w, b, 1, (0, pad), 1, 2, nt)
                    err = np.abs(y - ref).max() / np.abs(ref).max()
                    assert err <= TOL[dtype], (name, wid, pad, k, nt, err)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_igemm_half_row_kernel(name, dtype):
    """At most MR / 2 output channels a group (1-4 on the 8-row kernels,
    1-2 on the 4-row ones) the direct mode runs the half-row kernel over
    twice the columns: every output width 1-40 (micro-tiles of one vector
    to twice NR, the last one partial), tiles of whole rows and pieces of
    long ones, 1-32 groups, strides 1-2, dilation 1-2, 1-3 threads (the same
    bits at each), against the reference; and the next channel count, on
    the full kernel, beside it."""
    rng = np.random.default_rng(zlib.crc32(f"half {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        mr = 8 if name.startswith(("avx512", "neon")) else 4
    for cog in list(range(1, mr // 2 + 1)) + [mr // 2 + 1]:
        for wid in list(range(1, 41, 3)) + [int(rng.integers(200, 3000))]:
            groups = int(rng.choice([1, 3, 32]))
            cig = int(rng.integers(1, 6))
            s = (1, int(rng.integers(1, 3)))
            d = (1, int(rng.integers(1, 3)))
            k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
            pad = (int(rng.integers(0, 2)), int(rng.integers(0, 3)))
            h = 1 if wid > 100 else int(rng.integers(1, 12))
            wid = max(wid, (k[1] - 1) * d[1] + 1 - 2 * pad[1])
            h = max(h, k[0] - 2 * pad[0])
            check_igemm_forward(rng, name, (int(rng.integers(1, 3)), cig * groups, h, wid),
                                (cog * groups, cig) + k, s, pad, d, groups, dtype, (1, 2, 3),
                                tol=1, same_bits=True)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("shape", [
    # (x shape, w shape, stride, padding, dilation, groups): tiles of pieces of
    # long rows, many channel panels, a deep K (several K blocks), stride 2
    ((1, 3, 1, 1500), (5, 3, 1, 7), 1, (0, 3), 1, 1),
    ((2, 40, 9, 700), (9, 40, 3, 3), (1, 2), 1, (1, 2), 1),
    ((1, 300, 6, 6), (13, 300, 3, 3), 1, 1, 1, 1),
    ((3, 16, 30, 31), (16, 4, 3, 3), 2, 1, 1, 4),
    ((1, 8, 5, 5, 5), (7, 8, 3, 3, 3), 1, 1, 1, 1),
    # packed B (> 32 channels per group): panels in one row, wrapping one row
    # (two runs), wrapping two rows (gather), strides 2 and 3, a tile edge
    ((2, 12, 13, 28), (40, 12, 3, 3), 1, 1, 1, 1),
    ((1, 10, 9, 5), (36, 10, 3, 3), 1, 1, 1, 1),
    ((2, 6, 17, 57), (70, 6, 3, 3), (2, 3), (1, 0), (1, 2), 1),
    ((1, 64, 6, 6), (66, 32, 3, 3), 1, 1, 1, 2),
    # one small image on several threads: the tiles stay a micro-panel wide
    # and the output channels are split into chunks (packed and direct)
    ((1, 96, 7, 7), (192, 96, 3, 3), 2, 1, 1, 1),
    ((1, 24, 5, 5), (30, 24, 3, 3), 1, 1, 1, 1),
])
def test_igemm_shapes(name, shape):
    xs, ws, s, pad, d, groups = shape
    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64):
        check_igemm_forward(rng, name, xs, ws, s, pad, d, groups, dtype, (1, 2, 3))


def test_igemm_is_the_forward_of_kxk_and_strided_convs():
    g3 = make_params((2, 16, 20, 20), (8, 16, 3, 3), None, 1, 1, 1, False, 0, 1, "t")
    g1 = make_params((2, 16, 20, 20), (8, 16, 1, 1), None, 1, 0, 1, False, 0, 1, "t")
    g1s = make_params((2, 16, 20, 20), (8, 16, 1, 1), None, 2, 0, 1, False, 0, 1, "t")
    assert fwd_method(g3, 2, 4) == "igemm"
    assert fwd_method(g1, 2, 4) == "gemm"
    assert fwd_method(g1s, 2, 8) == "igemm"


@pytest.mark.parametrize("name", ISAS)
def test_patches_take_im2col(name):
    """Non-overlapping patches (kernel == stride, no padding, dilation 1)
    run im2col + one GEMM (cc_is_patch), except 3-D ones with depth taps
    and, with AVX-512's kernels, float64 ones and float32 ones of a
    reduction shorter than 64, which run igemm; a kernel past its stride, padding or dilation keeps them off
    that rule; the results match the reference (1-3-D, groups, float32/64,
    1-3 threads)."""
    def method(xs, ws, s, p=0, d=1, groups=1, es=4):
        return fwd_method(make_params(xs, ws, None, s, p, d, False, 0, groups, "t"), 2, es)

    wide = name.startswith("avx512")
    with forced_isa(name):
        assert method((8, 3, 224, 224), (96, 3, 4, 4), 4) == ("igemm" if wide else "im2col")   # K = 48
        assert method((2, 1, 16000), (512, 1, 10), 10) == ("igemm" if wide else "im2col")      # K = 10
        assert method((8, 3, 224, 224), (768, 3, 16, 16), 16) == "im2col"
        assert method((8, 3, 224, 224), (768, 3, 16, 16), 16, es=8) == ("igemm" if wide else "im2col")
        assert method((4, 64, 500), (64, 64, 2), 2) == "im2col"
        assert method((4, 64, 500), (64, 64, 2), 2, es=8) == ("igemm" if wide else "im2col")
        assert method((2, 8, 8, 12, 12), (16, 8, 2, 2, 2), 2) == "igemm"                      # 3-D
        assert method((2, 8, 8, 12, 12), (16, 8, 2, 2, 2), 2, es=8) == "igemm"
        assert method((2, 8, 8, 12, 12), (16, 8, 1, 2, 2), (1, 2, 2)) == (                    # one depth
            "igemm" if wide else "im2col")                                                      # tap, K = 32
        assert method((2, 32, 8, 12, 12), (16, 32, 1, 2, 2), (1, 2, 2)) == "im2col"           # K = 128
        assert method((4, 64, 56, 56), (64, 16, 2, 2), 2, groups=4) == "im2col"
        assert method((4, 64, 56, 56), (64, 64, 1, 2), (1, 2)) == "im2col"
        assert method((8, 3, 224, 224), (96, 3, 4, 4), 4, p=1) != "im2col"       # padding
        assert method((4, 64, 56, 56), (64, 64, 3, 3), 2, p=1) != "im2col"       # overlapping
        assert method((4, 64, 500), (64, 64, 2), 2, d=2) != "im2col"             # dilated
        assert method((4, 64, 56, 56), (64, 64, 2, 2), (2, 1)) != "im2col"       # stride != kernel
    if name != ISAS[0]:
        return   # the results below run on the CPU's own kernels, once
    rng = np.random.default_rng(31)
    for _ in range(24):
        nsp = int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 5, nsp))
        if all(v == 1 for v in k):
            continue
        groups = int(rng.choice([1, 2]))
        cig, cog = int(rng.integers(1, 9)), int(rng.integers(1, 40))
        size = tuple(int(v) * kk + int(rng.integers(0, kk)) for v, kk in zip(rng.integers(2, 9, nsp), k))
        dtype = np.float32 if rng.random() < 0.5 else np.float64
        x = rng.standard_normal((int(rng.integers(1, 3)), cig * groups) + size).astype(dtype)
        w = rng.standard_normal((cog * groups, cig) + k).astype(dtype)
        b = rng.standard_normal(cog * groups).astype(dtype)
        K = cig * math.prod(k)
        want = "igemm" if (nsp == 3 and k[0] >= 2) or (
            _kernels.isa().startswith("avx512") and (dtype == np.float64 or K < 64)) else "im2col"
        assert method(x.shape, w.shape, k, groups=groups, es=np.dtype(dtype).itemsize) == want
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                       stride=k, pad_before=(0,) * nsp, dilation=(1,) * nsp, groups=groups)
        for nt in (1, 3):
            old = cconv.get_num_threads()
            cconv.set_num_threads(nt)
            try:
                y = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}[nsp](x, w, b, k, 0, 1, groups)
            finally:
                cconv.set_num_threads(old)
            assert np.abs(y - ref).max() / np.abs(ref).max() <= TOL[dtype], (x.shape, w.shape, nt)


@pytest.mark.parametrize("name", ISAS)
def test_small_deep_images_take_im2col_only_for_few_columns(name):
    """Small images, many output channels, a deep reduction: im2col + one
    GEMM over the batch where the batch has few output positions in all
    (< 256) or the channels are very many on very small images; igemm
    otherwise (heuristics-2026-11-30-amd-epyc-avx2.md: it won 0.6-0.9x there, 1 and 2
    threads).  With 16-lane float32 vectors the image's size decides: im2col
    for <= 56 positions with >= 128 output channels (heuristics-2026-12-01-intel-xeon-avx512.md),
    but for one or two images of >= 256 channels, where igemm reads the
    weight in place (gemm_conv.c: cc_small_deep)."""
    def m(n, c, co, hw, k=3, s=1):
        g = make_params((n, c, hw, hw), (co, c, k, k), None, s, k // 2, 1, False, 0, 1, "t")
        return {nt: fwd_method(g, nt, 4) for nt in (1, 2)}

    with forced_isa(name):
        wide = LANES[name][np.float32] >= 16
        # on Zen 4's 256-bit units the 16-lane Winograd rule takes 3x3
        # stride-1 7x7 images of >= 64 channels with >= 128 tiles in the
        # batch before both (tests/test_winograd_dense.py)
        w7 = "winograd" if wide and _kernels.wino_small() else None
        assert set(m(1, 256, 256, 14).values()) == {"igemm" if wide else "im2col"}  # 196 positions
        assert set(m(4, 256, 256, 7).values()) == {"im2col"}    # 4 x 49
        assert set(m(8, 512, 512, 7).values()) == {w7 or "im2col"}    # ResNet-50 stage 4
        assert set(m(2, 256, 256, 14).values()) == {"igemm"}    # 2 x 196
        assert set(m(8, 256, 128, 7, k=5).values()) == {"im2col" if wide else "igemm"}
        # not small_deep on narrow vectors; a 3x3 stride-1 layer of 128
        # tiles in the batch: their Winograd rule takes it before igemm
        # (tests/test_winograd_dense.py)
        assert set(m(8, 1024, 256, 7).values()) == {w7 or ("im2col" if wide else "winograd")}
        assert set(m(8, 1024, 256, 7, k=5).values()) == {"im2col" if wide else "igemm"}
        assert set(m(8, 128, 256, 16, k=4, s=2).values()) == {"igemm"}  # DCGAN grad_input, 8x8
        # 8x8 images (64 positions), 96 channels on 7x7: igemm, or on narrow
        # vectors Winograd (16 tiles x 8 images)
        assert set(m(8, 256, 256, 8).values()) == {w7 or ("igemm" if wide else "winograd")}
        assert set(m(8, 96, 96, 7).values()) == {w7 or ("igemm" if wide else "winograd")}
        assert set(m(8, 16, 256, 7).values()) == {"igemm"}      # reduction 144 < 1024
        # a reduction of 256-1023 over at most 128 positions in all: im2col
        assert set(m(1, 256, 512, 7, k=1, s=2).values()) == {"im2col"}  # 16 positions
        assert set(m(1, 64, 128, 7).values()) == {"im2col"}     # reduction 576, 49 positions
        assert set(m(2, 96, 128, 8).values()) == {"im2col"}     # 2 x 64
        # float64: 64-byte vectors (AVX-512, 8 lanes) take the image-size
        # rule too (single 14x14 images of 256 channels: Winograd, 12x12:
        # igemm, 7x7 of 512: im2col); narrower ones the positions' rule
        def m64(n, c, co, hw):
            g = make_params((n, c, hw, hw), (co, c, 3, 3), None, 1, 1, 1, False, 0, 1, "t",
                            np.float64)
            return {nt: fwd_method(g, nt, 8) for nt in (1, 2)}

        wide64 = LANES[name][np.float64] >= 8
        assert set(m64(1, 256, 256, 14).values()) == {"winograd" if wide64 else "im2col"}
        assert set(m64(1, 256, 256, 12).values()) == {"igemm" if wide64 else "im2col"}
        assert set(m64(1, 512, 512, 7).values()) == {"im2col"}
        # one or two float32 images of >= 256 output channels on 16-lane
        # kernels: igemm, which reads the weight in place there
        # (CCONV_IG_WEIGHT_INPLACE, on by default); 128 channels and 4
        # images stay on im2col
        inplace = wide and _kernels.ig_weight_inplace()
        for n, c, co, hw in ((1, 512, 512, 7), (2, 512, 512, 7), (1, 256, 256, 7),
                             (1, 1024, 512, 7), (1, 512, 512, 4)):
            assert set(m(n, c, co, hw).values()) == {"igemm" if inplace else "im2col"}, (n, c, hw)
        assert set(m(1, 128, 128, 7).values()) == {"im2col"}
        assert set(m(4, 512, 512, 7).values()) == {"im2col"}
        assert set(m(1, 40, 48, 12, k=5).values()) == {"igemm"}  # 144 positions
        assert set(m(4, 64, 64, 7).values()) == {"igemm"}       # 4 x 49
        assert set(m(1, 16, 64, 7).values()) == {"igemm"}       # reduction 144


def test_bad_geometry_is_a_value_error():
    good = make_params((1, 4, 8, 8), (4, 4, 3, 3), None, 1, 1, 1, False, 0, 1, "t").geom()
    bad_groups = (1, 3, 4, 4) + good[4:]            # channels not divisible by groups
    bad_stride = good[:7] + ((1, 0, 1),) + good[8:]  # a zero stride
    for g in (bad_groups, bad_stride):
        assert not _kernels.applies("fwd", "implicit_gemm", g, 1, 4)
        assert _kernels.igemm_workspace_bytes(g, 1, 4) == -1
        with pytest.raises(ValueError):
            _kernels.conv_fwd_igemm(g, np.zeros(256, np.float32), np.zeros(144, np.float32), None,
                                    np.zeros(256, np.float32), np.empty(1 << 20, np.uint8), 1)
    with pytest.raises(ValueError, match="10 entries"):
        _kernels.workspace_bytes("fwd", "implicit_gemm", good[:9], 1, 4)
    for g in (bad_groups, bad_stride):
        for m in _kernels.METHODS:
            assert not _kernels.applies("wgrad", m, g, 1, 4)
            with pytest.raises(ValueError, match="geometry"):
                _kernels.workspace_bytes("wgrad", m, g, 1, 4)
        with pytest.raises(ValueError):
            _kernels.conv_wgrad("im2col", g, np.zeros(256, np.float32), np.zeros(256, np.float32),
                                np.zeros(144, np.float32), np.empty(1 << 20, np.uint8), 1)
    with pytest.raises(ValueError, match="10 entries"):
        _kernels.workspace_bytes("wgrad", "im2col", good[:9], 1, 4)


def test_wgrad_short_workspace_is_a_memory_error():
    # rows of 17 outputs: the band kernel on every instruction set (>= 1 vector)
    p = make_params((2, 8, 17, 17), (8, 2, 3, 3), None, 1, 1, 1, False, 0, 4, "t")
    g = p.geom()
    assert wgrad_method(p, 1, 4) == "igemm"
    with pytest.raises(MemoryError):
        _kernels.conv_wgrad("implicit_gemm", g, np.zeros(2 * 8 * 289, np.float32),
                            np.zeros(2 * 8 * 289, np.float32),
                            np.zeros(8 * 2 * 9, np.float32), np.empty(16, np.uint8), 1)


def test_kernels_set_isa_rejects_unknown_names():
    prev = _kernels.isa()
    for bad in ("sse9", "AVX2 ", "neon2"):
        with pytest.raises(ValueError, match="cannot run here"):
            _kernels.set_isa(bad)
    assert _kernels.isa() == prev


def test_igemm_repeatable():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 24, 17, 19)).astype(np.float32)
    w = rng.standard_normal((20, 24, 3, 3)).astype(np.float32)
    y1 = run_igemm(x, w, None, 1, 1, 1, 1, 1)
    y2 = run_igemm(x, w, None, 1, 1, 1, 1, 2)
    assert np.array_equal(y1, y2)  # the same arithmetic whatever the thread count


def test_igemm_rejects_small_workspace():
    g = make_params((1, 4, 8, 8), (4, 4, 3, 3), None, 1, 1, 1, False, 0, 1, "t").geom()
    x = np.zeros(256, np.float32)
    w = np.zeros(144, np.float32)
    y = np.zeros(256, np.float32)
    with pytest.raises(MemoryError):
        _kernels.conv_fwd_igemm(g, x, w, None, y, np.empty(16, np.uint8), 1)


# ---- the C micro-kernel check: native, AVX-512 on SIMDe, NEON under qemu ------

def _missing(mode):
    return c_programs.missing(mode, ISAS)


@pytest.mark.skipif(_missing("native") is not None, reason=str(_missing("native")))
def test_c_native():
    out = c_programs.run("ig_check", "native", "200", "1")
    for name in c_programs.cpu_isas(ISAS):
        assert name in out.splitlines()[0]


@pytest.mark.skipif(_missing("asan") is not None, reason=str(_missing("asan")))
def test_c_asan():
    """No read or write outside the arrays (the A panel's transposing pack
    reads a source that ends at its last row's last element; masked row
    copies; the weight gradient's rows), under AddressSanitizer and UBSan."""
    out = c_programs.run("ig_check", "asan", "60", "3")
    assert "0 failures" in out


@pytest.mark.skipif(_missing("simde") is not None, reason=str(_missing("simde")))
def test_c_avx512_on_simde():
    out = c_programs.run("ig_check", "simde", "100", "2")
    assert "avx512" in out.splitlines()[0]


@pytest.mark.skipif(_missing("aarch64") is not None, reason=str(_missing("aarch64")))
def test_c_neon_under_qemu():
    out = c_programs.run("ig_check", "aarch64", "100", "3")
    assert "neon" in out.splitlines()[0]


LANES = {"scalar": {np.float32: 1, np.float64: 1}, "avx2": {np.float32: 8, np.float64: 4},
         "avx512": {np.float32: 16, np.float64: 8}, "neon": {np.float32: 4, np.float64: 2}}


def run_wgrad(x, gy, w_shape, stride, padding, dilation, groups, nthreads):
    p = make_params(x.shape, w_shape, None, stride, padding, dilation, False, 0, groups, "test",
                    x.dtype)
    g = p.geom()
    method = wgrad_method(p, nthreads, x.itemsize)
    cm = {"igemm": "implicit_gemm", "gemm": "gemm_1x1"}.get(method, method)
    nb = _kernels.workspace_bytes("wgrad", cm, g, nthreads, x.itemsize)
    ws = np.empty(max(nb, 1), np.uint8)
    gw = np.full(w_shape, np.nan, x.dtype)  # every element must be written
    _kernels.conv_wgrad(cm, g, x.reshape(-1), gy.reshape(-1), gw.reshape(-1), ws, nthreads)
    return gw, method


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_wgrad_igemm_random(name, dtype, nsp):
    """Grouped weight gradient with <= 32 output channels per group: random
    geometries (channel counts off the MRW x NRW blocks, strides 1-3,
    dilation, padding, rows of one to several vectors with every tail), 1
    and 2 threads, against the float64 reference; the result is
    bit-identical for both thread counts (one thread sums each group, in a
    fixed order).  Rows narrower than a vector run im2col (the kernel's
    masked path is checked from C, tests/c/ig_check.c)."""
    rng = np.random.default_rng(zlib.crc32(f"wgrad {name} {nsp} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        for _ in range(20):
            n, _g, cig, cog, size, k, s, d, pad = random_case(rng, nsp)
            # every fourth case ungrouped with <= 8 output channels (igemm
            # too, unless 1x1); the rest grouped, <= 32 per group
            groups = 1 if _ % 4 == 3 else int(rng.integers(2, 5))
            cog = int(rng.integers(1, 9 if groups == 1 else 33))
            x = rng.standard_normal((n, cig * groups) + size).astype(dtype)
            w_shape = (cog * groups, cig) + k
            out = tuple((i + 2 * pp - (kk - 1) * dd - 1) // ss + 1
                        for i, pp, kk, dd, ss in zip(size, pad, k, d, s))
            gy = rng.standard_normal((n, cog * groups) + out).astype(dtype)
            ref = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w_shape,
                                       stride=s, pad_before=pad, dilation=d, groups=groups)
            got = {}
            # rows narrower than a vector (or than 12 on 16 lanes) go to
            # im2col (checked the same way)
            one = all(v == 1 for v in k) and all(v == 1 for v in s) and all(v == 0 for v in pad)
            want = ("igemm" if out[-1] >= min(LANES[name][dtype], 12) and not (groups == 1 and one)
                    else "gemm" if one else "im2col")
            for nt in (1, 2):
                gw, method = run_wgrad(x, gy, w_shape, s, pad, d, groups, nt)
                assert method == want, (x.shape, w_shape, groups, method)
                err = np.abs(gw - ref).max() / max(np.abs(ref).max(), 1e-30)
                assert err <= 5 * TOL[dtype], (name, x.shape, w_shape, s, pad, d, groups, nt, err)
                got[nt] = gw
            if want == "igemm":  # (im2col sums per-thread partials)
                assert np.array_equal(got[1], got[2]), "thread count changed the weight gradient"


def test_wgrad_method():
    def m(xs, ws, groups):
        return wgrad_method(make_params(xs, ws, None, 1, 1, 1, False, 0, groups, "t"), 2, 4)
    lanes = LANES[_kernels.isa()][np.float32]
    # 16-128 input channels per group at stride 1: the shifted products,
    # whatever the output channels
    assert m((8, 512, 17, 17), (512, 16, 3, 3), 32) == "shift"     # ResNeXt: 16 per group
    assert m((2, 64, 17, 17), (64, 32, 3, 3), 2) == "shift"        # 32 per group
    assert m((2, 66, 17, 17), (66, 33, 3, 3), 2) == "shift"        # 33 per group
    assert m((2, 64, 17, 17), (16, 64, 3, 3), 1) == "shift"        # not grouped, 16
    assert m((2, 64, 17, 17), (8, 64, 3, 3), 1) == "shift"         # not grouped, 8 out
    assert m((2, 64, 17, 17), (3, 64, 3, 3), 1) == "shift"         # ... 3 (to RGB)
    assert m((2, 128, 17, 17), (128, 128, 3, 3), 1) == "shift"     # 128 input channels
    assert m((2, 256, 17, 17), (256, 256, 3, 3), 1) == "im2col"    # 256 input channels
    # the implicit GEMM's own rule where the shifted products are not wanted
    # (8 input channels per group, but on the 8-lane float32 kernels, whose
    # one vector they fill; rows of 17 outputs and more: at least one
    # vector on every instruction set)
    eight = lanes == 8
    assert m((8, 256, 17, 17), (512, 8, 3, 3), 32) == ("shift" if eight else "igemm")
    assert m((2, 16, 17, 17), (64, 8, 3, 3), 2) == ("shift" if eight else "igemm")
    assert m((2, 16, 17, 17), (66, 8, 3, 3), 2) == ("shift" if eight else "im2col")
    assert m((2, 8, 17, 17), (16, 8, 3, 3), 1) == ("shift" if eight else "im2col")
    # output rows narrower than a vector, or than 12 on 16 lanes: im2col
    # (batches the small images); 14x14 ResNeXt rows are one AVX2 vector and
    # one masked AVX-512 vector at 14 of its 16 lanes
    need = min(lanes, 12)
    for xs, ws, g, width in [((8, 16, 7, 7), (64, 8, 3, 3), 2, 7),
                             ((8, 256, 14, 14), (512, 8, 3, 3), 32, 14),
                             ((8, 16, 12, 12), (64, 8, 3, 3), 2, 12),
                             ((8, 16, 11, 11), (64, 8, 3, 3), 2, 11)]:
        assert m(xs, ws, g) == ("shift" if eight else "igemm" if width >= need else "im2col")


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sw", [2, 4])
def test_igemm_column_phase_split(name, dtype, sw):
    """Column strides 2 and 4 split the band's rows into their column
    phases by one call per row phase (rows2, rows4) between element-wise
    heads and tails: every left padding 0-5 and input width around the
    vector lengths (the shared range empty, one element, whole vectors and a
    masked tail), kernels narrower and wider than the stride, row strides
    1-3 (row phases), dilation 1-2, 1-D to 3-D, direct and packed modes
    (4 and 40 output channels), groups, 1 and 2 threads, against the
    reference and the same bits at both counts."""
    rng = np.random.default_rng(zlib.crc32(f"phases {sw} {name} {np.dtype(dtype).name}".encode()))
    for it in range(30):
        nsp = (1, 2, 2, 3)[it % 4]
        kw_ = int(rng.integers(1, 2 * sw + 2))
        dw = int(rng.integers(1, 3))
        pw = int(rng.integers(0, 6))
        wid = int(rng.choice([1, 2, 3, 5, 7, 15, 16, 17, 31, 33, 47, 64, 65, 97, 130]))
        wid = max(wid * (1 if nsp == 3 else 2), (kw_ - 1) * dw + 1 - 2 * pw)
        k = tuple(int(v) for v in rng.integers(1, 4, nsp - 1)) + (kw_,)
        s = tuple(int(v) for v in rng.integers(1, 4, nsp - 1)) + (sw,)
        d = tuple(int(v) for v in rng.integers(1, 3, nsp - 1)) + (dw,)
        pad = tuple(int(v) for v in rng.integers(0, 2, nsp - 1)) + (pw,)
        lead = tuple(max(int(v), (kk - 1) * dd + 1 - 2 * pp)
                     for v, kk, dd, pp in zip(rng.integers(1, 9, nsp - 1), k, d, pad))
        groups = int(rng.choice([1, 2]))
        cig, cog = int(rng.integers(1, 4)), int(rng.choice([4, 40]))
        check_igemm_forward(rng, name, (int(rng.integers(1, 3)), cig * groups) + lead + (wid,),
                            (cog * groups, cig) + k, s, pad, d, groups, dtype, (1, 2),
                            tol=2, same_bits=True)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_igemm_wide_column_strides(name, dtype):
    """Column strides of 8 and more split the band's rows into their phases
    by a tiled transpose (ig_band.inc, IG_PHASE_BLOCKED_MIN, tiles of 8
    places x 64 phases), strides 3 and 5-7 by per-phase gathers (2 and 4:
    test_igemm_column_phase_split): strides across
    the tile edges (4-9, 63-65, 130, 256), 3-D, kernels narrower and wider
    than the stride, left and right
    padding (the first and last tiles of a row read past the image),
    dilation, rows outside the image (2-D padding), output rows long enough
    to run in pieces (>= 512 positions), packed and direct mode; forward
    and the weight gradient, against the reference, 1 and 2 threads."""
    rng = np.random.default_rng(zlib.crc32(f"wide strides {name} {np.dtype(dtype).name}".encode()))
    cases = [
        # (x shape, w shape, stride, padding, dilation)
        ((3, 1, 16000), (16, 1, 1024), 256, 0, 1),      # Conv-TasNet-like encoder
        ((2, 2, 4000), (40, 2, 20), 9, 5, 1),
        ((1, 3, 9000), (7, 3, 64), 64, 31, 1),
        ((2, 1, 5000), (5, 1, 70), 65, 40, 1),
        ((1, 2, 3000), (9, 2, 5), 63, 4, 2),             # kernel narrower than the stride
        ((1, 1, 40000), (3, 1, 40), 8, 19, 1),           # 5000 outputs: pieces of rows
        ((1, 2, 2600), (6, 2, 300), 130, 140, 1),
        ((2, 3, 11, 700), (8, 3, 3, 24), (2, 8), (1, 10), (1, 1)),
        ((1, 2, 6, 900), (40, 2, 2, 33), (1, 16), (1, 3), (2, 2)),
        # strides 4-7 (per-phase gathers, their bounds without divisions)
        ((2, 3, 9, 60), (5, 3, 3, 5), (1, 4), (1, 2), (1, 1)),
        ((1, 2, 8, 50), (40, 2, 2, 7), (2, 5), (1, 3), (1, 2)),
        ((1, 2, 6, 90), (3, 2, 3, 9), (1, 7), (1, 4), (1, 1)),
        ((2, 4, 5, 9, 30), (6, 4, 3, 3, 3), (2, 4, 4), (1, 1, 0), (1, 1, 1)),
        ((1, 3, 4, 7, 41), (36, 3, 2, 2, 6), (1, 3, 6), (0, 1, 5), (1, 1, 1)),
    ]
    for xs, ws, s, pad, d in cases:
        x, yshape = check_igemm_forward(rng, name, xs, ws, s, pad, d, 1, dtype, (1, 2))
        gy = rng.standard_normal(yshape).astype(dtype)
        rgw = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), ws, stride=s,
                                   pad_before=pad, dilation=d, groups=1)
        with forced_isa(name):
            for nt in (1, 2):
                gw, method = run_wgrad(x, gy, ws, s, pad, d, 1, nt)
                err = np.abs(gw - rgw).max() / np.abs(rgw).max()
                assert err <= 20 * TOL[dtype], (name, method, xs, ws, s, pad, d, nt, err)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_igemm_narrow_tiles_under_wide_kernels(name, dtype):
    """Few output channels (direct mode's range) but tiles much narrower
    than the kernel: one or two output columns under a kernel as wide as
    the row (a stride that leaves one output column is taken as 1) would
    make direct mode compute a pitch of the kernel's width per kept column
    (233x, 0.4 GFLOP/s); ig_plan_make packs B there (IG_PACK_COST).  Every
    ISA, 1 and 2 threads, against the reference; groups, padding,
    dilation, 3-D."""
    rng = np.random.default_rng(zlib.crc32(f"narrow tiles {name} {np.dtype(dtype).name}".encode()))
    cases = [
        # (x shape, w shape, stride, padding, dilation, groups)
        ((2, 16, 30, 233), (16, 16, 6, 233), (1, 170), (0, 37), (1, 1), 1),
        ((3, 1, 24, 152), (32, 1, 1, 128), (4, 118), (0, 0), (1, 1), 1),
        ((2, 4, 40, 40), (8, 2, 3, 40), (1, 1), (1, 0), (1, 1), 2),
        ((1, 3, 20, 12), (5, 3, 5, 5), (1, 1), (2, 0), (1, 2), 1),
        ((1, 2, 4, 10, 12), (4, 2, 2, 3, 12), (1, 1, 1), (0, 1, 0), (1, 1, 1), 1),
        ((2, 6, 64, 2), (16, 6, 5, 5), (1, 1), (2, 2), (1, 1), 1),
    ]
    for xs, ws, s, pad, d, groups in cases:
        check_igemm_forward(rng, name, xs, ws, s, pad, d, groups, dtype, (1, 2))


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_igemm_large_bands_by_k_block(name, dtype):
    """Packed mode with a band above IG_BAND_WHOLE_BYTES (ig_plan.h) builds
    it one K block at a time, from the input channels that block reads,
    and prefetches the next block's rows: blocks of whole channels (3x3,
    5x5, 2-tap 1-D), channels cut into equal blocks where a channel's taps
    outnumber a block (3x7x7 = 147 and 17x17 = 289 taps), 3-D with depth
    taps outside the input (padding 2, dilation), rows outside the image,
    1-D rows in pieces, groups, stride 1 and 2, bands past 1 MiB; against
    the reference, each thread count bit-identical to one thread."""
    rng = np.random.default_rng(zlib.crc32(f"k blocks {name} {np.dtype(dtype).name}".encode()))
    cases = [
        # (x shape, w shape, stride, padding, dilation, groups)
        ((2, 96, 37, 41), (40, 96, 3, 3), (2, 2), (1, 1), (1, 1), 1),
        ((1, 70, 30, 33), (36, 70, 5, 5), (1, 2), (2, 0), (1, 1), 1),
        ((1, 64, 1599), (48, 64, 3), (2,), (0,), (1,), 1),
        ((2, 300, 900), (34, 150, 2), (2,), (1,), (1,), 2),
        ((1, 12, 9, 40, 40), (35, 12, 3, 7, 7), (1, 2, 2), (2, 3, 3), (2, 1, 1), 1),
        ((1, 20, 60, 62), (33, 20, 17, 17), (2, 3), (8, 8), (1, 1), 1),
        ((1, 48, 6, 20, 22), (40, 48, 3, 3, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), 1),
        # bands of 1-2 MiB (IG_BAND_BYTES_KBLOCK): R3D's stride-2 3x3x3 layer
        # and a 256-channel 3x3 stride-2 one in tiles of 12 rows of 28
        ((1, 64, 8, 56, 56), (36, 64, 3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1),
        ((1, 256, 56, 56), (40, 256, 3, 3), (2, 2), (1, 1), (1, 1), 1),
    ]
    for xs, ws, s, pad, d, groups in cases:
        check_igemm_forward(rng, name, xs, ws, s, pad, d, groups, dtype, (1, 2, 3), same_bits=True)


@pytest.mark.parametrize("name", ISAS)
def test_igemm_last_panel_of_few_positions(name):
    """Float32 packed mode with the weight read in place (small images:
    IG_AIN_MAX_USES, on by default) runs a tile's 1-4 positions past its
    last whole vector by dot products along k (ukrt): 7x7 and 14x14 outputs
    (48 + 1 and 4 x 48 + 4 on 48-column panels, 2 x 24 + 1 and 8 x 24 + 4 on
    24), tiles of 17-36 positions (one micro-panel, 16 + 2, 32 + 4),
    1-D rows of 49-52, strides 1 and 2, output channels not a multiple of
    the panel's rows, K blocks not a multiple of the vector, a bias or
    none; against the reference, each thread count bit-identical to one
    thread; an infinity or NaN that only those columns read reaches them
    as in the reference."""
    rng = np.random.default_rng(zlib.crc32(f"last panel {name}".encode()))
    cases = [
        # (x shape, w shape, stride, padding)
        ((1, 512, 7, 7), (512, 512, 3, 3), (1, 1), (1, 1)),
        ((1, 96, 14, 14), (300, 96, 3, 3), (1, 1), (1, 1)),
        ((1, 37, 13, 13), (45, 37, 3, 3), (2, 2), (1, 1)),
        ((1, 21, 28, 28), (60, 21, 3, 3), (2, 2), (1, 1)),
        ((2, 13, 13, 14), (70, 13, 3, 3), (2, 2), (1, 1)),
        ((1, 40, 99), (50, 40, 3), (2,), (1,)),
        ((1, 300, 50), (261, 300, 3), (1,), (0,)),
        ((1, 7, 7, 7, 7), (41, 7, 3, 3, 3), (1, 1, 1), (1, 1, 1)),
        # columns past a micro-panel's last whole vector: 18 = 16 + 2,
        # 20 = 16 + 4, 36 = 32 + 4 positions; 1-D rows of 17 and 33
        ((1, 64, 3, 6), (70, 64, 3, 3), (1, 1), (1, 1)),
        ((1, 50, 4, 5), (100, 50, 3, 3), (1, 1), (1, 1)),
        ((1, 33, 6, 6), (45, 33, 3, 3), (1, 1), (1, 1)),
        ((1, 30, 19), (40, 30, 3), (1,), (0,)),
        ((1, 30, 35), (61, 30, 3), (1,), (0,)),
    ]
    with forced_isa(name):
        for xs, ws, s, pad in cases:
            nsp = len(xs) - 2
            x = rng.standard_normal(xs).astype(np.float32)
            w = rng.standard_normal(ws).astype(np.float32)
            b = rng.standard_normal(ws[0]).astype(np.float32) if ws[0] % 2 == 0 else None
            ones = (1,) * nsp
            ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                           None if b is None else b.astype(np.float64),
                           stride=s, pad_before=pad, dilation=ones, groups=1)
            y1 = run_igemm(x, w, b, s, pad, ones, 1, 1)
            err = np.abs(y1 - ref).max() / np.abs(ref).max()
            assert err <= TOL[np.float32], (name, xs, ws, err)
            for nt in (2, 3):
                assert np.array_equal(run_igemm(x, w, b, s, pad, ones, 1, nt), y1), (name, xs, nt)
            # the input's last element: read by the last output positions only
            # (the last column's windows), an infinity in one channel and a NaN
            # in another
            x[(0, 1) + (-1,) * nsp] = np.inf
            x[(0, 2) + (-1,) * nsp] = np.nan if ws[0] > 100 else np.inf
            ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                           None if b is None else b.astype(np.float64),
                           stride=s, pad_before=pad, dilation=ones, groups=1)
            y = run_igemm(x, w, b, s, pad, ones, 1, 2)
            assert np.array_equal(np.isnan(y), np.isnan(ref)), (name, xs)
            assert np.array_equal(np.isinf(y), np.isinf(ref)), (name, xs)
            assert np.array_equal(np.sign(y[np.isinf(y)]), np.sign(ref[np.isinf(ref)]))
            fin = np.isfinite(ref)
            assert np.abs(y[fin] - ref[fin]).max() <= TOL[np.float32] * np.abs(ref[fin]).max()


# Stems whose direct mode drops more than 6% of its computed columns
# (src/igemm/ig_plan.h: kwb): tiles over a band of one block per column tap
# on 64-byte vectors (float32 AVX-512), the phase band elsewhere.
# (x shape, w shape, stride, padding, dilation): 56- and 64-wide output rows
# in tiles of 6 whole rows and a last partial tile, 2-D and 3-D, 1-4 input
# channels, column taps of both phases, unequal row and column strides, a
# column dilation, column stride 3, half-row (4 channels), the one-K-block
# in-place store and, with 4 channels of 3x7x7 (588 taps), the wide C block
# (test_cpu_choices.py checks that each takes the band)
KWB_CASES = [
    ((1, 3, 3, 112, 112), (64, 3, 3, 7, 7), (1, 2, 2), (1, 3, 3), 1),
    ((2, 3, 128, 128), (64, 3, 7, 7), 2, 3, 1),
    ((1, 1, 112, 112), (48, 1, 5, 5), 2, 2, 1),
    ((1, 4, 3, 30, 112), (40, 4, 3, 7, 7), (1, 2, 2), (1, 3, 3), 1),
    ((2, 2, 46, 113), (70, 2, 3, 4), (3, 2), (1, 2), (1, 2)),
    ((1, 3, 23, 112), (4, 3, 7, 7), 2, 3, 1),
    ((1, 2, 31, 166), (96, 2, 5, 7), (2, 3), (2, 3), 1),
]


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("case", range(len(KWB_CASES)))
def test_igemm_stem_tap_column_band(name, case):
    """The stems of KWB_CASES on every instruction set (the tap-column band
    on AVX-512's float32 kernels, the phase band elsewhere), 1-3 threads
    with the same bits, against the reference."""
    xs, ws, s, pad, d = KWB_CASES[case]
    rng = np.random.default_rng(zlib.crc32(f"kwb {name} {case}".encode()))
    nsp = len(xs) - 2
    tup = lambda v: (v,) * nsp if isinstance(v, int) else v
    check_igemm_forward(rng, name, xs, ws, tup(s), tup(pad), tup(d), 1, np.float32, (1, 2, 3),
                        tol=2, same_bits=True)
