"""Channels-last inputs (NLC / NHWC / NDHWC memory seen as NCL / NCHW /
NCDHW, and the unbatched forms): values against tests/reference.py, the
result's memory format (channels last, as PyTorch's channels_last), ``out=``,
every applicable backend, both kernel orders of the NHWC path, threads, and
inputs that are transposed but not channels last.  Compared with torch
(values and output memory format) when it is importable.
"""

from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import Backend, _depthwise, _layout, _trace
from cconv._dispatch import Problem
from isa_switch import forced_isa
from methods import fwd_method
from reference import (
    rel_err,
    reduction_length,
    ref_conv,
    ref_conv_grad_bias,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_out_size,
    ref_conv_transpose,
    same_padding,
    tolerance,
)

CONV = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
CONVT = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d, 3: cconv.conv_transpose3d}
REAL = [np.float32, np.float64, np.float16]
ALL = REAL + [np.complex64, np.complex128]


def randn(rng, shape, dtype):
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def to_last(a, caxis=1):
    """Same values, channels-last memory: (N, *S, C) C-contiguous seen as (N, C, *S)."""
    perm = [i for i in range(a.ndim) if i != caxis] + [caxis]
    return np.ascontiguousarray(a.transpose(perm)).transpose(np.argsort(perm))


def memory_is_last(y, caxis=1):
    """True when y's memory is channels last (the C-contiguous NHWC buffer)."""
    perm = [i for i in range(y.ndim) if i != caxis] + [caxis]
    return y.transpose(perm).flags.c_contiguous


def set_threads(n):
    old = cconv.get_num_threads()
    cconv.set_num_threads(n)
    return old


@pytest.fixture(autouse=True)
def _restore():
    nt = cconv.get_num_threads()
    yield
    cconv.set_num_threads(nt)


def nhwc_applies(p, dt):
    """Whether the default choice runs ``p`` (channels-last input of user
    dtype ``dt``) on the NHWC kernel."""
    from cconv._args import compute_dtype
    from cconv.backends import nhwc

    q = Problem(p.with_dtype(compute_dtype(np.dtype(dt))), np, "forward", True)
    return nhwc.supports(q) is None and nhwc.wanted(q)


# ------------------------------------------------------------------ random problems


def make_problem(rng, nsp, dtype, *, big=False, groups=None, depthwise=False, n=None):
    n = int(rng.integers(1, 4)) if n is None else n
    if depthwise:
        groups = int(rng.integers(2, 6))
        cg, og = 1, int(rng.integers(1, 3))
    else:
        if groups is None:
            groups = int(rng.choice([1, 1, 1, 2, 3]))
        hi = 40 if big else 6
        cg = int(rng.integers(1, hi))
        og = int(rng.integers(1, hi))
    k = tuple(int(v) for v in rng.integers(1, 4 if nsp < 3 else 3, nsp))
    stride = tuple(int(v) for v in rng.integers(1, 3, nsp))
    dilation = tuple(int(v) for v in rng.integers(1, 3, nsp))
    pk = str(rng.choice(["int", "tuple", "same", "valid"]))
    if pk == "same":
        stride = (1,) * nsp
        pb, pa = same_padding(k, dilation)
        padding = "same"
    elif pk == "valid":
        pb = pa = (0,) * nsp
        padding = "valid"
    else:
        pb = pa = tuple(int(v) for v in rng.integers(0, 3, nsp))
        if pk == "int":
            pb = pa = (pb[0],) * nsp
        padding = pb[0] if pk == "int" else pb
    maxl = {1: 40, 2: 12, 3: 6} if big else {1: 12, 2: 7, 3: 5}
    need = [max(1, d * (kk - 1) + 1 - b - a) for d, kk, b, a in zip(dilation, k, pb, pa)]
    L = tuple(int(rng.integers(lo, max(lo, maxl[nsp]) + 1)) for lo in need)
    assert min(ref_conv_out_size(L, k, stride, pb, pa, dilation)) > 0
    c_in, c_out = cg * groups, og * groups
    x = randn(rng, (n, c_in) + L, dtype)
    w = randn(rng, (c_out, cg) + k, dtype)
    b = randn(rng, (c_out,), dtype) if rng.random() < 0.6 else None
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    ref = ref_conv(x, w, b, stride, pb, pa, dilation, groups)
    tol = tolerance(dtype, reduction_length(c_in, groups, k))
    return x, w, b, kw, ref, tol


def backends_for(x, w, groups, nsp, dtype):
    req = [Backend.GEMM, "gemm"]
    c_in = x.shape[1]
    if groups == c_in >= 2 and np.dtype(dtype) in [np.dtype(t) for t in REAL] and nsp == 2:
        req += [Backend.DEPTHWISE, Backend.DEPTHWISE_NHWC]
    elif np.dtype(dtype).kind == "f" and not groups == c_in >= 2:
        req.append(Backend.NHWC)
    return req


def check_problem(nsp, x, w, b, kw, ref, tol, batched, backends):
    """x is the NCHW array; run its channels-last view (batched or not)."""
    xl = to_last(x)
    xin = xl if batched else xl[0]
    r = ref if batched else ref[0]
    # size-1 axes can make the NHWC buffer plain C-contiguous too: those
    # inputs count as channels first
    expect_last = _layout.is_channels_last(xl)
    assert expect_last or x.shape[1] == 1 or x[0, 0].size == 1
    snap = xin.copy()
    for be in [None] + list(backends):
        what = f"backend={be!r} x{x.shape} w{w.shape} kw={kw} dtype={x.dtype} batched={batched}"
        if be in (Backend.NHWC, Backend.DEPTHWISE_NHWC):
            try:  # (the in-place kernels take some channels-last inputs only)
                CONV[nsp](xin, w, b, backend=be, **kw)
            except ValueError:
                continue
        y = CONV[nsp](xin, w, b, backend=be, **kw)
        assert type(y) is np.ndarray and y.dtype == x.dtype and y.shape == r.shape, what
        err = rel_err(y, r)
        assert err <= tol, f"relative error {err:.3e} > {tol:.0e}; {what}"
        assert not expect_last or memory_is_last(y, 1 if batched else 0), f"result not channels last {y.strides}; {what}"
        assert not np.shares_memory(y, xin) and not np.shares_memory(y, w), what
        y2 = CONV[nsp](xin, w, b, backend=be, **kw)
        assert y.tobytes() == y2.tobytes(), f"two identical calls differ; {what}"
        out = np.empty(r.shape, dtype=x.dtype)
        res = CONV[nsp](xin, w, b, backend=be, out=out, **kw)
        assert res is out, what
        err = rel_err(out, r)
        assert err <= tol, f"out=: relative error {err:.3e} > {tol:.0e}; {what}"
    assert np.array_equal(snap, xin, equal_nan=True), "input modified"


@pytest.mark.parametrize("seed", range(120))
def test_random_channels_last(seed):
    rng = np.random.default_rng(1000 + seed)
    nsp = int(rng.choice([1, 2, 2, 3]))
    dtype = ALL[seed % len(ALL)]
    big = seed % 3 == 0
    depthwise = seed % 11 == 5
    x, w, b, kw, ref, tol = make_problem(rng, nsp, dtype, big=big, depthwise=depthwise)
    batched = bool(rng.random() < 0.8)
    set_threads(1 + seed % 2)
    check_problem(nsp, x, w, b, kw, ref, tol, batched,
                  backends_for(x, w, kw["groups"], nsp, dtype))


@pytest.mark.parametrize("seed", range(24))
def test_depthwise_channels_last_in_place(seed):
    """Depthwise layers with multiplier 1 on channels-last float32/64 input
    run the kernel that reads and writes channels-last memory in place
    (src/depthwise/dw_nhwc.c): random 1-3-D problems, channel counts on and
    off the kernel's channel step, every padding kind, strides, dilation,
    batched and unbatched, default and forced DEPTHWISE backend, out=."""
    rng = np.random.default_rng(4000 + seed)
    nsp = int(rng.choice([1, 2, 2, 3]))
    dtype = (np.float32, np.float64)[seed % 2]
    x, w, b, kw, ref, tol = make_problem(rng, nsp, dtype, depthwise=True)
    c = int(rng.choice([2, 5, 16, 24, 33, 48, 70]))
    # (no size-1 planes: their channels-last memory is also channels first)
    x = randn(rng, (x.shape[0], c) + tuple(max(v, 3) for v in x.shape[2:]), dtype)
    w = randn(rng, (c, 1) + w.shape[2:], dtype)
    b = None if b is None else randn(rng, (c,), dtype)
    kw["groups"] = c
    st, dl = kw["stride"], kw["dilation"]
    if kw["padding"] == "same":
        pb, pa = same_padding(w.shape[2:], dl)
    elif kw["padding"] == "valid":
        pb = pa = (0,) * nsp
    else:
        pb = pa = (kw["padding"],) * nsp if isinstance(kw["padding"], int) else kw["padding"]
    ref = ref_conv(x, w, b, st, pb, pa, dl, c)
    tol = tolerance(dtype, reduction_length(c, c, w.shape[2:]))
    set_threads(1 + seed % 3)
    batched = seed % 4 != 3
    with _trace.recording() as events:
        check_problem(nsp, x, w, b, kw, ref, tol, batched, [Backend.DEPTHWISE, Backend.DEPTHWISE_NHWC])
    assert ("fwd", "depthwise_nhwc") in events, "the in-place channels-last depthwise kernel did not run"


def test_depthwise_channels_last_other_cases_copy():
    """Multiplier 2, complex and transposed depthwise layers keep the layout
    copies, float16 runs the in-place kernel through float32 (right values,
    channels-last results either way)."""
    rng = np.random.default_rng(77)
    for dtype, mult, in_place in ((np.float32, 2, False), (np.float16, 1, True), (np.complex64, 1, False)):
        x = randn(rng, (2, 6, 9, 8), dtype)
        w = randn(rng, (6 * mult, 1, 3, 3), dtype)
        with _trace.recording() as calls:
            y = cconv.conv2d(to_last(x), w, padding=1, groups=6)
        ref = ref_conv(x, w, None, 1, 1, 1, 1, 6)
        assert rel_err(y, ref) <= tolerance(dtype, 9) and memory_is_last(y), (dtype, mult)
        assert (("fwd", "depthwise_nhwc") in calls) == in_place, (dtype, calls)
    x = randn(rng, (2, 6, 9, 8), np.float32)
    w = randn(rng, (6, 1, 3, 3), np.float32)
    with _trace.recording() as calls:
        y = cconv.conv_transpose2d(to_last(x), w, padding=1, groups=6)
    assert rel_err(y, ref_conv_transpose(x, w, None, 1, 1, 0, 6, 1)) <= 1e-5 and memory_is_last(y)
    assert ("fwd", "depthwise_nhwc") not in calls


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_orders_and_tiles(nsp, dtype, threads):
    """Many rows per output channel (tap-major col, weight reordered), few
    rows (channel-major col; output-channel chunks with threads), 1x1 (no
    col), grouped, long reductions, tiles straddling images."""
    rng = np.random.default_rng(7 * nsp + threads)
    set_threads(threads)
    S = {1: 300, 2: 20, 3: 7}[nsp]
    s = {1: 3, 2: 2, 3: 2}[nsp]
    cases = [
        (4, 24, 8, (S,) * nsp, (3,) * nsp, 1, 1, 1, 1),    # tap-major
        (3, 20, 96, (s,) * nsp, (3,) * nsp, 1, 1, 1, 1),   # channel-major, chunks
        (2, 48, 40, (S,) * nsp, (1,) * nsp, 1, 0, 1, 1),   # 1x1 direct
        (2, 16, 24, (S,) * nsp, (1,) * nsp, 2, 0, 1, 1),   # 1x1 strided (col)
        (2, 32, 48, (S,) * nsp, (3,) * nsp, 1, 1, 1, 4),   # grouped
        (5, 7, 9, (s + 2,) * nsp, (2,) * nsp, 2, 1, 2, 1),  # strided, dilated, small
        (1, 300, 6, (s + 2,) * nsp, (3,) * nsp, 1, 1, 1, 1),  # long reduction
    ]
    for n, ci, co, L, k, st, pd, dl, g in cases:
        x = randn(rng, (n, ci) + L, dtype)
        w = randn(rng, (co, ci // g) + k, dtype)
        b = randn(rng, (co,), dtype)
        ref = ref_conv(x, w, b, st, pd, pd, dl, g)
        tol = tolerance(dtype, reduction_length(ci, g, k))
        kw = dict(stride=st, padding=pd, dilation=dl, groups=g)
        check_problem(nsp, x, w, b, kw, ref, tol, True, [Backend.GEMM])


@pytest.mark.parametrize("dtype", ALL)
def test_unbatched_hwc(dtype):
    rng = np.random.default_rng(3)
    for nsp in (1, 2, 3):
        L = {1: (9,), 2: (6, 7), 3: (4, 5, 3)}[nsp]
        x = randn(rng, (5,) + L, dtype)
        xl = np.ascontiguousarray(np.moveaxis(x, 0, -1))            # (*S, C)
        xin = np.moveaxis(xl, -1, 0)                                 # (C, *S) view
        w = randn(rng, (6, 5) + (3,) * nsp, dtype)
        b = randn(rng, (6,), dtype)
        y = CONV[nsp](xin, w, b, padding=1)
        ref = ref_conv(x[None], w, b, 1, 1, 1, 1, 1)[0]
        assert rel_err(y, ref) <= tolerance(dtype, 5 * 3 ** nsp)
        assert memory_is_last(y, 0) and y.shape == ref.shape


def test_copy_path_same_values_and_layout():
    """A channels-first method forced on a channels-last input (the layout
    copies) gives the NHWC kernel's values and a channels-last result."""
    rng = np.random.default_rng(5)
    x = randn(rng, (2, 16, 9, 11), np.float64)
    w = randn(rng, (12, 16, 3, 3), np.float64)
    xl = to_last(x)
    y1 = cconv.conv2d(xl, w, padding=1, backend=Backend.NHWC)
    y0 = cconv.conv2d(xl, w, padding=1, backend=Backend.GEMM)
    assert memory_is_last(y0) and memory_is_last(y1)
    assert rel_err(y0, y1) < 1e-13
    assert rel_err(y1, ref_conv(x, w, None, 1, 1, 1, 1, 1)) < 1e-12


def test_channels_last_read_only_and_forced_backends():
    rng = np.random.default_rng(6)
    x = randn(rng, (2, 4, 8, 8), np.float32)
    w = randn(rng, (4, 1, 3, 3), np.float32)  # depthwise: DEPTHWISE and Winograd
    xl = to_last(x)
    xl.flags.writeable = False
    ref = ref_conv(x, w, None, 1, 1, 1, 1, 4)
    for be in (None, Backend.GEMM, Backend.DEPTHWISE, Backend.WINOGRAD_DEPTHWISE_3X3):
        y = cconv.conv2d(xl, w, padding=1, groups=4, backend=be)
        assert rel_err(y, ref) <= 1e-5 and memory_is_last(y), be
    with pytest.raises(ValueError, match="transpose"):
        cconv.conv2d(xl, w, padding=1, groups=4, backend=Backend.GEMM_TRANSPOSE)


@pytest.mark.parametrize("kind", ["nhcw", "nwhc", "cnhw", "neg_last", "sliced_last", "fortran",
                                  "last_then_flip_w"])
def test_other_layouts(kind):
    """Transposed-but-not-channels-last inputs: right values, whatever layout."""
    rng = np.random.default_rng(8)
    x = randn(rng, (2, 6, 7, 9), np.float32)
    if kind == "nhcw":
        xin = np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)
    elif kind == "nwhc":
        xin = np.ascontiguousarray(x.transpose(0, 3, 2, 1)).transpose(0, 3, 2, 1)
    elif kind == "cnhw":
        xin = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    elif kind == "neg_last":
        xin = to_last(x[:, ::-1, ::-1, ::-1].copy())[:, ::-1, ::-1, ::-1]
    elif kind == "sliced_last":
        big = np.full((2, 12, 9, 12), np.nan, dtype=np.float32)
        big[:, ::2, :7, :9] = x
        xin = to_last(big)[:, ::2, :7, :9]
    elif kind == "fortran":
        xin = np.asfortranarray(x)
    else:
        xin = to_last(x)[..., ::-1][..., ::-1]
    assert np.array_equal(xin, x)
    w = randn(rng, (5, 6, 3, 2), np.float32)
    b = randn(rng, (5,), np.float32)
    ref = ref_conv(x, w, b, (2, 1), (1, 0), (1, 0), (1, 2), 1)
    for be in (None, Backend.GEMM):
        y = cconv.conv2d(xin, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), backend=be)
        assert rel_err(y, ref) <= 1e-5, (kind, be)
        out = np.empty_like(ref, dtype=np.float32)
        cconv.conv2d(xin, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), backend=be, out=out)
        assert rel_err(out, ref) <= 1e-5, (kind, be)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_read_only_channels_last_nhwc_path(dtype):
    rng = np.random.default_rng(11)
    x = randn(rng, (2, 8, 7, 6), dtype)
    w = randn(rng, (6, 8, 3, 3), dtype)
    b = randn(rng, (6,), dtype)
    xl, wr, br = to_last(x), w.copy(), b.copy()
    for a in (xl, wr, br):
        a.flags.writeable = False
    ref = ref_conv(x, w, b, 1, 1, 1, 1, 1)
    tol = tolerance(dtype, 72)
    y = cconv.conv2d(xl, wr, br, padding=1)
    assert rel_err(y, ref) <= tol and memory_is_last(y) and y.dtype == dtype
    out = np.empty(ref.shape, dtype)
    assert cconv.conv2d(xl, wr, br, padding=1, out=out) is out
    assert rel_err(out, ref) <= tol


def test_channels_last_weight_and_bias_views():
    rng = np.random.default_rng(9)
    x = randn(rng, (3, 8, 6, 6), np.float64)
    w = randn(rng, (10, 8, 3, 3), np.float64)
    b = randn(rng, (10,), np.float64)
    big_b = np.zeros(20)
    big_b[::2] = b
    y = cconv.conv2d(to_last(x), to_last(w), big_b[::2], padding=1)
    assert rel_err(y, ref_conv(x, w, b, 1, 1, 1, 1, 1)) <= 1e-12 and memory_is_last(y)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_transposed_conv_channels_last(nsp):
    rng = np.random.default_rng(10 + nsp)
    L = {1: (8,), 2: (5, 6), 3: (3, 4, 3)}[nsp]
    x = randn(rng, (2, 6) + L, np.float32)
    w = randn(rng, (6, 2) + (3,) * nsp, np.float32)
    b = randn(rng, (4,), np.float32)
    ref = ref_conv_transpose(x, w, b, 2, 1, 1, 2, 1)
    y = CONVT[nsp](to_last(x), w, b, stride=2, padding=1, output_padding=1, groups=2)
    assert rel_err(y, ref) <= 1e-5 and memory_is_last(y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_backward_channels_last(dtype):
    rng = np.random.default_rng(12)
    x = randn(rng, (2, 12, 9, 8), dtype)
    w = randn(rng, (8, 6, 3, 3), dtype)
    ref_y = ref_conv(x, w, None, 2, 1, 1, 1, 2)
    gy = randn(rng, ref_y.shape, dtype)
    gi, gw, gb = cconv.convolution_backward(
        to_last(gy), to_last(x), to_last(w), [8], (2, 2), (1, 1), (1, 1), False, (0, 0), 2,
        (True, True, True))
    tol = tolerance(dtype, 200)
    assert rel_err(gi, ref_conv_grad_input(gy, w, x.shape, 2, 1, 1, 1, 2)) <= tol
    assert rel_err(gw, ref_conv_grad_weight(x, gy, w.shape, 2, 1, 1, 1, 2)) <= tol
    assert rel_err(gb, ref_conv_grad_bias(gy)) <= tol
    # depthwise, multiplier 1: grad_output and input each transposed once
    # to channels first for both gradients
    x = randn(rng, (2, 10, 9, 8), dtype)
    w = randn(rng, (10, 1, 3, 3), dtype)
    gy = randn(rng, ref_conv(x, w, None, 1, 1, 1, 1, 10).shape, dtype)
    gi, gw, gb = cconv.convolution_backward(
        to_last(gy), to_last(x), w, [10], (1, 1), (1, 1), (1, 1), False, (0, 0), 10,
        (True, True, True))
    tol = tolerance(dtype, 9 * 144)
    assert rel_err(gi, ref_conv_grad_input(gy, w, x.shape, 1, 1, 1, 1, 10)) <= tol
    assert rel_err(gw, ref_conv_grad_weight(x, gy, w.shape, 1, 1, 1, 1, 10)) <= tol
    assert rel_err(gb, ref_conv_grad_bias(gy)) <= tol


def test_zero_sizes_channels_last():
    x = to_last(np.zeros((0, 3, 5, 5), np.float32))
    w = np.ones((4, 3, 3, 3), np.float32)
    assert cconv.conv2d(x, w).shape == (0, 4, 3, 3)
    x = to_last(np.ones((2, 3, 5, 5), np.float32))
    y = cconv.conv2d(x, np.ones((4, 3, 5, 5), np.float32))
    assert y.shape == (2, 4, 1, 1) and np.allclose(y, 75)


# ------------------------------------------------------------------ torch


try:
    import torch as _torch
except Exception:  # pragma: no cover - torch is optional
    _torch = None


@pytest.mark.skipif(_torch is None, reason="torch not importable")
@pytest.mark.filterwarnings("ignore:Using padding=.same. with even kernel")
@pytest.mark.parametrize("seed", range(30))
def test_against_torch_channels_last(seed):
    rng = np.random.default_rng(2000 + seed)
    nsp = [1, 2, 3][seed % 3]
    dtype = [np.float32, np.float64][seed % 2]
    x, w, b, kw, ref, tol = make_problem(rng, nsp, dtype, big=seed % 2 == 0, n=2)
    xl = to_last(x)
    y = CONV[nsp](xl, w, b, **kw)
    tx = _torch.from_numpy(np.ascontiguousarray(x))
    if nsp == 2:
        tx = tx.contiguous(memory_format=_torch.channels_last)
    elif nsp == 3:
        tx = tx.contiguous(memory_format=_torch.channels_last_3d)
    else:
        tx = _torch.from_numpy(np.ascontiguousarray(np.moveaxis(x, 1, -1))).transpose(1, 2)
    tb = None if b is None else _torch.from_numpy(b)
    f = getattr(_torch.nn.functional, f"conv{nsp}d")
    with _torch.no_grad():
        ty = f(tx, _torch.from_numpy(w), tb, **kw)
    r = ty.numpy()
    assert rel_err(y, r) <= max(tol, 1e-5 if dtype == np.float32 else 1e-11)
    assert rel_err(y, ref) <= tol
    if min(ty.shape) > 1:
        # cconv always keeps channels last (as torch's channels_last format
        # means to); torch 2.x does so for 2-D and for float32 3-D, while its
        # float64/float16 3-D CPU kernels fall back to contiguous output
        assert memory_is_last(y)
        mf = {2: _torch.channels_last, 3: _torch.channels_last_3d}.get(nsp)
        if mf is not None and ty.is_contiguous(memory_format=mf):
            assert tuple(s // y.itemsize for s in y.strides) == tuple(ty.stride())
        if nsp == 2 or (nsp == 3 and dtype == np.float32):
            assert ty.is_contiguous(memory_format=mf)


@pytest.mark.parametrize("seed", range(24))
def test_nhwc_kernel_direct(seed):
    """src/nhwc/nhwc_conv.c itself, also where the dispatcher keeps the copy path
    (grouped kxk with few channels per group): both result layouts, 1 and 2
    threads, both col orders."""
    from cconv._params import make_params
    from cconv.backends import nhwc

    rng = np.random.default_rng(3000 + seed)
    nsp = 1 + seed % 3
    dtype = [np.float32, np.float64][seed % 2]
    x, w, b, kw, ref, tol = make_problem(rng, nsp, dtype, big=seed % 4 == 0,
                                         groups=int(rng.choice([1, 2, 3, 4])))
    set_threads(1 + (seed // 2) % 2)
    p = make_params(x.shape, w.shape, None if b is None else b.shape, kw["stride"],
                    kw["padding"], kw["dilation"], False, 0, kw["groups"], "conv", dtype)
    p = p.with_dtype(dtype)
    xl = to_last(x)
    y = _layout.empty_channels_last(ref.shape, dtype)
    nhwc.forward(p, xl, w, b, y)
    assert rel_err(y, ref) <= tol and memory_is_last(y)
    y0 = np.full(ref.shape, np.nan, dtype=dtype)
    nhwc.forward(p, xl, w, b, y0)
    assert rel_err(y0, ref) <= tol


def test_convolution_entry_select_backend_and_benchmark_mode():
    rng = np.random.default_rng(13)
    x = randn(rng, (2, 24, 10, 9), np.float32)
    w = randn(rng, (16, 24, 3, 3), np.float32)
    b = randn(rng, (16,), np.float32)
    xl = to_last(x)
    ref = ref_conv(x, w, b, 1, 1, 1, 1, 1)
    y = cconv.convolution(xl, w, b, (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    assert rel_err(y, ref) <= 1e-5 and memory_is_last(y)
    assert cconv.select_backend(xl, w, b, padding=1) is Backend.NHWC
    from cconv import _autotune

    with _autotune.benchmark(True):
        for _ in range(2):
            y = cconv.conv2d(xl, w, b, padding=1)
            assert rel_err(y, ref) <= 1e-5 and memory_is_last(y)
    _autotune.clear()


def test_concurrent_calls_channels_last():
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(14)
    probs = []
    for i in range(8):
        x = randn(rng, (2, 16 + i, 12, 11), np.float32)
        w = randn(rng, (8 + i, 16 + i, 3, 3), np.float32)
        probs.append((to_last(x), w, ref_conv(x, w, None, 1, 1, 1, 1, 1)))
    set_threads(2)

    def run(k):
        xl, w, ref = probs[k % len(probs)]
        y = cconv.conv2d(xl, w, padding=1)
        return rel_err(y, ref) <= 1e-5 and memory_is_last(y)

    with ThreadPoolExecutor(4) as ex:
        assert all(ex.map(run, range(32)))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(3, 37, 41, 5), (2, 9, 11, 40), (1, 33, 64), (2, 3, 4, 5, 17),
                                   (1, 1, 1, 9), (0, 4, 4, 12), (2, 70, 70, 40)])
def test_layout_copies(shape, dtype):
    """_layout's copies between channels last and channels first (the tiled
    C transpose for every element size), 1 and 2 threads."""
    rng = np.random.default_rng(15)
    for nt in (1, 2):
        set_threads(nt)
        a = randn(rng, shape, dtype)          # the channels-last buffer
        x = np.moveaxis(a, -1, 1)
        c = _layout.to_channels_first(x)
        assert c.flags.c_contiguous and c.dtype == a.dtype and np.array_equal(c, x)
        d = _layout.to_channels_last(c)
        assert memory_is_last(d) and np.array_equal(d, x)


def test_big_kernels_few_output_channels_take_the_copy_path():
    """5x5 and larger 2-D/3-D kernels with few output channels per group run
    the copy path (the implicit GEMM beat the NHWC kernel there); more
    output channels, 1-D and few input channels stay on the NHWC kernel.
    Either way: the reference values and a channels-last result."""
    from cconv._params import make_params

    def applies(xs, ws, groups=1):
        p = make_params(xs, ws, None, 1, 0, 1, False, 0, groups, "t", np.float32)
        return nhwc_applies(p, np.float32)

    assert not applies((2, 96, 28, 28), (32, 96, 7, 7))
    assert not applies((2, 64, 28, 28), (64, 64, 5, 5))
    assert not applies((1, 32, 16, 16, 16), (64, 32, 5, 5, 5))
    assert applies((2, 64, 28, 28), (128, 64, 5, 5))      # 128 output channels
    assert applies((2, 64, 12, 12), (32, 64, 3, 3))       # 3x3 (too few tiles for Winograd)
    assert applies((4, 64, 1024), (64, 64, 31))           # 1-D
    with forced_isa(_NARROW):
        assert applies((2, 3, 64, 64), (64, 3, 7, 7))     # the stem: 3 input channels
    rng = np.random.default_rng(3)
    for xs, ws in (((2, 40, 11, 10), (24, 40, 5, 5)), ((1, 36, 6, 7, 5), (8, 36, 3, 3, 3))):
        x = randn(rng, xs, np.float32)
        w = randn(rng, ws, np.float32)
        nsp = len(xs) - 2
        y = CONV[nsp](to_last(x), w, padding=1)
        ref = ref_conv(x, w, None, 1, 1, 1, 1, 1)
        assert rel_err(y, ref) <= tolerance(np.float32, reduction_length(xs[1], 1, ws[2:]))
        assert memory_is_last(y)


def test_winograd_layers_take_the_copy_path():
    """3x3 stride-1 layers that the channels-first forward runs by Winograd
    take the copy path (the NHWC kernel took 1.5-4.9x its time); 3x3 layers
    Winograd leaves alone stay on the NHWC kernel.  The reference values and
    a channels-last result, float32 and float64."""
    from cconv._params import make_params
    from cconv import _kernels

    def applies(xs, ws, stride=1, pad=1, dt=np.float32):
        p = make_params(xs, ws, None, stride, pad, 1, False, 0, 1, "t", dt)
        return nhwc_applies(p, dt)

    def method(xs, ws, dt=np.float32):
        p = make_params(xs, ws, None, 1, 1, 1, False, 0, 1, "t", dt)
        return fwd_method(p, cconv.get_num_threads(), np.dtype(dt).itemsize)

    assert method((1, 64, 56, 56), (64, 64, 3, 3)) == "winograd"
    assert not applies((1, 64, 56, 56), (64, 64, 3, 3))
    assert not applies((1, 64, 30, 30), (64, 64, 3, 3), dt=np.float64)
    assert applies((1, 64, 56, 56), (64, 64, 3, 3), stride=2)   # stride 2: no Winograd
    with forced_isa(_NARROW):
        assert applies((1, 16, 56, 56), (16, 16, 3, 3))         # 16 channels: no Winograd
    assert applies((1, 64, 1024, 1024), (64, 64, 3, 3))         # copies past the memory budget
    rng = np.random.default_rng(4)
    for dt in (np.float32, np.float64):
        x = randn(rng, (1, 64, 30, 31), dt)
        w = randn(rng, (48, 64, 3, 3), dt)
        y = cconv.conv2d(to_last(x), w, padding=1)
        ref = ref_conv(x, w, None, 1, 1, 1, 1, 1)
        assert rel_err(y, ref) <= tolerance(dt, reduction_length(64, 1, (3, 3)))
        assert memory_is_last(y)


_ISAS = _depthwise.available_isas()
_NARROW = next(n for n in ("avx2", "neon", "scalar") if n in _ISAS)


@pytest.mark.skipif("avx512" not in _ISAS, reason="AVX-512 does not run on this CPU")
def test_wide_float32_rules_take_the_copy_path():
    """With 16-lane float32 kernels: multi-tap layers with at most 16 input
    channels per group on outputs of >= 784 positions, and dilated stride-1
    2-D ones of >= 256 positions, take the copy path; 1x1, stride-2
    dilated, small images, float64 and narrower vectors stay on the NHWC
    kernel.  Either way: the reference values and a channels-last result."""
    from cconv._params import make_params

    from cconv import _kernels

    def applies(xs, ws, stride=1, pad=1, dil=1, dt=np.float32):
        p = make_params(xs, ws, None, stride, pad, dil, False, 0, 1, "t", dt)
        return nhwc_applies(p, dt)

    def winograd(xs, ws, stride, pad, dil, dt=np.float32):
        p = make_params(xs, ws, None, stride, pad, dil, False, 0, 1, "t", dt)
        return fwd_method(p, cconv.get_num_threads(), np.dtype(dt).itemsize) == "winograd"

    # on 256-bit units the 16-lane rule sends smaller 3x3 layers to
    # Winograd, whose layers take the copy path (cc_cpu_wino_small)
    small = _kernels.wino_small()

    cases = [  # (x, w, stride, dilation, copy path on 16 lanes)
        ((2, 3, 224, 224), (64, 3, 7, 7), 2, 1, True),      # the stem
        ((8, 16, 64, 64), (16, 16, 3, 3), 1, 1, True),
        ((2, 16, 28, 28), (16, 16, 5, 5), 1, 1, True),
        ((1, 256, 33, 33), (256, 256, 3, 3), 1, 2, True),   # deeplab
        ((2, 128, 33, 33), (64, 128, 3, 3), 1, 2, True),
        ((4, 16, 7, 7), (128, 16, 3, 3), 1, 2, False),      # 49 positions
        ((4, 32, 33, 33), (128, 32, 3, 3), 2, 2, False),    # stride 2
        ((2, 16, 17, 17), (32, 16, 5, 5), 1, 1, False),     # 289 positions
        ((2, 64, 28, 28), (32, 64, 3, 3), 1, 1, small),     # 64 -> 32 channels, undilated
        ((8, 16, 64, 64), (16, 16, 1, 1), 1, 1, False),     # 1x1
        ((8, 16, 8000), (16, 16, 9), 1, 1, True),           # 1-D, 16 channels
        ((4, 128, 1024), (128, 128, 3), 1, 4, False),       # 1-D dilated: NHWC
        ((1, 16, 16, 56, 56), (32, 16, 3, 3, 3), 1, 1, True),   # 3-D, 16 channels
        ((2, 64, 8, 14, 14), (128, 64, 3, 3, 3), 1, 1, False),
    ]
    for xs, ws, st, dil, copy in cases:
        pad = dil * (ws[-1] // 2)
        with forced_isa("avx512"):
            assert applies(xs, ws, st, pad, dil) is not copy, (xs, ws, st, dil)
            assert applies(xs, ws, st, pad, dil, dt=np.float16) is not copy, (xs, ws, st, dil)
            # (float64 layers Winograd takes are copied anyway)
            if copy and not winograd(xs, ws, st, pad, dil, np.float64):
                assert applies(xs, ws, st, pad, dil, dt=np.float64), (xs, ws, st, dil)
        with forced_isa(_NARROW):  # (Winograd's layers take the copy path anyway)
            assert applies(xs, ws, st, pad, dil) or winograd(xs, ws, st, pad, dil), (xs, ws, st, dil)
    rng = np.random.default_rng(5)
    with forced_isa("avx512"):
        for xs, ws, st, dil in (((1, 16, 30, 29), (8, 16, 3, 3), 1, 1),
                                ((1, 24, 20, 18), (12, 24, 3, 3), 1, 2)):
            x = randn(rng, xs, np.float32)
            w = randn(rng, ws, np.float32)
            y = cconv.conv2d(to_last(x), w, stride=st, padding=dil, dilation=dil)
            ref = ref_conv(x, w, None, st, dil, dil, dil, 1)
            assert rel_err(y, ref) <= tolerance(np.float32, reduction_length(xs[1], 1, ws[2:]))
            assert memory_is_last(y)

