"""Winograd F(2x2, 3x3) for 3x3 stride-1 layers (src/winograd/wino_conv.c,
``_kernels.conv_fwd_wino``), the forward method the dispatcher picks
for 3x3 stride-1 layers (dilation 1-4; 2-D, and 3-D with 3x3 stride-1
planes and any depth taps) of enough channels on large enough images.

The kernel is called directly on random geometries that the method rule
would not send it (few channels, tiny images, odd sizes, every padding 0-3
on each side, dilations 1-4, groups, bias, 1-3 threads, float32 and
float64; 3-D: depth taps, strides, dilations, paddings), under every
instruction set this CPU runs (its GEMMs are the implicit GEMM's
micro-kernels), and checked against the float64 NumPy reference of
tests/reference.py.  Then the public API on layers that take the method,
forward and gradients, against the reference and finite differences.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import zlib

import numpy as np
import pytest

import cconv
from cconv import _depthwise, _kernels
from cconv._params import make_params

from methods import fwd_method
from isa_switch import forced_isa
from reference import nonfinite_mismatch, ref_conv, ref_conv_grad_input, ref_conv_grad_weight

HERE = pathlib.Path(__file__).resolve().parent
ISAS = _depthwise.available_isas()
# F(2x2, 3x3) adds and halves the 16 products of a tile: float32 error stays
# within a few ulps of the output's scale, as the direct product's does
TOL = {np.float32: 3e-6, np.float64: 2e-14}


def _geom(xs, ws, pad_before, pad_after, groups, dil=(1, 1)):
    n, c, h, w = xs
    out = (h + pad_before[0] + pad_after[0] - 2 * dil[0], w + pad_before[1] + pad_after[1] - 2 * dil[1])
    return (n, groups, c, ws[0], (1, h, w), (1,) + out, (1, 3, 3), (1, 1, 1),
            (0,) + tuple(pad_before), (1,) + tuple(dil)), out


def run_wino(x, w, b, pad_before, pad_after, groups, nthreads, y=None, dil=(1, 1)):
    geom, out = _geom(x.shape, w.shape, pad_before, pad_after, groups, dil)
    nb = _kernels.wino_workspace_bytes(geom, nthreads, x.itemsize)
    assert nb > 0
    ws = np.empty(nb, np.uint8)
    if y is None:
        y = np.full((x.shape[0], w.shape[0]) + out, np.nan, x.dtype)  # every element written
    _kernels.conv_fwd_wino(geom, x.reshape(-1), w.reshape(-1), b, y.reshape(-1), ws, nthreads)
    return y


def _arrays_and_ref(rng, dtype, xshape, wshape, **conv):
    """Standard-normal input and weight, a bias 60% of the time, the float64
    reference of their convolution (ref_conv with ``conv``) and its scale."""
    x = rng.standard_normal(xshape).astype(dtype)
    w = rng.standard_normal(wshape).astype(dtype)
    b = rng.standard_normal(wshape[0]).astype(dtype) if rng.random() < 0.6 else None
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                   None if b is None else b.astype(np.float64), **conv)
    return x, w, b, ref, max(np.abs(ref).max(), 1e-30)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wino_random_geometries(name, dtype):
    rng = np.random.default_rng(zlib.crc32(f"wino {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        done = 0
        while done < 60:
            groups = int(rng.choice([1, 1, 2, 3]))
            cig, cog = int(rng.integers(1, 20)), int(rng.integers(1, 30))
            h, w_ = int(rng.integers(1, 24)), int(rng.integers(1, 40))
            pb = tuple(int(v) for v in rng.integers(0, 4, 2))
            pa = tuple(int(v) for v in rng.integers(0, 4, 2))
            dil = tuple(int(v) for v in rng.choice([1, 1, 1, 2, 3, 4], 2))
            if h + pb[0] + pa[0] <= 2 * dil[0] or w_ + pb[1] + pa[1] <= 2 * dil[1]:
                continue
            n = int(rng.integers(1, 4))
            x, w, b, ref, scale = _arrays_and_ref(
                rng, dtype, (n, cig * groups, h, w_), (cog * groups, cig, 3, 3),
                stride=1, pad_before=pb, pad_after=pa, dilation=dil, groups=groups)
            for nt in (1, 2, 3):
                y = run_wino(x, w, b, pb, pa, groups, nt, dil=dil)
                err = np.abs(y - ref).max() / scale
                assert err <= TOL[dtype], (name, x.shape, w.shape, pb, pa, dil, groups, nt, err)
            done += 1


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wino_short_runs_share_a_vector(name, dtype):
    """Images of at most 7 tiles a row, whose runs the 16-lane kernels
    transform two at a time in one vector (wtinr2, wtout2; 3 tiles on the
    8-lane float64 ones): every output width 1-14, random heights,
    paddings 0-2 on each side, batches whose panels of tiles cut runs,
    groups, 1-3 threads, against the float64 reference."""
    rng = np.random.default_rng(zlib.crc32(f"short runs {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        for ow in range(1, 15):
            pb = tuple(int(v) for v in rng.integers(0, 3, 2))
            pa = tuple(int(v) for v in rng.integers(0, 3, 2))
            w_ = ow + 2 - pb[1] - pa[1]
            h = int(rng.integers(max(1, 3 - pb[0] - pa[0]), 16))
            if w_ < 1:
                continue
            groups = int(rng.choice([1, 2]))
            cig, cog = int(rng.integers(1, 9)), int(rng.integers(1, 20))
            n = int(rng.integers(1, 6))
            x, w, b, ref, scale = _arrays_and_ref(
                rng, dtype, (n, cig * groups, h, w_), (cog * groups, cig, 3, 3),
                stride=1, pad_before=pb, pad_after=pa, groups=groups)
            for nt in (1, 2, 3):
                y = run_wino(x, w, b, pb, pa, groups, nt)
                err = np.abs(y - ref).max() / scale
                assert err <= TOL[dtype], (name, x.shape, w.shape, pb, pa, groups, nt, err)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_output_channels_split_among_threads(dtype):
    """Few (group, panel) pairs (a 7x7 image's 16 tiles are one panel): the
    panels' output channels are cut into one chunk per thread (>= 64
    channels each, iw_plan_make), the threads sharing each panel's input
    transform.  The same bits at 1-4 threads, and the float64 reference."""
    rng = np.random.default_rng(21)
    layers = (((1, 32, 7, 7), (512, 32, 3, 3), 1, 1),      # one panel
              ((3, 24, 7, 7), (200, 24, 3, 3), 1, 1),      # 48 tiles: 1; 200 = 3 chunks + 8
              ((1, 16, 14, 14), (256, 16, 3, 3), 1, 1),    # panels of 48 and 1 tiles
              ((2, 64, 9, 8), (384, 32, 3, 3), (1, 0), 2),  # 2 groups, padding (1, 0)
              ((1, 16, 5, 11), (130, 16, 3, 3), 0, 1))     # 130: chunks of 64 and 66
    for xs, ws, pad, groups in layers:
        pads = (pad, pad) if isinstance(pad, int) else pad
        x, w, b, ref, scale = _arrays_and_ref(rng, dtype, xs, ws, stride=1, pad_before=pads,
                                              pad_after=pads, groups=groups)
        ys = [run_wino(x, w, b, pads, pads, groups, nt) for nt in (1, 2, 3, 4)]
        for y in ys[1:]:
            assert np.array_equal(y, ys[0]), (xs, ws)
        err = np.abs(ys[0] - ref).max() / scale
        assert err <= TOL[dtype], (xs, ws, err)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threads_share_each_panel(dtype):
    """Where the threads go through the panels together (few panels, or a
    U of >= 8 MiB: iw_body_shared_), each transforms a share of the input
    channels into one V and multiplies it by its chunks of U: input
    channels fewer than the threads or not a multiple of them, groups,
    phased copies (dilation 3-4), 3-D depth taps, bias; the same bits at
    1-4 threads, and the float64 reference."""
    rng = np.random.default_rng(zlib.crc32(f"shared panels {np.dtype(dtype).name}".encode()))
    big = (1, 256, 34, 34) if dtype == np.float64 else (1, 384, 30, 30)  # U >= 8 MiB, >= 16 panels
    layers = ((big, (big[1], big[1], 3, 3), (1, 1), 1, (1, 1)),
              ((1, 37, 7, 7), (512, 37, 3, 3), (1, 1), 1, (1, 1)),     # one panel, 37 channels
              ((2, 3, 9, 9), (256, 3, 3, 3), (1, 1), 1, (1, 1)),       # fewer channels than threads
              ((1, 24, 28, 28), (300, 24, 3, 3), (4, 4), 1, (4, 4)),   # phased copy
              ((1, 26, 20, 17), (260, 13, 3, 3), (3, 1), 2, (3, 1)),   # groups, phased
              ((1, 20, 3, 12, 12), (200, 20, 3, 3, 3), (1, 3, 3), 1, (1, 3, 3)))  # 3-D
    for xs, ws, pad, groups, dil in layers:
        nd = len(xs) - 2
        x, w, b, ref, scale = _arrays_and_ref(rng, dtype, xs, ws, stride=1, pad_before=pad,
                                              pad_after=pad, dilation=dil, groups=groups)
        sp = xs[2:] if nd == 3 else (1,) + xs[2:]
        k = ws[2:] if nd == 3 else (1,) + ws[2:]
        pb = pad if nd == 3 else (0,) + pad
        dl = dil if nd == 3 else (1,) + dil
        out = ref.shape[2:] if nd == 3 else (1,) + ref.shape[2:]
        geom = (xs[0], groups, xs[1], ws[0], sp, out, k, (1, 1, 1), pb, dl)
        ys = [_run_geom(geom, x, w, b, ref.shape, nt) for nt in (1, 2, 3, 4)]
        for y in ys[1:]:
            assert np.array_equal(y, ys[0]), (xs, ws)
        err = np.abs(ys[0] - ref).max() / scale
        assert err <= TOL[dtype], (xs, ws, err)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_filter_transform_kernels(name, dtype):
    """The filter transform of each kernel set (wtfilt: the vector kernels
    a block of input channels at a time): panels with fewer rows than MR,
    channel counts that end in a partial block, depth taps (3-D), groups,
    against the float64 reference; and a NaN or an infinity at any tap of
    a channel at the start, middle or end of a block is seen: the call
    leaves Winograd with the reference's NaN / inf pattern."""
    rng = np.random.default_rng(zlib.crc32(f"wtfilt {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        for cig, cog, groups, kd in ((1, 1, 1, 1), (17, 5, 1, 1), (16, 9, 2, 1), (33, 20, 1, 1),
                                     (7, 12, 3, 2), (40, 24, 1, 3)):
            sp = (3, 9, 10) if kd > 1 else (9, 10)
            xs = (2, cig * groups) + sp
            ws = (cog * groups, cig) + ((kd, 3, 3) if kd > 1 else (3, 3))
            pad = (kd // 2, 1, 1) if kd > 1 else (1, 1)
            x, w, b, ref, scale = _arrays_and_ref(rng, dtype, xs, ws, stride=1, pad_before=pad,
                                                  pad_after=pad, groups=groups)
            f = cconv.conv3d if kd > 1 else cconv.conv2d
            y = f(x, w, b, padding=pad, groups=groups, backend="winograd_3x3")
            assert np.abs(y - ref).max() / scale <= TOL[dtype], (name, xs, ws)
            for ci in sorted({0, cig // 2, cig - 1}):
                wb = w.copy()
                idx = (int(rng.integers(0, ws[0])), ci) + tuple(int(rng.integers(0, n))
                                                                for n in ws[2:])
                wb[idx] = (np.nan, np.inf, -np.inf)[ci % 3]
                with np.errstate(invalid="ignore", over="ignore"):
                    r = ref_conv(x.astype(np.float64), wb.astype(np.float64), None, stride=1,
                                 pad_before=pad, groups=groups)
                    y = f(x, wb, None, padding=pad, groups=groups, backend="winograd_3x3")
                why = nonfinite_mismatch(y, r)
                assert why is None, (name, xs, ws, idx, why)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nt", [2, 3])
def test_nonfinite_where_threads_share_panels(nt, dtype):
    """A NaN or an infinity read by one thread's share of a panel's input
    channels halts every thread at the same panel (no thread is left at a
    barrier), and the call gives the reference's NaN and infinity pattern."""
    rng = np.random.default_rng(nt)
    before = cconv.get_num_threads()
    try:
        cconv.set_num_threads(nt)
        for k, at in enumerate(((0, 0, 3, 3), (0, 41, 6, 0), (0, 20, 0, 6))):
            x = rng.standard_normal((1, 48, 7, 7)).astype(dtype)
            w = rng.standard_normal((512, 48, 3, 3)).astype(dtype)
            x[at] = (np.nan, np.inf, -np.inf)[k]
            with np.errstate(invalid="ignore", over="ignore"):
                r = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, 1)
            y = cconv.conv2d(x, w, None, padding=1, backend="winograd_3x3")
            why = nonfinite_mismatch(y, r)
            assert why is None, f"{at}: {why}"
    finally:
        cconv.set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nonfinite_in_short_runs(dtype):
    """A NaN or an infinity in either run of a pair sharing a vector (14x14
    images, 7 tiles a row) is seen: Winograd forced through the public API
    gives the reference's NaN and infinity pattern on every instruction
    set."""
    rng = np.random.default_rng(7)
    for isa in ISAS:
        for k in range(6):
            x = rng.standard_normal((3, 32, 14, 14)).astype(dtype)
            w = rng.standard_normal((32, 32, 3, 3)).astype(dtype)
            at = (int(rng.integers(0, 3)), int(rng.integers(0, 32)), int(rng.integers(0, 14)),
                  int(rng.integers(0, 14)))
            x[at] = (np.nan, np.inf, -np.inf)[k % 3]
            with np.errstate(invalid="ignore", over="ignore"):
                r = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, 1)
            with forced_isa(isa):
                y = cconv.conv2d(x, w, None, padding=1, backend="winograd_3x3")
            why = nonfinite_mismatch(y, r)
            assert why is None, f"{isa} {at}: {why}"


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wino_random_geometries_3d(name, dtype):
    """3-D: each output depth's plane sums KD planes' Winograd products (the
    GEMM depth is KD * cig): random depth taps 1-4, depth strides 1-3,
    depth dilations 1-2, depth paddings 0-2 before and after (planes outside
    the input read as zeros), the planes' own paddings and dilations,
    groups, bias, 1-3 threads, runs of output depths per work item sharing
    their input planes' transforms."""
    rng = np.random.default_rng(zlib.crc32(f"wino3d {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        done = 0
        while done < 40:
            groups = int(rng.choice([1, 1, 2, 3]))
            cig, cog = int(rng.integers(1, 12)), int(rng.integers(1, 30))
            # deep inputs: an item then takes a run of output depths (with
            # one thread and one panel of tiles: ceil(OD / 4) of them)
            depth = int(rng.integers(1, 7) if done % 2 else rng.integers(8, 24))
            sp = (depth, int(rng.integers(1, 14)), int(rng.integers(1, 20)))
            k = (int(rng.integers(1, 5)), 3, 3)
            st = (int(rng.integers(1, 4)), 1, 1)
            pb = (int(rng.integers(0, 3)),) + tuple(int(v) for v in rng.integers(0, 4, 2))
            pa = (int(rng.integers(0, 3)),) + tuple(int(v) for v in rng.integers(0, 4, 2))
            dil = (int(rng.integers(1, 3)),) + tuple(int(v) for v in rng.choice([1, 1, 2, 3, 4], 2))
            out = tuple((sp[i] + pb[i] + pa[i] - dil[i] * (k[i] - 1) - 1) // st[i] + 1 for i in range(3))
            if min(out) <= 0:
                continue
            n = int(rng.integers(1, 3))
            x, w, b, ref, scale = _arrays_and_ref(
                rng, dtype, (n, cig * groups) + sp, (cog * groups, cig) + k,
                stride=st, pad_before=pb, pad_after=pa, dilation=dil, groups=groups)
            geom = (n, groups, cig * groups, cog * groups, sp, out, k, st, pb, dil)
            for nt in (1, 2, 3):
                y = _run_geom(geom, x, w, b, (n, cog * groups) + out, nt)
                err = np.abs(y - ref).max() / scale
                assert err <= TOL[dtype], (name, geom, nt, err)
            done += 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dil", [(1, 1), (2, 2), (1, 3), (4, 2)])
def test_wino_every_tile_edge(dtype, dil):
    """Outputs of every width and height 1-13 (tiles cut by the bottom and
    right edges, panels of tiles wrapping tile rows and phases), 40 output
    channels (a partial micro-kernel panel), 'same' and 'valid' padding,
    dilations whose phases differ in size."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((40, 5, 3, 3)).astype(dtype)
    b = rng.standard_normal(40).astype(dtype)
    for h in range(1, 14):
        for w_ in range(1, 14):
            for same in (False, True):
                pad = dil if same else (0, 0)
                if h + 2 * pad[0] <= 2 * dil[0] or w_ + 2 * pad[1] <= 2 * dil[1]:
                    continue
                x = rng.standard_normal((2, 5, h, w_)).astype(dtype)
                ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                               stride=1, pad_before=pad, dilation=dil)
                y = run_wino(x, w, b, pad, pad, 1, 2, dil=dil)
                err = np.abs(y - ref).max() / np.abs(ref).max()
                assert err <= TOL[dtype], (h, w_, pad, dil, err)


def test_wino_rejects_other_geometries():
    x = np.zeros((1, 2, 8, 8), np.float32)
    w = np.zeros((2, 2, 3, 3), np.float32)
    y = np.zeros((1, 2, 6, 6), np.float32)
    ws = np.zeros(1 << 16, np.uint8)
    for stride, k, dil in (((1, 2, 2), (1, 3, 3), (1, 1, 1)),   # stride 2
                           ((1, 1, 1), (1, 5, 5), (1, 1, 1)),   # 5x5
                           ((1, 1, 1), (1, 3, 3), (1, 1, 5))):  # dilation > 4
        geom = (1, 1, 2, 2, (1, 8, 8), (1, 6, 6), k, stride, (0, 0, 0), dil)
        assert _kernels.wino_workspace_bytes(geom, 1, 4) == -1
        with pytest.raises(ValueError, match="geometry"):
            _kernels.conv_fwd_wino(geom, x.reshape(-1), w.reshape(-1), None, y.reshape(-1), ws, 1)
    # 3-D: any depth taps, but 3x3 stride-1 planes
    geom = (1, 1, 2, 2, (3, 8, 8), (1, 6, 6), (3, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1))
    assert _kernels.wino_workspace_bytes(geom, 1, 4) > 0
    for k, stride in (((3, 3, 1), (1, 1, 1)), ((3, 3, 3), (1, 1, 2))):
        geom = (1, 1, 2, 2, (3, 8, 8), (1, 6, 6 if stride[2] == 1 else 3), k, stride,
                (0, 0, 0), (1, 1, 1))
        assert _kernels.wino_workspace_bytes(geom, 1, 4) == -1


def test_wino_short_workspace_is_a_memory_error():
    x = np.zeros((1, 4, 8, 8), np.float32)
    w = np.zeros((4, 4, 3, 3), np.float32)
    y = np.zeros((1, 4, 8, 8), np.float32)
    geom, _ = _geom(x.shape, w.shape, (1, 1), (1, 1), 1)
    nb = _kernels.wino_workspace_bytes(geom, 1, 4)
    with pytest.raises(MemoryError):
        _kernels.conv_fwd_wino(geom, x.reshape(-1), w.reshape(-1), None, y.reshape(-1),
                               np.zeros(nb - 64, np.uint8), 1)


def _run_geom(geom, x, w, b, out_shape, nt):
    nb = _kernels.wino_workspace_bytes(geom, nt, x.itemsize)
    assert nb > 0
    y = np.full(out_shape, np.nan, x.dtype)  # every element written
    _kernels.conv_fwd_wino(geom, x.reshape(-1), w.reshape(-1), b, y.reshape(-1),
                           np.empty(nb, np.uint8), nt)
    return y


# dilations above 2 on at least one axis: the input copied phase by phase
PHASED_DILS = [(3, 3), (4, 4), (3, 4), (4, 3), (1, 3), (3, 1), (4, 1), (2, 4), (4, 2), (2, 3)]


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wino_phased_copy(name, dtype):
    """Dilation 3 or 4 on an axis: the input is copied phase by phase and
    each run's windows read from one phase image at dilation 1 (two short
    runs to a vector).  Phases of different sizes (sizes not multiples of
    the dilation), images narrower or shorter than the dilation, paddings
    0-6 before and after (more than the dilation: whole phases of zeros),
    2-D and 3-D (depth taps, strides, dilations), groups, bias, against the
    float64 reference at 1-3 threads, bit-identical across the thread
    counts."""
    rng = np.random.default_rng(zlib.crc32(f"phased {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        done = 0
        while done < 40:
            dil2 = PHASED_DILS[done % len(PHASED_DILS)]
            groups = int(rng.choice([1, 1, 2, 3]))
            cig, cog = int(rng.integers(1, 12)), int(rng.integers(1, 30))
            three = done % 3 == 2
            sp = ((int(rng.integers(1, 6)),) if three else (1,)) + (
                int(rng.integers(1, 30)), int(rng.integers(1, 40)))
            k = (int(rng.integers(1, 4)) if three else 1, 3, 3)
            st = (int(rng.integers(1, 3)) if three else 1, 1, 1)
            pb = (int(rng.integers(0, 2)) if three else 0,) + tuple(int(v) for v in rng.integers(0, 7, 2))
            pa = (int(rng.integers(0, 2)) if three else 0,) + tuple(int(v) for v in rng.integers(0, 7, 2))
            dil = (int(rng.integers(1, 3)) if three else 1,) + dil2
            out = tuple((sp[i] + pb[i] + pa[i] - dil[i] * (k[i] - 1) - 1) // st[i] + 1 for i in range(3))
            if min(out) <= 0:
                continue
            n = int(rng.integers(1, 4))
            xs, ws = (n, cig * groups) + sp, (cog * groups, cig) + k
            if not three:
                xs, ws = xs[:2] + xs[3:], ws[:2] + ws[3:]
            x, w, b, ref, scale = _arrays_and_ref(
                rng, dtype, xs, ws, stride=st if three else 1,
                pad_before=pb if three else pb[1:], pad_after=pa if three else pa[1:],
                dilation=dil if three else dil[1:], groups=groups)
            geom = (n, groups, cig * groups, cog * groups, sp, out, k, st, pb, dil)
            assert _kernels.wino_phased_images(geom, 1, x.itemsize) == n
            ys = []
            for nt in (1, 2, 3):
                y = _run_geom(geom, x, w, b, ref.shape, nt)
                err = np.abs(y - ref).max() / scale
                assert err <= TOL[dtype], (name, geom, nt, err)
                ys.append(y)
            assert all(np.array_equal(ys[0], y) for y in ys[1:]), (name, geom)
            done += 1
    geom = (1, 1, 4, 4, (1, 9, 9), (1, 5, 5), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 2, 2))
    assert _kernels.wino_phased_images(geom, 1, 4) == 0  # dilation 2 reads x in place


def test_phased_images_query_rejects_bad_arguments():
    """`_kernels.wino_phased_images` on what is not a geometry: a ValueError
    or TypeError that names the argument, never a crash; geometries the
    Winograd forward does not run (dilation 5, a 5x5 kernel, float16's
    element size) copy no image."""
    good = (1, 1, 4, 4, (1, 9, 9), (1, 1, 1), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 4, 4))
    assert _kernels.wino_phased_images(good, 1, 4) == 1
    with pytest.raises(ValueError, match="geom"):
        _kernels.wino_phased_images(good[:3], 1, 4)
    with pytest.raises(TypeError, match="geom"):
        _kernels.wino_phased_images("geom", 1, 4)
    with pytest.raises(TypeError):
        _kernels.wino_phased_images(good, "1", 4)
    assert _kernels.wino_phased_images(good[:9] + ((1, 5, 5),), 1, 4) == 0
    assert _kernels.wino_phased_images(good[:6] + ((1, 5, 5),) + good[7:], 1, 4) == 0
    assert _kernels.wino_phased_images(good, 1, 2) == 0
    assert _kernels.wino_phased_images(good[:9] + ((1, -4, 4),), 1, 4) == 0


def test_wino_phased_copy_in_slices():
    """Where the phased copy of the whole batch would pass the workspace cap
    beside U and the threads' buffers (512 channels: U is 16 MiB), it is
    made a few images at a time, each slice a batch of its own: the same
    bits as one slice, and the reference's values on the last image."""
    rng = np.random.default_rng(31)
    n, c, hw, d = 6, 512, 28, 4
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = (rng.standard_normal((c, c, 3, 3)) / 48).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    geom = (n, 1, c, c, (1, hw, hw), (1, hw, hw), (1, 3, 3), (1, 1, 1), (0, d, d), (1, d, d))
    per = {nt: _kernels.wino_phased_images(geom, nt, 4) for nt in (1, 3)}
    assert per[1] == n and 1 <= per[3] < n, per  # more threads' buffers: fewer images
    assert _kernels.wino_workspace_bytes(geom, 3, 4) <= _kernels.WORKSPACE_CAP
    y1 = _run_geom(geom, x, w, b, (n, c, hw, hw), 1)
    y3 = _run_geom(geom, x, w, b, (n, c, hw, hw), 3)
    assert np.array_equal(y1, y3)
    ref = ref_conv(x[-1:].astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                   stride=1, pad_before=(d, d), dilation=(d, d))
    assert np.abs(y3[-1:] - ref).max() / np.abs(ref).max() <= TOL[np.float32]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dil", [(3, 3), (4, 4), (1, 4), (4, 2)])
@pytest.mark.parametrize("what", ["inf", "nan", "both_infs"])
def test_nonfinite_in_phased_input(what, dil, dtype):
    """NaN and infinity in an input read from the phased copy, in different
    phases (rows and columns of every residue): the call leaves Winograd
    and the NaN and +-inf positions are the reference's."""
    rng = np.random.default_rng(zlib.crc32(f"phased nonfinite {what} {dil}".encode()))
    x = rng.standard_normal((2, 16, 23, 26)).astype(dtype)
    w = rng.standard_normal((24, 16, 3, 3)).astype(dtype)
    for r, c in ((0, 0), (5, 7), (11, 2), (22, 25)):
        x[1, 3, r, c] = np.nan if what == "nan" else np.inf
    if what == "both_infs":
        x[0, 9, 12, 13], x[0, 10, 12, 14] = np.inf, -np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        r = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, dil, dilation=dil)
    for isa in ISAS:
        with forced_isa(isa):
            y = cconv.conv2d(x, w, padding=dil, dilation=dil, backend="winograd_3x3")
        why = nonfinite_mismatch(y, r)
        assert why is None, f"{what} {isa}: {why}"
    fin = np.isfinite(r)
    assert 0 < fin.sum() < r.size
    assert np.allclose(y[fin], r[fin], rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-4)


def _method(xs, ws, padding, groups, dtype=np.float32, nt=2, dil=1):
    p = make_params(xs, ws, None, 1, padding, dil, False, 0, groups, "t", dtype)
    return fwd_method(p, nt, np.dtype(dtype).itemsize)


# the rule for vectors of at most 8 floats (AVX2, NEON; float64 always),
# and the one for 16-lane float32 (AVX-512): src/gemm/gemm_conv.c
NARROW = next((n for n in ("avx2", "neon", "scalar") if n in ISAS), None)
WIDE = "avx512" if "avx512" in ISAS else None


def test_method_rule():
    """Both sides of each clause of cc_wino_wanted (src/gemm/gemm_conv.c), on
    vectors of at most 8 floats."""
    with forced_isa(NARROW):
        _check_narrow_rule()


def _check_narrow_rule():
    assert _method((1, 64, 56, 56), (64, 64, 3, 3), 1, 1) == "winograd"
    assert _method((4, 128, 28, 28), (128, 128, 3, 3), 1, 1) == "winograd"
    assert _method((1, 32, 28, 28), (64, 32, 3, 3), 1, 1) == "winograd"       # 196 tiles
    assert _method((1, 32, 28, 28), (32, 32, 3, 3), 1, 1) != "winograd"       # < 64 out, < 400
    assert _method((1, 32, 38, 38), (32, 32, 3, 3), 1, 1) != "winograd"       # 361 tiles
    assert _method((1, 32, 40, 40), (32, 32, 3, 3), 1, 1) == "winograd"       # 400 tiles
    assert _method((4, 128, 28, 28), (128, 32, 3, 3), 1, 4) != "winograd"    # 4 groups of 32
    assert _method((1, 32, 28, 28), (32, 32, 3, 3), 1, 1, np.float64) == "winograd"
    assert _method((1, 32, 26, 26), (32, 32, 3, 3), 1, 1) != "winograd"       # 169, 32 ch
    assert _method((1, 16, 56, 56), (16, 16, 3, 3), 1, 1) != "winograd"       # 16 channels
    assert _method((1, 64, 56, 56), (16, 64, 3, 3), 1, 1) != "winograd"       # 16 out
    assert _method((1, 64, 20, 20), (64, 64, 3, 3), 1, 1) == "winograd"       # 100 tiles
    assert _method((1, 64, 18, 18), (64, 64, 3, 3), 1, 1) != "winograd"       # 81
    assert _method((3, 256, 14, 14), (256, 256, 3, 3), 1, 1) == "winograd"    # 49 x 3
    assert _method((2, 256, 14, 14), (256, 256, 3, 3), 1, 1) != "winograd"    # 49 x 2
    assert _method((8, 64, 7, 7), (64, 64, 3, 3), 1, 1) == "winograd"         # 16 x 8
    assert _method((7, 64, 7, 7), (64, 64, 3, 3), 1, 1) != "winograd"         # 16 x 7
    assert _method((16, 64, 5, 5), (64, 64, 3, 3), 1, 1) != "winograd"        # 9 tiles
    # small_deep (im2col, measured against igemm before Winograd) comes first
    assert _method((8, 512, 7, 7), (512, 512, 3, 3), 1, 1) == "im2col"
    assert _method((8, 32, 14, 14), (32, 32, 3, 3), 1, 1) != "winograd"       # 32 channels
    assert _method((8, 512, 28, 28), (512, 64, 3, 3), 1, 8) == "winograd"     # 8 groups of 64
    assert _method((8, 512, 14, 14), (512, 16, 3, 3), 1, 32) != "winograd"   # ResNeXt
    assert _method((1, 64, 56, 56), (64, 64, 3, 3), 1, 1, np.float64) == "winograd"
    assert _method((1, 32, 14, 14), (32, 32, 3, 3), 1, 1, np.float64) == "winograd"  # f64: 49
    assert _method((1, 32, 14, 14), (32, 32, 3, 3), 1, 1, np.float32) != "winograd"
    assert _method((1, 32, 12, 12), (32, 32, 3, 3), 1, 1, np.float64) != "winograd"  # 36
    p = make_params((1, 64, 56, 56), (64, 64, 3, 3), None, 2, 1, 1, False, 0, 1, "t", np.float32)
    assert fwd_method(p, 2, 4) != "winograd"                  # stride 2
    p = make_params((1, 64, 56, 56), (64, 64, 3, 3), None, 1, 2, 2, False, 0, 1, "t", np.float32)
    assert fwd_method(p, 2, 4) == "winograd"                  # dilation 2
    p = make_params((1, 64, 56, 56), (64, 64, 3, 3), None, 1, 4, (4, 1), False, 0, 1, "t", np.float32)
    assert fwd_method(p, 2, 4) == "winograd"                  # dilation 4
    p = make_params((1, 64, 56, 56), (64, 64, 3, 3), None, 1, 5, 5, False, 0, 1, "t", np.float32)
    assert fwd_method(p, 2, 4) != "winograd"                  # dilation 5
    # 3-D: every output depth an image of the batch; one depth tap: the
    # 2-D rule
    assert _method((1, 64, 3, 14, 14), (64, 64, 1, 3, 3), (0, 1, 1), 1) == "winograd"  # 49 x 3
    assert _method((1, 64, 2, 14, 14), (64, 64, 1, 3, 3), (0, 1, 1), 1) != "winograd"  # 49 x 2
    assert _method((2, 16, 8, 56, 56), (16, 16, 1, 3, 3), (0, 1, 1), 1) != "winograd"  # 16 ch
    assert _method((1, 64, 16, 28, 28), (64, 64, 3, 1, 1), (1, 0, 0), 1) != "winograd"  # 3x1x1
    # >= 2 depth taps (cc_wino3_wanted)
    assert _method((2, 64, 16, 28, 28), (64, 64, 3, 3, 3), 1, 1) == "winograd"
    assert _method((1, 16, 16, 56, 56), (16, 16, 3, 3, 3), 1, 1) == "winograd"   # 784 tiles
    assert _method((1, 8, 16, 56, 56), (8, 8, 3, 3, 3), 1, 1) != "winograd"      # KD * 8 < 48
    assert _method((1, 16, 16, 56, 56), (8, 16, 3, 3, 3), 1, 1) != "winograd"    # 8 out
    assert _method((1, 16, 16, 28, 28), (16, 16, 3, 3, 3), 1, 1) != "winograd"   # 196, 16 ch
    assert _method((1, 32, 16, 28, 28), (32, 32, 3, 3, 3), 1, 1) == "winograd"   # 196
    assert _method((2, 32, 16, 14, 14), (32, 32, 3, 3, 3), 1, 1) == "winograd"   # 49 x 32
    assert _method((1, 64, 8, 14, 14), (64, 64, 3, 3, 3), 1, 1) == "winograd"    # 49 x 8
    assert _method((1, 64, 4, 14, 14), (64, 64, 3, 3, 3), 1, 1) != "winograd"    # 49 x 4
    assert _method((4, 64, 8, 7, 7), (64, 64, 3, 3, 3), 1, 1) == "winograd"      # 16 x 32
    assert _method((1, 64, 8, 7, 7), (64, 64, 3, 3, 3), 1, 1) != "winograd"      # 16 x 8
    assert _method((4, 32, 8, 7, 7), (32, 32, 3, 3, 3), 1, 1) != "winograd"      # 32 ch
    assert _method((1, 64, 8, 5, 5), (64, 64, 3, 3, 3), 1, 1) != "winograd"      # 9 tiles
    assert _method((1, 16, 8, 14, 14), (16, 16, 3, 3, 3), 1, 1, np.float64) == "winograd"
    assert _method((1, 8, 8, 14, 14), (8, 8, 3, 3, 3), 1, 1, np.float64) != "winograd"


def _check_wide_rule():
    """Both sides of each clause of the 16-lane float32 rule (AVX-512), for
    the rule this process runs: 512-bit units, or 256-bit ones
    (cc_cpu_wino_small, dilation 1: >= 32 channels on >= 49 tiles with >=
    196 in the batch, 16-31 channels there on images of <= 7 tiles a row;
    7x7 images of >= 64 channels with >= 128 tiles in the batch)."""
    small = _kernels.wino_small()
    with forced_isa(WIDE):
        assert _method((1, 32, 56, 56), (32, 32, 3, 3), 1, 1) == "winograd"       # 784 tiles
        assert (_method((1, 32, 54, 54), (32, 32, 3, 3), 1, 1) == "winograd") == small  # 729
        assert _method((1, 16, 56, 56), (16, 16, 3, 3), 1, 1) != "winograd"       # 16 channels
        assert _method((1, 64, 56, 56), (16, 64, 3, 3), 1, 1) != "winograd"       # 16 out
        # >= 64 channels: channels x tiles of the batch >= 32768
        assert _method((4, 128, 28, 28), (128, 128, 3, 3), 1, 1) == "winograd"    # 128 x 784
        assert (_method((1, 128, 28, 28), (128, 128, 3, 3), 1, 1) == "winograd") == small  # x 196
        assert _method((1, 256, 24, 24), (256, 256, 3, 3), 1, 1) == "winograd"    # 256 x 144
        assert _method((1, 256, 22, 22), (256, 256, 3, 3), 1, 1) != "winograd"    # 256 x 121
        assert _method((8, 64, 28, 28), (64, 64, 3, 3), 1, 1) == "winograd"       # 64 x 1568
        assert (_method((2, 64, 28, 28), (64, 64, 3, 3), 1, 1) == "winograd") == small  # 64 x 392
        assert (_method((8, 48, 28, 28), (48, 48, 3, 3), 1, 1) == "winograd") == small  # 48 ch
        assert _method((8, 256, 14, 14), (256, 256, 3, 3), 1, 1) == "winograd"    # 256 x 392
        assert _method((2, 256, 14, 14), (256, 256, 3, 3), 1, 1) != "winograd"    # 256 x 98
        # 256-bit units: the smaller layers' bounds
        assert (_method((4, 32, 14, 14), (32, 32, 3, 3), 1, 1) == "winograd") == small  # 196
        assert _method((3, 32, 14, 14), (32, 32, 3, 3), 1, 1) != "winograd"       # 147 tiles
        assert _method((16, 32, 12, 12), (32, 32, 3, 3), 1, 1) != "winograd"      # 36 per image
        assert _method((4, 256, 28, 28), (256, 8, 3, 3), 1, 32) != "winograd"     # 8 per group
        # 16-31 channels where two tile rows share a vector (<= 7 tiles a row)
        assert (_method((8, 512, 14, 14), (512, 16, 3, 3), 1, 32) == "winograd") == small
        assert (_method((4, 16, 14, 14), (16, 16, 3, 3), 1, 1) == "winograd") == small  # 196
        assert (_method((4, 24, 13, 13), (24, 24, 3, 3), 1, 1) == "winograd") == small
        assert _method((2, 512, 14, 14), (512, 16, 3, 3), 1, 32) != "winograd"   # 98 tiles
        assert _method((4, 16, 15, 15), (16, 16, 3, 3), 1, 1) != "winograd"       # 8 a row
        assert _method((4, 16, 28, 28), (16, 16, 3, 3), 1, 1) != "winograd"       # 14 a row
        assert _method((8, 15, 14, 14), (15, 15, 3, 3), 1, 1) != "winograd"       # 15 channels
        # 7x7 images: >= 64 channels, >= 128 tiles in the batch (else
        # small_deep's im2col from 128 channels, igemm below)
        assert (_method((8, 512, 7, 7), (512, 512, 3, 3), 1, 1) == "winograd") == small
        assert (_method((8, 64, 7, 7), (64, 64, 3, 3), 1, 1) == "winograd") == small
        assert (_method((8, 64, 8, 8), (64, 64, 3, 3), 1, 1) == "winograd") == small
        assert _method((4, 512, 7, 7), (512, 512, 3, 3), 1, 1) == "im2col"        # 64 tiles
        assert _method((8, 48, 7, 7), (48, 48, 3, 3), 1, 1) != "winograd"         # 48 channels
        assert _method((8, 64, 7, 7), (64, 64, 3, 3), 2, 1, dil=2) != "winograd"  # dilation 2
        if not small:
            assert _method((8, 512, 7, 7), (512, 512, 3, 3), 1, 1) == "im2col"    # small_deep
        assert _method((64, 128, 5, 5), (128, 128, 3, 3), 1, 1) != "winograd"     # 9 tiles
        assert (_method((16, 256, 8, 8), (256, 256, 3, 3), 1, 1) == "winograd") == small  # 16
        assert _method((16, 256, 13, 13), (256, 256, 3, 3), 1, 1) == "winograd"  # 49 tiles
        # dilation 2: >= 64 channels on >= 196 tiles per image, the same product
        assert _method((1, 64, 56, 56), (64, 64, 3, 3), 2, 1, dil=2) == "winograd"
        assert _method((1, 256, 33, 33), (256, 256, 3, 3), 2, 1, dil=2) == "winograd"
        assert _method((4, 32, 56, 56), (32, 32, 3, 3), 2, 1, dil=2) != "winograd"  # 32 ch
        assert _method((1, 512, 17, 17), (512, 512, 3, 3), 2, 1, dil=2) != "winograd"  # 81
        assert _method((2, 64, 28, 28), (64, 64, 3, 3), 2, 1, dil=2) != "winograd"  # 64 x 392
        assert _method((1, 64, 56, 56), (64, 64, 3, 3), 3, 1, dil=3) != "winograd"  # 64 ch
        # dilation 3-4 (the input copied phase by phase): >= 256 channels on
        # >= 196 tiles; 128 with >= 784 tiles in the batch; 512 on >= 100
        # with >= 400 in the batch
        assert _method((1, 512, 28, 28), (512, 512, 3, 3), 4, 1, dil=4) == "winograd"
        assert _method((1, 256, 28, 28), (256, 256, 3, 3), 3, 1, dil=3) == "winograd"
        assert _method((1, 256, 26, 26), (256, 256, 3, 3), 3, 1, dil=3) != "winograd"  # 169
        assert _method((1, 256, 28, 28), (256, 256, 3, 3), (4, 1), 1, dil=(4, 1)) == "winograd"
        assert _method((4, 128, 28, 28), (128, 128, 3, 3), 4, 1, dil=4) == "winograd"
        assert _method((3, 128, 28, 28), (128, 128, 3, 3), 4, 1, dil=4) != "winograd"  # 588
        assert _method((1, 128, 33, 33), (128, 128, 3, 3), 4, 1, dil=4) != "winograd"  # 289
        assert _method((1, 128, 65, 65), (128, 128, 3, 3), 4, 1, dil=4) == "winograd"
        assert _method((4, 512, 20, 20), (512, 512, 3, 3), 3, 1, dil=3) == "winograd"
        assert _method((3, 512, 20, 20), (512, 512, 3, 3), 3, 1, dil=3) != "winograd"  # 300
        assert _method((4, 256, 20, 20), (256, 256, 3, 3), 4, 1, dil=4) != "winograd"  # 256 x 100
        assert _method((8, 512, 14, 14), (512, 512, 3, 3), 4, 1, dil=4) != "winograd"  # 49 tiles
        assert _method((1, 64, 56, 56), (64, 64, 3, 3), (2, 1), 1, dil=(2, 1)) == "winograd"
        # float64 keeps the rule of the narrow vectors
        assert _method((1, 32, 14, 14), (32, 32, 3, 3), 1, 1, np.float64) == "winograd"
        assert _method((1, 64, 56, 56), (64, 64, 3, 3), 2, 1, np.float64, dil=2) == "winograd"


@pytest.mark.skipif(WIDE is None, reason="no AVX-512 kernels in this build or on this CPU")
@pytest.mark.parametrize("small", ["0", "1"])
def test_method_rule_16_lanes(small):
    """The 16-lane rule for 512-bit and for 256-bit units, each in a process
    of its own (the choice is made once per process: CCONV_WINO_SMALL)."""
    env = dict(os.environ, CCONV_WINO_SMALL=small)
    r = subprocess.run([sys.executable, "-c", "import test_winograd_dense as t; "
                        "from cconv import _kernels; "
                        f"assert _kernels.wino_small() == bool({small}); t._check_wide_rule()"],
                       capture_output=True, text=True, env=env, cwd=HERE, timeout=300)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_public_api_on_winograd_layers(dtype):
    """conv2d and convolution_backward on layers that take the method
    (forward, and grad_input as the forward of the flipped weight), against
    the reference."""
    rng = np.random.default_rng(11)
    with forced_isa(NARROW):  # (the layers take Winograd under that rule)
        _check_public_api(rng, dtype)


NARROW_LAYERS = (((2, 64, 28, 30), (64, 64, 3, 3), 1, 1, 1),
                 ((1, 48, 29, 27), (72, 48, 3, 3), (0, 2), 1, 1),
                 ((2, 128, 28, 28), (128, 64, 3, 3), 1, 1, 2),
                 ((1, 64, 33, 33), (64, 64, 3, 3), 2, 2, 1),
                 ((1, 64, 31, 30), (64, 64, 3, 3), (3, 1), (3, 1), 1))
# layers of the 16-lane rule's clauses: >= 784 tiles; >= 64 channels with
# channels x batch tiles >= 32768 (odd sizes, cig != cog, groups of 64,
# 'valid' padding); dilation 2 on both axes and on one
WIDE_LAYERS = (((1, 32, 56, 57), (40, 32, 3, 3), 1, 1, 1),
               ((1, 256, 23, 25), (256, 256, 3, 3), 1, 1, 1),
               ((3, 64, 27, 29), (72, 64, 3, 3), (0, 1), 1, 1),
               ((3, 128, 29, 28), (128, 64, 3, 3), 1, 1, 2),
               ((2, 80, 33, 31), (64, 80, 3, 3), 2, 2, 1),
               ((3, 64, 30, 29), (64, 64, 3, 3), (2, 1), (2, 1), 1))


@pytest.mark.skipif(WIDE is None, reason="no AVX-512 kernels in this build or on this CPU")
@pytest.mark.parametrize("dtype", [np.float32])
def test_public_api_on_winograd_layers_16_lanes(dtype):
    """The same on layers that the 16-lane float32 rule sends to Winograd."""
    rng = np.random.default_rng(12)
    with forced_isa(WIDE):
        _check_public_api(rng, dtype, WIDE_LAYERS)


def _check_public_api(rng, dtype, layers=NARROW_LAYERS):
    for xs, ws, pad, dil, groups in layers:
        assert _method(xs, ws, pad, groups, dtype, dil=dil) == "winograd"
        x = rng.standard_normal(xs).astype(dtype)
        w = rng.standard_normal(ws).astype(dtype)
        b = rng.standard_normal(ws[0]).astype(dtype)
        pp = pad if isinstance(pad, tuple) else (pad, pad)
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                       stride=1, pad_before=pp, dilation=dil, groups=groups)
        y = cconv.conv2d(x, w, b, 1, pad, dil, groups)
        assert np.abs(y - ref).max() / np.abs(ref).max() <= TOL[dtype]
        gy = rng.standard_normal(y.shape).astype(dtype)
        gx, gw, gb = cconv.convolution_backward(gy, x, w, (ws[0],), 1, pad, dil, False, 0, groups,
                                                (True, True, True))
        rgx = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), x.shape,
                                  stride=1, pad_before=pp, dilation=dil, groups=groups)
        rgw = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape,
                                   stride=1, pad_before=pp, dilation=dil, groups=groups)
        assert np.abs(gx - rgx).max() / np.abs(rgx).max() <= 4 * TOL[dtype]
        assert np.abs(gw - rgw).max() / np.abs(rgw).max() <= 4 * TOL[dtype]
        assert np.allclose(gb, gy.astype(np.float64).sum((0, 2, 3)), rtol=1e-5)


# 3-D layers the rule sends to Winograd: C3D-like 3x3x3, a (2+1)-D 1x3x3
# kernel, depth stride 2, 'valid' depth padding with 5 depth taps, groups,
# a dilated depth
LAYERS_3D = (((1, 64, 6, 14, 15), (64, 64, 3, 3, 3), 1, 1, 1, 1),
             ((2, 64, 3, 16, 14), (64, 64, 1, 3, 3), (0, 1, 1), 1, 1, 1),
             ((1, 64, 7, 16, 16), (72, 64, 3, 3, 3), 1, (2, 1, 1), 1, 1),
             ((2, 64, 9, 12, 13), (64, 64, 5, 3, 3), (0, 1, 1), 1, 1, 1),
             ((1, 128, 6, 14, 14), (128, 64, 3, 3, 3), 1, 1, 1, 2),
             ((1, 64, 8, 14, 14), (64, 64, 3, 3, 3), (2, 1, 1), 1, (2, 1, 1), 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_public_api_on_winograd_layers_3d(dtype):
    """conv3d and convolution_backward on 3-D layers that take the method,
    against the reference."""
    rng = np.random.default_rng(13)
    with forced_isa(NARROW):
        for xs, ws, pad, stride, dil, groups in LAYERS_3D:
            p = make_params(xs, ws, None, stride, pad, dil, False, 0, groups, "t", dtype)
            assert fwd_method(p, 2, np.dtype(dtype).itemsize) == "winograd"
            x = rng.standard_normal(xs).astype(dtype)
            w = rng.standard_normal(ws).astype(dtype)
            b = rng.standard_normal(ws[0]).astype(dtype)
            pp = pad if isinstance(pad, tuple) else (pad,) * 3
            kw = dict(stride=stride, pad_before=pp, dilation=dil, groups=groups)
            ref = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), **kw)
            y = cconv.conv3d(x, w, b, stride, pad, dil, groups)
            assert np.abs(y - ref).max() / np.abs(ref).max() <= TOL[dtype]
            gy = rng.standard_normal(y.shape).astype(dtype)
            gx, gw, gb = cconv.convolution_backward(gy, x, w, (ws[0],), stride, pad, dil, False,
                                                    0, groups, (True, True, True))
            rgx = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), x.shape, **kw)
            rgw = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), w.shape, **kw)
            assert np.abs(gx - rgx).max() / np.abs(rgx).max() <= 4 * TOL[dtype]
            assert np.abs(gw - rgw).max() / np.abs(rgw).max() <= 4 * TOL[dtype]
            assert np.allclose(gb, gy.astype(np.float64).sum((0, 2, 3, 4)), rtol=1e-5)


def test_finite_differences_float64():
    """The Winograd forward's derivative by central differences, float64."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 32, 28, 28))
    w = rng.standard_normal((32, 32, 3, 3))
    assert _method(x.shape, w.shape, 1, 1, np.float64) == "winograd"
    v = rng.standard_normal(x.shape)
    eps = 1e-6
    d = (cconv.conv2d(x + eps * v, w, padding=1) - cconv.conv2d(x - eps * v, w, padding=1)) / (2 * eps)
    exact = cconv.conv2d(v, w, padding=1)  # linear in x
    assert np.abs(d - exact).max() / np.abs(exact).max() < 1e-8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("what", ["x_inf", "x_nan", "x_both_infs", "w_inf_edge", "w_nan", "bias_inf",
                                  "x_inf_dil2", "x_nan_dil2"])
def test_nonfinite_values_give_the_direct_pattern(what, dtype):
    """NaN and infinity where the forward picks Winograd: its transforms
    turn inf into inf - inf = NaN and spread a NaN over whole tiles (found
    by a fuzz against torch: 2019 NaN against torch's 253 on a 36-channel
    38x39 layer); with a non-finite x or w the implicit GEMM runs instead,
    and the NaN and +-inf positions are the reference's."""
    rng = np.random.default_rng(zlib.crc32(f"nonfinite {what} {np.dtype(dtype).name}".encode()))
    x = rng.standard_normal((1, 64, 56, 57)).astype(dtype)
    d = 2 if what.endswith("dil2") else 1  # dilation 2: its own row split
    co = 64 if d == 2 else 48
    w = rng.standard_normal((co, 64, 3, 3)).astype(dtype)
    b = rng.standard_normal(co).astype(dtype)
    assert _method(x.shape, w.shape, d, 1, dtype, dil=d) == "winograd"
    if what == "x_inf":
        x[0, 3, 10, 20] = np.inf
    elif what == "x_nan":
        x[0, 5, 0, 7] = np.nan
    elif what == "x_both_infs":
        x[0, 3, 10, 20], x[0, 4, 10, 21] = np.inf, -np.inf
    elif what == "w_inf_edge":  # a corner tap: inf x the zero padding is NaN, as in torch
        w[7, 2, 0, 0] = -np.inf
    elif what == "w_nan":
        w[9, 60, 1, 2] = np.nan
    elif what == "x_inf_dil2":  # an odd column: the second phase's
        x[0, 3, 10, 21] = np.inf
    elif what == "x_nan_dil2":
        x[0, 5, 30, 40] = np.nan
    else:
        b[5] = np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        r = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 1, d,
                     dilation=(d, d))
    for isa in (None, NARROW) if d == 2 else (None,):  # the split of each vector width
        with forced_isa(isa or ISAS[-1]):
            assert _method(x.shape, w.shape, d, 1, dtype, dil=d) == "winograd"
            y = cconv.conv2d(x, w, b, padding=d, dilation=d)
        why = nonfinite_mismatch(y, r)
        assert why is None, f"{what} {isa}: {why}"
    fin = np.isfinite(r)
    assert fin.sum() > 0.5 * r.size
    assert np.allclose(y[fin], r[fin], rtol=1e-3 if dtype == np.float32 else 1e-10, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tap", range(9))
def test_nonfinite_weight_at_every_tap(tap, dtype):
    """A NaN or an infinity at each of the nine taps of a filter, and two
    infinities of opposite signs that the filter transform adds (the same
    column, the same row): the transform's values show every one of them
    (each weight enters one with weight 1 or 1/2, inf - inf is NaN), so the
    Winograd forward stops and the call gives the reference's NaN and +-inf
    positions, forced or by default."""
    rng = np.random.default_rng(zlib.crc32(f"tap {tap} {np.dtype(dtype).name}".encode()))
    x = rng.standard_normal((1, 40, 20, 21)).astype(dtype)
    w0 = rng.standard_normal((40, 40, 3, 3)).astype(dtype)
    r_, c_ = divmod(tap, 3)
    cases = [("nan", [(r_, c_, np.nan)]), ("inf", [(r_, c_, np.inf)]), ("-inf", [(r_, c_, -np.inf)]),
             ("column", [(r_, c_, np.inf), ((r_ + 1) % 3, c_, -np.inf)]),
             ("row", [(r_, c_, -np.inf), (r_, (c_ + 2) % 3, np.inf)])]
    for name, vals in cases:
        w = w0.copy()
        o, i = int(rng.integers(0, 40)), int(rng.integers(0, 40))
        for rr, cc, v in vals:
            w[o, i, rr, cc] = v
        with np.errstate(invalid="ignore", over="ignore"):
            r = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, 1)
        for backend in ("winograd_3x3", None):
            y = cconv.conv2d(x, w, padding=1, backend=backend)
            why = nonfinite_mismatch(y, r)
            assert why is None, (tap, name, backend, why)
            fin = np.isfinite(r)
            assert np.allclose(y[fin], r[fin], rtol=1e-3 if dtype == np.float32 else 1e-10,
                               atol=1e-3), (tap, name, backend)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", ["x_inf", "x_nan", "w_inf"])
def test_nonfinite_values_3d(where, dtype):
    """The same on a 3-D layer: a NaN or infinity in an input plane (read by
    KD output depths) or in a depth tap of the weight.  (The layer takes
    Winograd under both float32 rules: 64 channels x 8 depths x 64 tiles.)"""
    rng = np.random.default_rng(zlib.crc32(f"nonfinite3d {where} {np.dtype(dtype).name}".encode()))
    x = rng.standard_normal((1, 64, 8, 16, 16)).astype(dtype)
    w = rng.standard_normal((64, 64, 3, 3, 3)).astype(dtype)
    assert _method(x.shape, w.shape, 1, 1, dtype) == "winograd"
    if where == "x_inf":
        x[0, 3, 2, 5, 6] = np.inf
    elif where == "x_nan":
        x[0, 7, 5, 0, 15] = np.nan
    else:
        w[4, 10, 2, 0, 1] = np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        r = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, 1)
    y = cconv.conv3d(x, w, padding=1)
    why = nonfinite_mismatch(y, r)
    assert why is None, (where, why)
    fin = np.isfinite(r)
    assert fin.sum() > 0.5 * r.size
    assert np.allclose(y[fin], r[fin], rtol=1e-3 if dtype == np.float32 else 1e-10, atol=1e-3)
