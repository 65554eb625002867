"""The depthwise 3x3 Winograd F(2x2,3x3) kernels (src/winograd,
cconv._winograd, cconv.backends.winograd_depthwise: Backend.WINOGRAD_DEPTHWISE_3X3).

Every instruction set this CPU can run is forced in turn and checked against
a float64 NumPy depthwise reference written here and against the scalar
kernel: random shapes (H, W from 1 to 40, odd and tiny sizes, batch 1-3,
channels 1-20), every tile edge (widths around multiples of 2, 8, 16 and 32
tiles) and every padding combination (0 or 1 before and after each dim
independently through the module; symmetric, 'same' and 'valid' through
``cconv.conv2d``), with and without bias, 1 and several threads.

Errors are measured against the largest sum of |terms| of an output (the
float64 convolution of |x| with |w|, plus |b|): an output can cancel to
near zero while its terms are large, and the rounding of any float32
algorithm scales with the terms.  Tolerance 1e-5 (Winograd F(2,3)'s
transforms only add and halve).

The C test program tests/c/winograd_check.c does the same from C: natively
(AVX2, AVX-512 where the CPU has it), the AVX-512 kernel on SIMDe's
emulation (CPUs without AVX-512), under AddressSanitizer, and cross-compiled
for aarch64 and run under qemu (NEON).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import c_programs
from reference import nonfinite_mismatch

import cconv
from cconv import _winograd
from cconv._dispatch import Backend, Problem, select
from cconv._params import make_params
from cconv.backends import winograd_depthwise as wbackend

ROOT = pathlib.Path(__file__).resolve().parents[1]
CDIR = ROOT / "tests" / "c"
TOL = 1e-5
ISAS = _winograd.available_isas()
BE = "winograd_depthwise_3x3"


# ---- float64 NumPy reference ------------------------------------------------

def ref_dw3x3(x, w, b, pads):
    """y[n,c] = b[c] + sum_{kh,kw} w[c,0,kh,kw] x_pad[n,c,oh+kh,ow+kw] in
    float64, pads = (top, bottom, left, right); also the scale: the same
    with |x|, |w|, |b|."""
    pt, pb, pl, pr = pads
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pt, pb), (pl, pr)])
    w = w.astype(np.float64)
    N, C, H, W = x.shape
    OH, OW = H - 2, W - 2
    y = np.zeros((N, C, OH, OW))
    s = np.zeros((N, C, OH, OW))
    for kh in range(3):
        for kw in range(3):
            wk = w[:, 0, kh, kw].reshape(1, C, 1, 1)
            win = x[:, :, kh:kh + OH, kw:kw + OW]
            y += wk * win
            s += np.abs(wk) * np.abs(win)
    if b is not None:
        y += b.astype(np.float64).reshape(1, C, 1, 1)
        s += np.abs(b.astype(np.float64)).reshape(1, C, 1, 1)
    return y, (s.max() if s.size else 1.0)


def relerr(got, ref, scale):
    if got.size == 0:
        return 0.0
    return float(np.abs(got.astype(np.float64) - ref).max() / max(scale, 1e-30))


def geom(n, c, h, w, pads):
    """The plain geometry (ConvParams.geom()) of a depthwise 3x3 s1 conv."""
    pt, pb, pl, pr = pads
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    return (n, c, c, c, (1, h, w), (1, oh, ow), (1, 3, 3), (1, 1, 1), (0, pt, pl), (1, 1, 1))


def arrays(rng, n, c, h, w, bias=True):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((c, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32) if bias else None
    return x, wt, b


def run_module(x, w, b, pads, nt=1, want_flag=False):
    """The module's result; asserts its non-finite flag is ``want_flag``."""
    n, c, h, ww = x.shape
    g = geom(n, c, h, ww, pads)
    y = np.full((n, c, g[5][1], g[5][2]), np.nan, np.float32)
    flag = _winograd.fwd(g, x.reshape(-1), w.reshape(-1), None if b is None else b.reshape(-1),
                         y.reshape(-1), nt)
    assert flag is want_flag, f"{_winograd.isa()} {x.shape} pads={pads}: non-finite flag {flag}"
    return y


@pytest.fixture
def isa_guard():
    prev = _winograd.isa()
    yield
    _winograd.set_isa(prev)


@pytest.fixture
def threads_guard():
    prev = cconv.get_num_threads()
    yield
    cconv.set_num_threads(prev)


def check_all_isas(x, w, b, pads, nt=1, what=""):
    """Every ISA vs the reference and vs scalar; returns the scalar result."""
    yr, scale = ref_dw3x3(x, w, b, pads)
    res = {}
    for isa in ISAS:
        _winograd.set_isa(isa)
        y = run_module(x, w, b, pads, nt)
        assert y.shape == yr.shape
        e = relerr(y, yr, scale)
        assert e <= TOL, f"{isa} {x.shape} pads={pads} nt={nt} {what}: rel err {e:.3g}"
        res[isa] = y
    for isa in ISAS[1:]:
        e = relerr(res[isa], res["scalar"].astype(np.float64), scale)
        assert e <= TOL, f"{isa} vs scalar {x.shape} pads={pads} {what}: rel err {e:.3g}"
    return res["scalar"]


# ---- the module -------------------------------------------------------------

def test_isa_selection(isa_guard):
    assert _winograd.__file__.endswith((".so", ".pyd"))
    assert "scalar" in ISAS
    assert _winograd.isa() in ISAS
    for isa in ISAS:
        _winograd.set_isa(isa)
        assert _winograd.isa() == isa
    _winograd.set_isa(None)
    assert _winograd.isa() == ISAS[-1]
    with pytest.raises(ValueError, match="cannot run here"):
        _winograd.set_isa("sse9")
    for isa in set(_winograd.ISAS) - set(ISAS):
        with pytest.raises(ValueError):
            _winograd.set_isa(isa)


def test_env_var_forces_isa(tmp_path):
    code = "from cconv import _winograd; print(_winograd.isa())"
    env = dict(os.environ)
    for isa in ISAS:
        env["CCONV_SIMD"] = isa
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip().splitlines()[-1] == isa
    env["CCONV_SIMD"] = "no-such-isa"
    r = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "CCONV_SIMD" in r.stderr and "RuntimeWarning" in r.stderr
    assert r.stdout.strip().splitlines()[-1] == ISAS[-1]


def test_filter_transform():
    rng = np.random.default_rng(5)
    g = rng.standard_normal(9).astype(np.float32)
    u = np.empty(16, np.float32)
    _winograd.filter_transform(g, u)
    G = np.array([[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]])
    want = G @ g.astype(np.float64).reshape(3, 3) @ G.T
    np.testing.assert_allclose(u.reshape(4, 4), want, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError):
        _winograd.filter_transform(g[:8].copy(), u)


@pytest.mark.parametrize("block", range(8))
def test_random_shapes(block, isa_guard):
    """Random sizes 1..40, batch 1-3, channels 1-20, padding 0/1 on each of
    the four sides independently, bias or not, 1 or 3 threads."""
    rng = np.random.default_rng(100 + block)
    for i in range(10):
        while True:
            h, w = (int(v) for v in rng.integers(1, 41, 2))
            pads = tuple(int(v) for v in rng.integers(0, 2, 4))
            if h + pads[0] + pads[1] >= 3 and w + pads[2] + pads[3] >= 3:
                break
        n, c = int(rng.integers(1, 4)), int(rng.integers(1, 21))
        x, wt, b = arrays(rng, n, c, h, w, bias=bool(i % 3))
        check_all_isas(x, wt, b, pads, nt=1 + 2 * (i % 2))


# widths around whole vectors of tiles: 2 tiles = 4 columns; AVX2 8 tiles =
# 16 columns, AVX-512 16 tiles = 32, NEON 4 tiles = 8
EDGE_SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 15, 16, 17, 18, 19, 30, 31, 32, 33, 34, 35]


@pytest.mark.parametrize("w", EDGE_SIZES)
def test_tile_edges_and_padding(w, isa_guard):
    """Every width near a tile/vector edge, heights 1-9, every one of the 16
    padding combinations (top, bottom, left, right in {0, 1})."""
    rng = np.random.default_rng(w)
    for h in range(1, 10):
        for p in range(16):
            pads = (p & 1, (p >> 1) & 1, (p >> 2) & 1, p >> 3)
            if h + pads[0] + pads[1] < 3 or w + pads[2] + pads[3] < 3:
                continue
            x, wt, b = arrays(rng, 1, 2, h, w, bias=bool(p % 2))
            check_all_isas(x, wt, b, pads, what=f"h={h}")


def test_large_and_threads(isa_guard):
    """A larger plane, batch 1 with few channels (blocks of tile rows run in
    parallel): bitwise the same for every thread count."""
    rng = np.random.default_rng(7)
    x, wt, b = arrays(rng, 1, 2, 117, 45)
    pads = (1, 1, 1, 1)
    for isa in ISAS:
        _winograd.set_isa(isa)
        y1 = run_module(x, wt, b, pads, 1)
        for nt in (2, 3, 8):
            assert np.array_equal(run_module(x, wt, b, pads, nt), y1), (isa, nt)
    check_all_isas(x, wt, b, pads, nt=4)


def test_inputs_untouched(isa_guard):
    rng = np.random.default_rng(3)
    x, wt, b = arrays(rng, 2, 3, 9, 13)
    xs, ws, bs = x.copy(), wt.copy(), b.copy()
    for isa in ISAS:
        _winograd.set_isa(isa)
        run_module(x, wt, b, (1, 0, 0, 1), 2)
    assert np.array_equal(x, xs) and np.array_equal(wt, ws) and np.array_equal(b, bs)


def same_pattern(got, ref, scale):
    """NaN, +inf and -inf at the same places, the finite values close."""
    why = nonfinite_mismatch(got, ref)
    if why is not None:
        return why
    fin = np.isfinite(ref)
    e = relerr(got[fin], ref[fin], scale)
    return None if e <= TOL else f"rel err {e:.3g}"


@pytest.mark.parametrize("block", range(4))
def test_nonfinite_flagged_and_recomputed(block, isa_guard):
    """A NaN or an infinity anywhere in x or w: every kernel flags it (a
    plane of the Winograd transforms would put NaN where the direct sum has
    an infinity), and the backend's result is the direct sum's: the float64
    reference's NaN/inf pattern (x NaN/inf with finite w; PyTorch's too),
    and with a NaN/inf weight the default dispatch's (GEMM's im2col
    products, which the reference's zero-padded sums also are)."""
    rng = np.random.default_rng(500 + block)
    for i in range(12):
        while True:
            h, w = (int(v) for v in rng.integers(1, 40, 2))
            pad = int(rng.integers(0, 2))
            if h + 2 * pad >= 3 and w + 2 * pad >= 3:
                break
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 9))
        x, wt, b = arrays(rng, n, c, h, w, bias=bool(i % 2))
        for _ in range(int(rng.integers(1, 4))):
            arr = wt if rng.random() < 0.25 else x
            at = tuple(int(rng.integers(0, d)) for d in arr.shape)
            arr[at] = rng.choice([np.inf, -np.inf, np.nan])
        pads = (pad,) * 4
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf, 0 * inf
            yr, _ = ref_dw3x3(x, wt, b, pads)
        _, scale = ref_dw3x3(np.nan_to_num(x, nan=0, posinf=0, neginf=0),
                             np.nan_to_num(wt, nan=0, posinf=0, neginf=0), b, pads)
        for isa in ISAS:
            _winograd.set_isa(isa)
            run_module(x, wt, b, pads, 1 + 2 * (i % 2), want_flag=True)
            y = cconv.conv2d(x, wt, b, padding=pad, groups=c, backend=BE)
            why = same_pattern(y, yr, scale)
            assert why is None, f"{isa} {x.shape} pad={pad}: {why}"
            assert np.array_equal(y, cconv.conv2d(x, wt, b, padding=pad, groups=c),
                                  equal_nan=True)
    # finite data is never flagged, whatever its size (a sum that would
    # overflow only makes the caller recompute)
    x, wt, b = arrays(rng, 1, 3, 30, 30)
    for isa in ISAS:
        _winograd.set_isa(isa)
        run_module(x * np.float32(1e30), wt, b, (1, 1, 1, 1), want_flag=False)


def test_module_argument_checks():
    g = geom(1, 2, 5, 5, (1, 1, 1, 1))
    x = np.zeros(50, np.float32)
    w = np.zeros(18, np.float32)
    y = np.zeros(50, np.float32)
    _winograd.fwd(g, x, w, None, y, 1)
    with pytest.raises(ValueError, match="expected 50"):
        _winograd.fwd(g, x[:49], w, None, y, 1)
    with pytest.raises(ValueError, match="expected 2"):
        _winograd.fwd(g, x, w, np.zeros(3, np.float32), y, 1)
    with pytest.raises(ValueError, match="expected 50"):
        _winograd.fwd(g, x, w, None, y[:10], 1)
    with pytest.raises(ValueError, match="required"):
        _winograd.fwd(g, None, w, None, y, 1)
    with pytest.raises((TypeError, ValueError)):
        _winograd.fwd(g, x.astype(np.float64), w, None, y, 1)
    bad = [
        (1, 2, 2, 4) + g[4:],                                        # multiplier 2
        (1, 1, 2, 2) + g[4:],                                        # groups 1
        g[:6] + ((1, 5, 5),) + g[7:],                                # 5x5
        g[:5] + ((1, 3, 3),) + g[6:7] + ((1, 2, 2),) + g[8:],        # stride 2
        g[:8] + ((0, 3, 1),) + g[9:],                                # padding 3
        g[:9] + ((1, 2, 1),),                                        # dilation 2
        g[:5] + ((1, 7, 5),) + g[6:],                                # padding after 3
        (1, 2, 2, 2, (2, 5, 5), (2, 5, 5)) + g[6:],                  # 3-D
        g[:9],                                                       # too short
    ]
    for gb in bad:
        assert not _winograd.geom_ok(gb), gb
        with pytest.raises(ValueError):
            _winograd.fwd(gb, x, w, None, y, 1)
    assert _winograd.geom_ok(g)
    # zero batch: nothing to do
    g0 = (0,) + g[1:]
    _winograd.fwd(g0, np.zeros(0, np.float32), w, None, np.zeros(0, np.float32), 1)


# ---- the backend through the public API -------------------------------------

def _pads_of(padding, h, w):
    if padding == "same":
        return (1, 1, 1, 1)
    if padding == "valid":
        return (0, 0, 0, 0)
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    return (ph, ph, pw, pw)


@pytest.mark.parametrize("block", range(4))
def test_conv2d_random(block, isa_guard, threads_guard):
    """cconv.conv2d(..., backend='winograd_depthwise_3x3'): random shapes,
    padding 0/1 per dim, 'same', 'valid'; every ISA; 1 and 2 threads."""
    rng = np.random.default_rng(500 + block)
    paddings = [0, 1, (0, 1), (1, 0), "same", "valid"]
    for i in range(12):
        padding = paddings[i % len(paddings)]
        while True:
            h, w = (int(v) for v in rng.integers(1, 41, 2))
            pads = _pads_of(padding, h, w)
            if h + pads[0] + pads[1] >= 3 and w + pads[2] + pads[3] >= 3:
                break
        n, c = int(rng.integers(1, 4)), int(rng.integers(1, 21))
        x, wt, b = arrays(rng, n, c, h, w, bias=bool(i % 2))
        yr, scale = ref_dw3x3(x, wt, b, pads)
        cconv.set_num_threads(1 + (i % 2))
        for isa in ISAS:
            _winograd.set_isa(isa)
            y = cconv.conv2d(x, wt, b, padding=padding, groups=c, backend=BE)
            assert y.dtype == np.float32 and y.shape == yr.shape
            e = relerr(y, yr, scale)
            assert e <= TOL, f"{isa} {x.shape} padding={padding}: rel err {e:.3g}"
            y2 = cconv.conv2d(x, wt, b, padding=padding, groups=c,
                              backend=Backend.WINOGRAD_DEPTHWISE_3X3)
            assert np.array_equal(y, y2)


def test_conv2d_layouts_out_unbatched_float16():
    rng = np.random.default_rng(11)
    x, wt, b = arrays(rng, 2, 6, 20, 23)
    yr, scale = ref_dw3x3(x, wt, b, (1, 1, 1, 1))
    # a channels-last view, a strided view, read-only arrays
    xl = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    xs = np.zeros((2, 6, 40, 23), np.float32)
    xs[:, :, ::2] = x
    xs = xs[:, :, ::2]
    xr = x.copy()
    xr.flags.writeable = False
    for xx in (xl, xs, xr):
        y = cconv.conv2d(xx, wt, b, padding=1, groups=6, backend=BE)
        assert relerr(y, yr, scale) <= TOL
    out = np.empty((2, 6, 20, 23), np.float32)
    assert cconv.conv2d(x, wt, b, padding=1, groups=6, backend=BE, out=out) is out
    assert relerr(out, yr, scale) <= TOL
    y = cconv.conv2d(x[0], wt, b, padding=1, groups=6, backend=BE)
    assert y.shape == (6, 20, 23) and relerr(y[None], yr[:1], scale) <= TOL
    # float16 is computed in float32
    x16, w16, b16 = x.astype(np.float16), wt.astype(np.float16), b.astype(np.float16)
    y16 = cconv.conv2d(x16, w16, b16, padding="same", groups=6, backend=BE)
    yr16, s16 = ref_dw3x3(x16.astype(np.float32), w16.astype(np.float32),
                          b16.astype(np.float32), (1, 1, 1, 1))
    assert y16.dtype == np.float16 and relerr(y16, yr16, s16) <= 2e-3
    # zero batch
    y0 = cconv.conv2d(np.zeros((0, 6, 5, 5), np.float32), wt, b, padding=1, groups=6,
                      backend=BE)
    assert y0.shape == (0, 6, 5, 5)


def test_conv2d_one_channel():
    """groups == C_in == 1 is depthwise with multiplier 1 too."""
    rng = np.random.default_rng(12)
    x, wt, b = arrays(rng, 3, 1, 17, 6)
    yr, scale = ref_dw3x3(x, wt, b, (1, 1, 1, 1))
    y = cconv.conv2d(x, wt, b, padding=1, groups=1, backend=BE)
    assert relerr(y, yr, scale) <= TOL


UNSUPPORTED = [
    # (kwargs for conv2d, input shape, weight shape, dtype, words in the reason)
    (dict(padding=1, groups=4), (1, 4, 8, 8), (4, 1, 3, 3), np.float64, "float32"),
    (dict(padding=1, groups=4, stride=2), (1, 4, 8, 8), (4, 1, 3, 3), np.float32, "stride"),
    (dict(padding=2, groups=4, dilation=2), (1, 4, 8, 8), (4, 1, 3, 3), np.float32, "dilation"),
    (dict(padding=2, groups=4), (1, 4, 8, 8), (4, 1, 5, 5), np.float32, "3x3"),
    (dict(padding=2, groups=4), (1, 4, 8, 8), (4, 1, 3, 3), np.float32, "padding"),
    (dict(padding=(1, 2), groups=4), (1, 4, 8, 8), (4, 1, 3, 3), np.float32, "padding"),
    (dict(padding=1, groups=4), (1, 4, 8, 8), (8, 1, 3, 3), np.float32, "multiplier"),
    (dict(padding=1, groups=2), (1, 4, 8, 8), (4, 2, 3, 3), np.float32, "depthwise"),
    (dict(padding=1), (1, 4, 8, 8), (4, 4, 3, 3), np.float32, "depthwise"),
]


@pytest.mark.parametrize("case", range(len(UNSUPPORTED)))
def test_unsupported_raises(case):
    kw, xs, ws, dt, words = UNSUPPORTED[case]
    x = np.ones(xs, dt)
    w = np.ones(ws, dt)
    with pytest.raises(ValueError, match=words):
        cconv.conv2d(x, w, **kw, backend=BE)
    assert cconv.select_backend(x, w, **kw) != Backend.WINOGRAD_DEPTHWISE_3X3


def test_unsupported_other_ranks_and_transposed():
    x1 = np.ones((1, 4, 9), np.float32)
    with pytest.raises(ValueError, match="2-D"):
        cconv.conv1d(x1, np.ones((4, 1, 3), np.float32), padding=1, groups=4, backend=BE)
    x3 = np.ones((1, 4, 5, 5, 5), np.float32)
    with pytest.raises(ValueError, match="2-D"):
        cconv.conv3d(x3, np.ones((4, 1, 3, 3, 3), np.float32), padding=1, groups=4, backend=BE)
    x = np.ones((1, 4, 8, 8), np.float32)
    with pytest.raises(ValueError, match="transposed"):
        cconv.conv_transpose2d(x, np.ones((4, 1, 3, 3), np.float32), padding=1, groups=4,
                               backend=BE)


def test_inference_only():
    x = np.ones((1, 4, 8, 8), np.float32)
    w = np.ones((4, 1, 3, 3), np.float32)
    p = make_params(x.shape, w.shape, None, 1, 1, 1, False, 0, 4, "conv2d", np.float32)
    assert wbackend.supports(Problem(p, np)) is None
    reason = wbackend.supports(Problem(p, np, need_backward=True))
    assert reason and "inference only" in reason
    for op in ("grad_input", "grad_weight"):
        assert "inference only" in wbackend.supports(Problem(p, np, op))
    with pytest.raises(ValueError, match="inference only"):
        select(Problem(p, np, need_backward=True), BE)
    assert wbackend.supports(Problem(p, object())) is not None
    with pytest.raises(NotImplementedError, match="inference only"):
        wbackend.grad_input(p, None, None, None)
    with pytest.raises(NotImplementedError, match="inference only"):
        wbackend.grad_weight(p, None, None, None)
    # the gradients never land here, even when the forward was forced to it
    gy = np.ones((1, 4, 8, 8), np.float32)
    gi, gw, gb = cconv.convolution_backward(gy, x, w, [4], 1, 1, 1, False, 0, 4,
                                            [True, True, True])
    assert gi.shape == x.shape and gw.shape == w.shape and gb.shape == (4,)


# ---- the C test program: native, SIMDe AVX-512, ASan, aarch64 under qemu ----

def _missing(mode):
    return c_programs.missing(mode, ISAS)


@pytest.mark.skipif(_missing("native") is not None, reason=str(_missing("native")))
def test_c_native():
    """Every instruction set the CPU runs vs the float64 C reference and the
    scalar kernel; canaries around the output; the geometry rules."""
    out = c_programs.run("winograd_check", "native", "300", "1")
    for isa in c_programs.cpu_isas(ISAS):
        assert isa in out.splitlines()[0]


@pytest.mark.skipif(_missing("asan") is not None, reason=str(_missing("asan")))
def test_c_asan():
    """No read or write outside the arrays (edge tiles, padding, masked
    loads and stores), under AddressSanitizer and UBSan."""
    c_programs.run("winograd_check", "asan", "100", "2")


@pytest.mark.skipif(_missing("simde") is not None, reason=str(_missing("simde")))
def test_c_avx512_on_simde():
    """The AVX-512 kernel, built on SIMDe's portable AVX-512, on any AVX2 CPU
    (checks its logic where the CPU lacks AVX-512)."""
    out = c_programs.run("winograd_check", "simde", "150", "3")
    assert "avx512" in out.splitlines()[0]


@pytest.mark.skipif(_missing("aarch64") is not None, reason=str(_missing("aarch64")))
def test_c_neon_under_qemu():
    """The NEON kernel, cross-compiled for aarch64 and run under qemu,
    against the float64 C reference and the scalar kernel."""
    out = c_programs.run("winograd_check", "aarch64", "150", "4")
    assert "neon" in out.splitlines()[0]


def _core_library():
    """The path of the C core library this process loaded (the extension
    modules link it), or None where /proc/self/maps cannot tell."""
    try:
        maps = pathlib.Path("/proc/self/maps").read_text()
    except OSError:
        return None
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1].removesuffix(" (deleted)")  # rebuilt since loaded
        if os.path.basename(path).startswith("libcconv_core"):
            return path
    return None


def test_avx512_objects_isolated():
    """In the C core library, AVX-512 instructions (zmm registers) appear
    only in AVX-512 kernels (the avx512 instances, and the depthwise avx2vl
    one: the AVX2 kernels built with AVX-512VL, picked only where the CPU
    has it) and AVX2 ones (ymm) only in AVX2 and AVX-512 kernels, of every
    kernel family: no code that runs on any CPU was compiled with those
    instruction sets."""
    objdump = shutil.which("objdump")
    if objdump is None or "avx2" not in ISAS:
        pytest.skip("needs objdump and an x86-64 build")
    if "avx512" in _winograd.emulated_isas():
        pytest.skip("SIMDe test build (meson -Dsimde_avx512=true): the AVX-512 kernel has no zmm code")
    lib = _core_library()
    if lib is None:
        pytest.skip("the loaded core library cannot be found (/proc/self/maps)")
    r = subprocess.run([objdump, "-d", "--no-show-raw-insn", lib],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    func, zmm, ymm = None, set(), set()
    for line in r.stdout.splitlines():
        if line.endswith(">:"):
            func = line.split("<", 1)[1][:-2]
        elif "%zmm" in line:
            zmm.add(func)
        elif "%ymm" in line:
            ymm.add(func)
    if not any(f.startswith("cc_wdw_") for f in zmm | ymm):
        pytest.skip(f"{lib} has no symbols of its kernels (stripped)")
    wide = ("_avx512", "_avx2vl")
    assert all(any(t in f for t in wide) for f in zmm), sorted(
        f for f in zmm if not any(t in f for t in wide))
    assert all(f.startswith("cc_dw_") for f in zmm if "_avx2vl" in f), zmm
    assert all("_avx2" in f or "_avx512" in f for f in ymm), ymm
    for family in ("cc_wdw_", "cc_dw_", "cc_ig_", "cc_tr_"):
        assert any(f.startswith(family) for f in zmm), (family, zmm)
        assert any(f.startswith(family) and "_avx2" in f for f in ymm), (family, ymm)
