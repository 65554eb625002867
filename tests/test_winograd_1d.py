"""1-D Winograd F(2, 3) (src/winograd/wino1d.h), the WINOGRAD_3X3 method's
path for conv1d layers of 3 taps at stride 1 (any dilation, padding and
groups).

The kernel is called directly on random geometries the method rule would
not send it (few channels, short rows, every padding before and after up
to three dilations, dilations 1-8 (2, 4 and 8: the phases split by rounds of
even/odd splits), groups, bias, 1-3 threads, float32 and
float64) under every instruction set this CPU runs, and checked against
the float64 NumPy reference of tests/reference.py; then the rule, and the
public API on layers that take the method: forward and gradients against
the reference and by finite differences, the same bits at every thread
count, NaN and infinities, and the inputs it refuses.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import cconv
from cconv import _depthwise, _kernels
from cconv._params import make_params

from isa_switch import forced_isa
from methods import fwd_method
from reference import (nonfinite_mismatch, ref_conv, ref_conv_grad_input,
                       ref_conv_grad_weight)

ISAS = _depthwise.available_isas()
TOL = {np.float32: 3e-6, np.float64: 2e-14}


def _geom(n, groups, c, co, L, pb, pa, d):
    ol = L + pb + pa - 2 * d
    return (n, groups, c, co, (1, 1, L), (1, 1, ol), (1, 1, 3), (1, 1, 1), (0, 0, pb),
            (1, 1, d)), ol


def run_w1(x, w, b, pb, pa, d, groups, nthreads):
    n, c, L = x.shape
    geom, ol = _geom(n, groups, c, w.shape[0], L, pb, pa, d)
    nb = _kernels.wino_workspace_bytes(geom, nthreads, x.itemsize)
    assert nb > 0
    y = np.full((n, w.shape[0], ol), np.nan, x.dtype)  # every element written
    _kernels.conv_fwd_wino(geom, x.reshape(-1), w.reshape(-1), b, y.reshape(-1),
                           np.empty(nb, np.uint8), nthreads)
    return y


def _random_layer(rng, dtype, n, c, co, L, groups, pb, pa, d):
    x = rng.standard_normal((n, c, L)).astype(dtype)
    w = rng.standard_normal((co, c // groups, 3)).astype(dtype)
    b = rng.standard_normal(co).astype(dtype) if rng.random() < 0.6 else None
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64),
                   None if b is None else b.astype(np.float64), 1, (pb,), (pa,),
                   dilation=d, groups=groups)
    return x, w, b, ref, max(np.abs(ref).max(), 1e-30)


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_w1_random_geometries(name, dtype):
    rng = np.random.default_rng(zlib.crc32(f"wino1d {name} {np.dtype(dtype).name}".encode()))
    with forced_isa(name):
        done = 0
        while done < 60:
            groups = int(rng.choice([1, 1, 2, 3]))
            cig, cog = int(rng.integers(1, 20)), int(rng.integers(1, 30))
            d = int(rng.choice([1, 1, 2, 3, 4, 6, 8]))
            L = int(rng.integers(1, 130))
            pb, pa = (int(v) for v in rng.integers(0, 3 * d + 1, 2))
            if L + pb + pa <= 2 * d:
                continue
            n = int(rng.integers(1, 4))
            x, w, b, ref, scale = _random_layer(rng, dtype, n, cig * groups, cog * groups, L,
                                                groups, pb, pa, d)
            ys = []
            for nt in (1, 2, 3):
                y = run_w1(x, w, b, pb, pa, d, groups, nt)
                err = np.abs(y - ref).max() / scale
                assert err <= TOL[dtype], (name, x.shape, w.shape, pb, pa, d, groups, nt, err)
                ys.append(y)
            # whole images per thread or every step shared: the same bits
            for y in ys[1:]:
                assert np.array_equal(y, ys[0]), (name, x.shape, d, groups)
            done += 1


def test_w1_images_in_chunks():
    """Inputs whose phase rows exceed one chunk (16 MB) run image by image."""
    rng = np.random.default_rng(4)
    x, w, b, ref, scale = _random_layer(rng, np.float32, 3, 64, 8, 40000, 1, 2, 1, 2)
    geom, _ = _geom(3, 1, 64, 8, 40000, 2, 1, 2)
    assert _kernels.wino_workspace_bytes(geom, 2, 4) > 0
    for nt in (1, 2):
        y = run_w1(x, w, b, 2, 1, 2, 1, nt)
        assert np.abs(y - ref).max() / scale <= TOL[np.float32]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_w1_images_per_thread(dtype):
    """Chunks of images that divide over the threads (or give each thread 4
    or more) run whole images per thread, the others share every step:
    both against the reference and to the bit against one thread, with
    dilations 1-8, groups, partial panels at the images' ends, and a
    non-finite input in any image's rows reported from either schedule."""
    rng = np.random.default_rng(zlib.crc32(f"w1 by image {np.dtype(dtype).name}".encode()))
    # (sizes past the threads' grain of work: 4 threads start from 12e6
    # multiply-adds)
    for n, d, L, groups, (pb, pa) in ((2, 4, 1501, 1, (4, 4)), (4, 1, 777, 2, (1, 0)),
                                      (6, 2, 530, 1, (2, 3)), (5, 3, 640, 1, (0, 6)),
                                      (8, 8, 400, 2, (8, 8)), (9, 2, 333, 1, (2, 2))):
        x, w, b, ref, scale = _random_layer(rng, dtype, n, 48 * groups, 40 * groups, L, groups,
                                            pb, pa, d)
        y1 = run_w1(x, w, b, pb, pa, d, groups, 1)
        assert np.abs(y1 - ref).max() / scale <= TOL[dtype], (n, d, L)
        for nt in (2, 3, 4):
            y = run_w1(x, w, b, pb, pa, d, groups, nt)
            assert np.array_equal(y, y1), (n, d, L, groups, nt)
        for img in range(n):  # a NaN in every image in turn: refused, whoever copies it
            xb = x.copy()
            xb[img, -1, L // 2] = np.nan
            geom, ol = _geom(n, groups, x.shape[1], w.shape[0], L, pb, pa, d)
            nb = _kernels.wino_workspace_bytes(geom, 2, x.itemsize)
            y = np.empty((n, w.shape[0], ol), dtype)
            assert _kernels.conv_fwd("winograd_3x3", geom, xb.reshape(-1), w.reshape(-1), b,
                                     y.reshape(-1), np.empty(nb, np.uint8), 2), (n, img)


def test_w1_workspace_within_the_cap():
    """Chunks shrink to fit beside a large U (1024 x 1024 channels: 16 MB)
    and the threads' buffers; where one image's phase rows do not fit, the
    method does not apply."""
    cap = 32 << 20
    for L, fits in ((2600, True), (5000, False)):
        geom, _ = _geom(2, 1, 1024, 1024, L, 1, 1, 1)
        for nt in (1, 2, 4):
            nb = _kernels.wino_workspace_bytes(geom, nt, 4)
            assert (0 < nb <= cap) if fits else nb == -1, (L, nt, nb)


def test_w1_refuses_other_geometries():
    ws = np.zeros(1 << 16, np.uint8)
    x = np.zeros(2 * 40, np.float32)
    w = np.zeros(2 * 2 * 5, np.float32)
    y = np.zeros(2 * 40, np.float32)
    for k, stride, ol in ((3, 2, 19), (5, 1, 36), (1, 1, 40)):
        geom = (1, 1, 2, 2, (1, 1, 40), (1, 1, ol), (1, 1, k), (1, 1, stride), (0, 0, 0),
                (1, 1, 1))
        assert _kernels.wino_workspace_bytes(geom, 1, 4) == -1
        with pytest.raises(ValueError, match="geometry"):
            _kernels.conv_fwd_wino(geom, x, w, None, y, ws, 1)
    # a 2-D 1x3 kernel over several rows is no 1-D layer
    geom = (1, 1, 2, 2, (1, 4, 10), (1, 4, 8), (1, 1, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1))
    assert _kernels.wino_workspace_bytes(geom, 1, 4) == -1


def test_w1_short_workspace_is_a_memory_error():
    geom, ol = _geom(1, 1, 4, 4, 50, 1, 1, 1)
    nb = _kernels.wino_workspace_bytes(geom, 1, 4)
    x = np.zeros(4 * 50, np.float32)
    with pytest.raises(MemoryError):
        _kernels.conv_fwd_wino(geom, x, np.zeros(4 * 4 * 3, np.float32), None,
                               np.zeros(4 * ol, np.float32), np.zeros(nb - 64, np.uint8), 1)


def _method(xs, co, pad, d=1, groups=1, dtype=np.float32, nt=2):
    p = make_params(xs, (co, xs[1] // groups, 3), None, 1, pad, d, False, 0, groups, "t", dtype)
    return fwd_method(p, nt, np.dtype(dtype).itemsize)


def test_method_rule():
    """Both sides of cc_wino1d_wanted (src/gemm/gemm_conv.c): >= 128
    channels (256 for 16-lane float32 on 512-bit units) on >= 512 tiles of
    the batch, for the 16-lane kernels and for the narrower ones."""
    for isa in [i for i in ("avx512", "avx2", "neon", "scalar") if i in ISAS][:2]:
        with forced_isa(isa):
            for dt in (np.float32, np.float64):
                full = isa == "avx512" and dt == np.float32 and not _kernels.wino_small()
                c = 256 if full else 128
                assert _method((4, c, 1024), c, 4, 4, dtype=dt) == "winograd"      # 2048 tiles
                assert _method((1, c, 1024), c, 1, dtype=dt) == "winograd"         # 512 tiles
                assert _method((1, c, 1022), c, 1, dtype=dt) != "winograd"         # 511
                assert _method((2, c, 512), c, 1, dtype=dt) == "winograd"          # 2 x 256
                assert _method((8, 64, 4096), 64, 1, dtype=dt) != "winograd"       # 64 channels
                assert _method((1, c, 4096), 64, 1, dtype=dt) != "winograd"        # 64 out
                assert _method((1, 2 * c, 1024), 2 * c, 1, groups=2, dtype=dt) == "winograd"
                assert _method((1, 2 * c, 1024), 2 * c, 1, groups=4, dtype=dt) != "winograd"
                assert (_method((1, 128, 2048), 128, 1, dtype=dt) == "winograd") == (not full)


def test_public_api_forward_and_gradients():
    """A TCN layer that takes the method by default: forward, grad_input (its
    stride-1 adjoint runs the method on the flipped weight) and grad_weight
    against the reference, the same bits at 1, 2 and 3 threads."""
    rng = np.random.default_rng(8)
    for dt, tol in ((np.float32, 3e-6), (np.float64, 1e-13)):
        x = rng.standard_normal((3, 128, 700)).astype(dt)
        w = rng.standard_normal((160, 128, 3)).astype(dt)
        b = rng.standard_normal(160).astype(dt)
        assert cconv.select_backend(x, w, b, 1, 4, 4) == cconv.Backend.WINOGRAD_3X3
        assert cconv.select_backend(x, w, b, 1, 4, 4, op="grad_input") == cconv.Backend.WINOGRAD_3X3
        x64, w64 = x.astype(np.float64), w.astype(np.float64)
        ref = ref_conv(x64, w64, b.astype(np.float64), 1, 4, dilation=4)
        gy = rng.standard_normal(ref.shape).astype(dt)
        rgi = ref_conv_grad_input(gy.astype(np.float64), w64, x.shape, 1, 4, dilation=4)
        rgw = ref_conv_grad_weight(x64, gy.astype(np.float64), w.shape, 1, 4, dilation=4)
        got = []
        for nt in (1, 2, 3):
            cconv.set_num_threads(nt)
            y = cconv.conv1d(x, w, b, 1, 4, 4)
            gi, gw, gb = cconv.convolution_backward(gy, x, w, (160,), 1, 4, 4, False, 0, 1,
                                                    (True, True, True))
            got.append((y, gi))
            assert np.abs(y - ref).max() / np.abs(ref).max() <= tol
            assert np.abs(gi - rgi).max() / np.abs(rgi).max() <= tol
            assert np.abs(gw - rgw).max() / np.abs(rgw).max() <= tol
            assert np.allclose(gb, gy.astype(np.float64).sum((0, 2)), rtol=1e-5)
        cconv.set_num_threads(2)
        for y, gi in got[1:]:
            assert np.array_equal(y, got[0][0]) and np.array_equal(gi, got[0][1])


def test_finite_differences_float64():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 128, 1100))
    w = rng.standard_normal((128, 128, 3))
    assert _method(x.shape, 128, 2, 2, dtype=np.float64) == "winograd"
    v = rng.standard_normal(x.shape)
    eps = 1e-6
    d = (cconv.conv1d(x + eps * v, w, None, 1, 2, 2) - cconv.conv1d(x - eps * v, w, None, 1, 2, 2)) / (2 * eps)
    exact = cconv.conv1d(v, w, None, 1, 2, 2)
    assert np.abs(d - exact).max() / np.abs(exact).max() < 1e-8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("what", ["x_inf", "x_nan", "x_both_infs", "w_inf", "w_nan", "x_edge_inf"])
def test_nonfinite_values_give_the_direct_pattern(what, dtype):
    """A tile's transform mixes four inputs: a NaN or an infinity would
    spread over it; the method notices one as it copies the input's phases
    (or the weight) and the call runs on another method, with the
    reference's NaN and +-inf positions."""
    rng = np.random.default_rng(zlib.crc32(f"w1 nonfinite {what} {np.dtype(dtype).name}".encode()))
    x = rng.standard_normal((2, 128, 600)).astype(dtype)
    w = rng.standard_normal((128, 128, 3)).astype(dtype)
    b = rng.standard_normal(128).astype(dtype)
    assert _method(x.shape, 128, 2, 2, dtype=dtype) == "winograd"
    if what == "x_inf":
        x[1, 3, 100] = np.inf
    elif what == "x_nan":
        x[0, 5, 7] = np.nan
    elif what == "x_both_infs":
        x[0, 3, 10], x[0, 4, 12] = np.inf, -np.inf
    elif what == "w_inf":  # an edge tap: inf x the zero padding is NaN, as in torch
        w[7, 2, 0] = -np.inf
    elif what == "w_nan":
        w[9, 60, 1] = np.nan
    else:
        x[1, 9, 599] = np.inf  # the last element: read by the last outputs only
    with np.errstate(invalid="ignore", over="ignore"):
        r = ref_conv(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 1, 2,
                     dilation=2)
    y = cconv.conv1d(x, w, b, 1, 2, 2)
    assert nonfinite_mismatch(y, r) is None, nonfinite_mismatch(y, r)
    fin = np.isfinite(r)
    assert np.allclose(y[fin], r[fin], rtol=1e-3 if dtype == np.float32 else 1e-10, atol=1e-3)


def test_forced_backend_refuses_other_1d_layers():
    x = np.zeros((1, 4, 50), np.float32)
    for w, kw in ((np.zeros((4, 4, 3), np.float32), dict(stride=2)),
                  (np.zeros((4, 4, 5), np.float32), {})):
        with pytest.raises(ValueError, match=r"WINOGRAD_3X3 .*3 taps at stride 1"):
            cconv.conv1d(x, w, backend="winograd_3x3", **kw)
