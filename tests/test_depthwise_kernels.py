"""The depthwise direct kernels (src/depthwise, cconv._depthwise,
cconv.backends.depthwise).

Every instruction set this CPU can run is forced in turn and checked against
a float64 NumPy depthwise reference written here and against the scalar
kernels, on random geometries (1-D/2-D/3-D, strides 1-3, padding 0-3 with
asymmetric after-padding, dilation 1-2, multiplier 1-3, inputs smaller than
the kernel), the specialised 3x3/5x5/7x7 stride-1/2 shapes, long 1-D kernels
and the small planes the forward runs channels-last; forward, grad_input
(adjoint) and grad_weight, float32 and float64.  The C
test program tests/c/dw_check.c does the same from C: natively (AVX2,
AVX-512), with the AVX-512 kernels built on SIMDe's emulation (CPUs without
AVX-512), and cross-compiled for aarch64 under qemu (NEON).
"""
from __future__ import annotations

import itertools
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import c_programs
from isa_switch import forced_isa

from cconv import _depthwise

ROOT = pathlib.Path(__file__).resolve().parents[1]
CDIR = ROOT / "tests" / "c"
TOL = {np.float32: 1e-5, np.float64: 1e-12}
ISAS = _depthwise.available_isas()


# ---- float64 NumPy reference ------------------------------------------------

def _taps(k):
    return itertools.product(*[range(v) for v in k])


def _window(t, out, stride, dil):
    return tuple(slice(t[i] * dil[i], t[i] * dil[i] + (out[i] - 1) * stride[i] + 1, stride[i])
                 for i in range(len(t)))


def _padded(x, pad, in_, out, k, stride, dil):
    """x zero-padded by pad before and as much as the windows need after."""
    need = [(out[i] - 1) * stride[i] + (k[i] - 1) * dil[i] + 1 for i in range(len(k))]
    after = [max(0, need[i] - pad[i] - in_[i]) for i in range(len(k))]
    return np.pad(x, [(0, 0), (0, 0)] + [(pad[i], after[i]) for i in range(len(k))])


def ref_fwd(x, w, b, stride, pad, out, dil):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    N, C = x.shape[:2]
    CO, k = w.shape[0], w.shape[2:]
    m = CO // C
    xr = np.repeat(_padded(x, pad, x.shape[2:], out, k, stride, dil), m, axis=1)
    y = np.zeros((N, CO) + tuple(out))
    for t in _taps(k):
        wt = w[(slice(None), 0) + t].reshape((1, CO) + (1,) * len(k))
        y += wt * xr[(slice(None), slice(None)) + _window(t, out, stride, dil)]
    if b is not None:
        y += b.astype(np.float64).reshape((1, CO) + (1,) * len(k))
    return y


def _adj(gy, w, stride, pad, in_, dil, out, k):
    """Adjoint by scatter-add into the padded input (per output channel)."""
    N, CO = gy.shape[:2]
    xp = _padded(np.zeros((N, CO) + tuple(in_)), pad, in_, out, k, stride, dil)
    for t in _taps(k):
        wt = w[(slice(None), 0) + t].reshape((1, CO) + (1,) * len(k))
        xp[(slice(None), slice(None)) + _window(t, out, stride, dil)] += wt * gy
    crop = tuple(slice(pad[i], pad[i] + in_[i]) for i in range(len(k)))
    return xp[(slice(None), slice(None)) + crop]


def ref_adj_c(gy, w, b, stride, pad, in_, dil, C):
    gy = gy.astype(np.float64)
    w = w.astype(np.float64)
    N, CO = gy.shape[:2]
    m = CO // C
    full = _adj(gy, w, stride, pad, in_, dil, gy.shape[2:], w.shape[2:])
    dx = full.reshape((N, C, m) + tuple(in_)).sum(axis=2)
    if b is not None:
        dx += b.astype(np.float64).reshape((1, C) + (1,) * len(in_))
    return dx


def ref_wgrad(x, gy, k, stride, pad, dil):
    x = x.astype(np.float64)
    gy = gy.astype(np.float64)
    N, C = x.shape[:2]
    CO, out = gy.shape[1], gy.shape[2:]
    m = CO // C
    xr = np.repeat(_padded(x, pad, x.shape[2:], out, k, stride, dil), m, axis=1)
    gw = np.zeros((CO, 1) + tuple(k))
    for t in _taps(k):
        sl = (slice(None), slice(None)) + _window(t, out, stride, dil)
        gw[(slice(None), 0) + t] = (gy * xr[sl]).sum(axis=(0,) + tuple(range(2, gy.ndim)))
    return gw


# ---- geometry ---------------------------------------------------------------

class Case:
    """A depthwise problem in the kernels' terms (plain convolution)."""

    def __init__(self, N, C, m, in_, k, stride, pad, dil, pad_after=None):
        nsp = len(in_)
        pad_after = pad if pad_after is None else pad_after
        self.N, self.C, self.m, self.CO = N, C, m, C * m
        self.in_, self.k, self.stride, self.pad, self.dil = map(tuple, (in_, k, stride, pad, dil))
        self.out = tuple((in_[i] + pad[i] + pad_after[i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1
                         for i in range(nsp))
        assert min(self.out) >= 1, self

    def geom(self):
        lead = 3 - len(self.in_)

        def p3(t, fill):
            return (fill,) * lead + tuple(t)

        return (self.N, self.C, self.C, self.CO, p3(self.in_, 1), p3(self.out, 1), p3(self.k, 1),
                p3(self.stride, 1), p3(self.pad, 0), p3(self.dil, 1))

    def __repr__(self):
        return (f"Case(N={self.N}, C={self.C}, m={self.m}, in={self.in_}, k={self.k}, "
                f"s={self.stride}, p={self.pad}, d={self.dil}, out={self.out})")


def random_case(rng):
    while True:
        nsp = int(rng.integers(1, 4))
        kind = int(rng.integers(0, 10))
        if kind <= 4:
            nsp = 2
        in_, k, s, p, pa, d = [], [], [], [], [], []
        for _ in range(nsp):
            kk = int(rng.integers(1, 4 if nsp == 3 else 6))
            ss, dd, pp = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(0, 4))
            ii = int(rng.integers(1, 10 if nsp == 3 else 25))
            if kind <= 4:  # specialised 3x3/5x5/7x7, stride 1/2
                kk = (5 if kind % 2 else 3) if rng.integers(0, 3) else 7
                ss = 1 if kind < 2 else (2 if kind < 4 else ss)
                dd = 1
            if kind == 5 and nsp == 1:  # long 1-D kernels (conformer k=31)
                kk = 31 if rng.integers(0, 2) else int(rng.integers(6, 41))
                pp = int(rng.integers(0, kk + 1))
                ii = int(rng.integers(1, 300))
            in_.append(ii), k.append(kk), s.append(ss), p.append(pp), d.append(dd)
            pa.append(max(0, pp + int(rng.integers(-1, 2))))
        if kind <= 4:
            k[0], s[0], d[0] = k[1], s[1], 1
            pa[0] = p[0]
        if all(in_[i] + p[i] + pa[i] - d[i] * (k[i] - 1) - 1 >= 0 for i in range(nsp)):
            return Case(int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 4)),
                        in_, k, s, p, d, pa)


def arrays(case, dtype, rng):
    x = rng.standard_normal((case.N, case.C) + case.in_).astype(dtype)
    w = rng.standard_normal((case.CO, 1) + case.k).astype(dtype)
    b = rng.standard_normal(case.CO).astype(dtype)
    bi = rng.standard_normal(case.C).astype(dtype)
    gy = rng.standard_normal((case.N, case.CO) + case.out).astype(dtype)
    return x, w, b, bi, gy


def relerr(a, ref):
    a = np.asarray(a, dtype=np.float64)
    scale = np.max(np.abs(ref)) if ref.size else 0.0
    err = np.max(np.abs(a - ref)) if ref.size else 0.0
    return err / scale if scale > 0 else err


def default_path(geom, es):
    """The forward path the default choice takes (channels-last blocks,
    plane kernels, row kernel: the first the kernels want)."""
    for path in ("channels_last", "plane", "rows"):
        if _depthwise.fwd_wanted(path, geom, es):
            return path
    raise ValueError(f"depthwise kernels cannot run the geometry {geom!r}")


def run_all(case, x, w, b, bi, gy, nt=2, path=None):
    """The default forward path (or ``path``), the adjoint, the weight gradient."""
    g = case.geom()
    path = path or default_path(g, x.itemsize)
    y = np.empty((case.N, case.CO) + case.out, x.dtype)
    dx = np.empty(x.shape, x.dtype)
    gw = np.empty(w.shape, x.dtype)
    _depthwise.fwd(path, g, x.ravel(), w.ravel(), None if b is None else b.ravel(), y.reshape(-1), nt)
    _depthwise.adj(g, gy.ravel(), w.ravel(), None if bi is None else bi.ravel(), dx.reshape(-1), nt)
    _depthwise.wgrad(g, x.ravel(), gy.ravel(), gw.reshape(-1), nt)
    return y, dx, gw


@pytest.fixture
def isa_guard():
    prev = _depthwise.isa()
    yield
    _depthwise.set_isa(prev)


def check_case(case, dtype, rng, use_bias=True, nt=2):
    x, w, b, bi, gy = arrays(case, dtype, rng)
    if not use_bias:
        b = bi = None
    yr = ref_fwd(x, w, b, case.stride, case.pad, case.out, case.dil)
    dxr = ref_adj_c(gy, w, bi, case.stride, case.pad, case.in_, case.dil, case.C)
    gwr = ref_wgrad(x, gy, case.k, case.stride, case.pad, case.dil)
    tol = TOL[dtype]
    results = {}
    # every forward path that can run the case, the default one last
    paths = [p for p in _depthwise.PATHS if _depthwise.fwd_applies(p, case.geom(), x.itemsize)]
    paths.append(default_path(case.geom(), x.itemsize))
    for isa in ISAS:
        _depthwise.set_isa(isa)
        for path in paths:
            y, dx, gw = run_all(case, x, w, b, bi, gy, nt, path)
            for what, got, ref in (("fwd", y, yr), ("adj", dx, dxr), ("wgrad", gw, gwr)):
                e = relerr(got, ref)
                assert e <= tol, f"{what} {path} {isa} {np.dtype(dtype).name} {case}: rel err {e:.3g}"
        results[isa] = (y, dx, gw)
    for isa in ISAS[1:]:
        for what, got, ref in zip(("fwd", "adj", "wgrad"), results[isa], results["scalar"]):
            e = relerr(got, ref.astype(np.float64))
            assert e <= tol, f"{what} {isa} vs scalar {np.dtype(dtype).name} {case}: rel err {e:.3g}"


# ---- tests ------------------------------------------------------------------

def test_isa_selection(isa_guard):
    assert _depthwise.__file__.endswith((".so", ".pyd"))
    assert "scalar" in ISAS
    assert _depthwise.isa() in ISAS
    for isa in ISAS:
        _depthwise.set_isa(isa)
        assert _depthwise.isa() == isa
    _depthwise.set_isa(None)  # the best: available_isas() lists it last
    assert _depthwise.isa() == ISAS[-1]
    with pytest.raises(ValueError, match="cannot run here"):
        _depthwise.set_isa("sse9")
    for isa in set(_depthwise.ISAS) - set(ISAS):
        with pytest.raises(ValueError):
            _depthwise.set_isa(isa)


def test_one_isa_choice_for_every_module(isa_guard):
    """The extension modules share one C core library, so one choice of
    instruction set: set_isa through any module switches every kernel
    family (depthwise, implicit GEMM and dense Winograd, depthwise Winograd,
    layout transpose)."""
    from cconv import _kernels, _nhwc, _winograd

    modules = (_depthwise, _kernels, _nhwc, _winograd)
    for setter in modules:
        for isa in ISAS:
            setter.set_isa(isa)
            assert [m.isa() for m in modules] == [isa] * len(modules), setter.__name__
        assert all(m.available_isas() == ISAS for m in modules)


def test_emulated_isas():
    """emulated_isas() names the SIMDe test build's AVX-512 kernels, from
    the build itself (not the CPU): the same list from every module, a part
    of the available sets, and 'avx512' in it wherever the kernels run on a
    CPU without AVX-512 (only the SIMDe build can)."""
    from cconv import _kernels, _nhwc, _winograd

    emulated = _depthwise.emulated_isas()
    assert isinstance(emulated, list) and set(emulated) <= {"avx512"}, emulated
    assert all(m.emulated_isas() == emulated for m in (_kernels, _nhwc, _winograd))
    assert set(emulated) <= set(ISAS)
    if "avx512" in ISAS and not c_programs.cpu_has("avx512f"):
        assert emulated == ["avx512"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("block", range(6))
def test_random_geometries(dtype, block, isa_guard):
    rng = np.random.default_rng(1000 * block + (dtype == np.float64))
    for i in range(12):
        check_case(random_case(rng), dtype, rng, use_bias=bool(i % 2), nt=1 + i % 3)


SPECIALISED = [
    # (in, k, stride, pad): the rk kernels, every padding, small and odd sizes
    ((h, w), (k, k), (s, s), (p, p))
    for k in (3, 5, 7) for s in (1, 2) for p in range(0, 4 if k < 7 else 7, 1 if k < 7 else 2)
    for (h, w) in ((k, k), (9, 17), (23, 40))
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("in_,k,stride,pad", SPECIALISED)
def test_specialised_2d(dtype, in_, k, stride, pad, isa_guard):
    rng = np.random.default_rng(sum(in_) * 31 + k[0] * 7 + stride[0] * 3 + pad[0])
    check_case(Case(2, 3, 1 + (pad[0] % 2) * 2, in_, k, stride, pad, (1, 1)), dtype, rng)


def _cl_cases():
    """Geometries the forward runs channels-last by default: small 2-D
    output planes with multiplier 1, channel counts around the block of 2
    vectors (8-70: partial blocks, more than one block), every row-block
    remainder (output widths 1-12; the fewest channels stay NCHW),
    3x3/5x5/7x7 at stride 1/2 and the generic shapes (dilation 2, other
    kernel sizes, strides 3, asymmetric padding), kernels that overhang the
    input, batch 1-3."""
    rng = np.random.default_rng(77)
    cases = []
    while len(cases) < 60:
        kind = len(cases) % 3
        kh = kw = int(rng.choice([3, 5, 7])) if kind < 2 else None
        if kind == 2:
            kh, kw = int(rng.integers(2, 10)), int(rng.integers(1, 10))
        s = (int(rng.integers(1, 3)),) * 2 if kind < 2 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        d = (1, 1) if kind < 2 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        p = (int(rng.integers(0, kh)), int(rng.integers(0, kw)))
        pa = tuple(max(0, v + int(rng.integers(-1, 2))) for v in p)
        in_ = (int(rng.integers(2, 16)), int(rng.integers(1, 16)) if kind else int(rng.integers(1, 8)))
        if any(in_[i] + p[i] + pa[i] - d[i] * ((kh, kw)[i] - 1) - 1 < 0 for i in range(2)):
            continue
        case = Case(int(rng.integers(1, 4)), int(rng.integers(8, 71)), 1, in_, (kh, kw), s, p, d, pa)
        if case.out[0] < 2:
            continue
        for es in (4, 8):
            if default_path(case.geom(), es) == "channels_last":
                cases.append(case)
                break
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channels_last_small_planes(dtype, isa_guard):
    """The channels-last forward against the reference and the scalar
    kernels, every ISA, 1-3 threads, with and without bias; the gradients of
    the same geometries (on the NCHW kernels) ride along."""
    rng = np.random.default_rng(8)
    es = np.dtype(dtype).itemsize
    n = 0
    for i, case in enumerate(_cl_cases()):
        n += default_path(case.geom(), es) == "channels_last"
        check_case(case, dtype, rng, use_bias=bool(i % 2), nt=1 + i % 3)
    assert n >= 40  # the cases do exercise the path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channels_last_wide_rows(dtype, isa_guard):
    """Rows of 4-64 output pixels through the channels-last kernel's pixel
    blocks (4, 8, and on AVX-512 12, 14 and 16, the last one of a row
    overlapping the one before): 3-, 5- and 7-tap rows at stride 1 with
    dilation 1 and 2, and at stride 2, every ISA, against the reference
    (check_case runs every path that applies, channels-last among them)."""
    rng = np.random.default_rng(2026)
    widths = list(range(4, 18)) + [20, 24, 28, 31, 33, 40, 47, 56, 64]
    for i, ow in enumerate(widths * 2):
        st = 1 + (i >= len(widths))
        k = (3, 5, 7)[i % 3]
        d = 1 + (i % 4 == 3) if k < 7 and st == 1 else 1
        p = (k // 2) * d
        iw = (ow - 1) * st + 1 + d * (k - 1) - 2 * p + int(rng.integers(0, st))
        case = Case(1 + i % 2, int(rng.integers(8, 40)), 1, (int(rng.integers(2, 5)) * st, iw),
                    (k, k), (st, st), (p, p), (d, d))
        assert case.out[1] == ow, (case.out, ow)
        assert _depthwise.fwd_applies("channels_last", case.geom(), np.dtype(dtype).itemsize)
        check_case(case, dtype, rng, use_bias=bool(i % 2), nt=1 + i % 2)


def _cl3_cases():
    """3-D geometries the forward runs channels-last: kernels 1-3 deep
    (depth 1 with the 2-D plane rule, deeper ones on the generic rule),
    strides and dilations 1-3/1-2 per axis, asymmetric padding that can
    leave whole output planes without an input plane (depth padding larger
    than the kernel's reach), channel counts around the block, batch 1-2."""
    rng = np.random.default_rng(91)
    cases = []
    while len(cases) < 24:
        k = tuple(int(v) for v in rng.integers(1, 4, size=3))
        k = (k[0], max(2, k[1]), k[2])
        s = tuple(int(v) for v in rng.integers(1, 4, size=3))
        d = tuple(int(v) for v in rng.integers(1, 3, size=3))
        p = tuple(int(rng.integers(0, kk + 1)) for kk in k)
        pa = tuple(max(0, v + int(rng.integers(-1, 2))) for v in p)
        in_ = tuple(int(v) for v in rng.integers(1, 9, size=3))
        if any(in_[i] + p[i] + pa[i] - d[i] * (k[i] - 1) - 1 < 0 for i in range(3)):
            continue
        case = Case(int(rng.integers(1, 3)), int(rng.integers(16, 71)), 1, in_, k, s, p, d, pa)
        if case.out[1] < 2:
            continue
        if default_path(case.geom(), 4) == "channels_last":
            cases.append(case)
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_channels_last_3d(dtype, isa_guard):
    """3-D depthwise layers on small planes run channels-last (the generic
    row kernel's per-row work dominated them: 8x8x8 planes 3-5x slower);
    against the reference and the scalar kernels, every ISA, 1-3 threads."""
    rng = np.random.default_rng(12)
    cases = _cl3_cases()
    assert sum(c.k[0] > 1 for c in cases) >= 8 and sum(c.k[0] == 1 for c in cases) >= 2
    for i, case in enumerate(cases):
        check_case(case, dtype, rng, use_bias=bool(i % 2), nt=1 + i % 3)


def _plane3_cases():
    """3-D geometries whose planes the plane kernels run, one call per depth
    tap (the later ones accumulating): square 3x3/5x5/7x7 kernels of stride
    1 or 2 across the planes, 1-4 depth taps of stride 1-3 and dilation
    1-2, depth padding up to past the kernel's reach (output planes with no
    input plane: the bias alone), multipliers 1-3."""
    rng = np.random.default_rng(93)
    cases = []
    while len(cases) < 24:
        kk = int(rng.choice([3, 5, 7]))
        s = int(rng.integers(1, 3))
        k = (int(rng.integers(1, 5)), kk, kk)
        st = (int(rng.integers(1, 4)), s, s)
        d = (int(rng.integers(1, 3)), 1, 1)
        p = (int(rng.integers(0, k[0] * d[0] + 1)),) + (int(rng.integers(0, kk // 2 + 2)),) * 2
        pa = tuple(max(0, v + int(rng.integers(-1, 2))) for v in p)
        in_ = (int(rng.integers(1, 8)), int(rng.integers(kk, 40)), int(rng.integers(kk, 40)))
        if any(in_[i] + p[i] + pa[i] - d[i] * (k[i] - 1) - 1 < 0 for i in range(3)):
            continue
        case = Case(int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 4)),
                    in_, k, st, p, d, pa)
        if default_path(case.geom(), 4) == "plane":
            cases.append(case)
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plane_kernels_3d(dtype, isa_guard):
    """3-D depthwise layers on the plane kernels (one call per depth tap):
    against the reference and the scalar kernels, every ISA, 1-3 threads,
    with and without bias."""
    rng = np.random.default_rng(14)
    cases = _plane3_cases()
    assert sum(c.k[0] > 1 for c in cases) >= 12
    for i, case in enumerate(cases):
        check_case(case, dtype, rng, use_bias=bool(i % 2), nt=1 + i % 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plane_kernels_3d_kept_rings(dtype, isa_guard):
    """3-D planes of depth stride and dilation 1 keep each input plane's
    rows in a ring of their own while the output depths that read it run
    (dw_fwd.inc: keep): one channel whose planes the threads' row blocks
    cut mid-plane (a later use needs rows before those a ring holds), 4
    depth taps with depth padding 3 and 0, output depths reading no input
    plane, stride 2 across the planes, multipliers, and planes too large to
    keep (the per-step rings): against the reference and the scalar
    kernels, every ISA, 1-3 threads."""
    rng = np.random.default_rng(77)
    cases = [
        Case(1, 1, 1, (9, 30, 33), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
        Case(1, 2, 2, (6, 40, 21), (3, 3, 3), (1, 2, 2), (1, 1, 1), (1, 1, 1)),
        Case(2, 3, 1, (5, 17, 50), (4, 5, 5), (1, 1, 1), (3, 2, 2), (1, 1, 1), (0, 2, 2)),
        Case(1, 2, 1, (3, 26, 26), (3, 7, 7), (1, 2, 2), (2, 3, 3), (1, 1, 1)),
        Case(1, 1, 1, (4, 300, 60), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),
    ]
    for case in cases:
        assert _depthwise.fwd_applies("plane", case.geom(), np.dtype(dtype).itemsize), case
        for nt in (1, 2, 3):
            check_case(case, dtype, rng, use_bias=nt != 2, nt=nt)


def _dilated_plane_cases():
    """Geometries of the dilated plane kernels: 3x3 across the planes,
    stride 1, dilation 2 or 4, 2-D and 3-D (depth taps 1-3 of dilation 1-2),
    padding from none to past the adjoint's plane reach (2D + 1: the
    adjoint's generic path), asymmetric after-padding, planes from smaller
    than the dilated kernel's reach (inputs narrower than a vector) to
    several vectors wide and more rows than one step, multipliers 1-3."""
    rng = np.random.default_rng(2024)
    cases = []
    while len(cases) < 30:
        d = int(rng.choice([2, 4]))
        three = bool(rng.integers(0, 3) == 0)
        p = int(rng.integers(0, 2 * d + 2))
        pa = max(0, p + int(rng.integers(-2, 2)))
        hi = 20 if three else 60
        in_ = [int(rng.integers(1, hi)), int(rng.integers(1, hi))]
        k, st, dil, pad, pad_a = [3, 3], [1, 1], [d, d], [p, p], [pa, pa]
        if three:
            kd, dd = int(rng.integers(1, 4)), int(rng.integers(1, 3))
            pd = int(rng.integers(0, kd))
            in_, k, st = [int(rng.integers(1, 6))] + in_, [kd] + k, [1] + st
            dil, pad, pad_a = [dd] + dil, [pd] + pad, [pd] + pad_a
        if any(in_[i] + pad[i] + pad_a[i] - dil[i] * (k[i] - 1) - 1 < 0 for i in range(len(k))):
            continue
        cases.append(Case(int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 4)),
                          in_, k, st, pad, dil, pad_a))
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dilated_plane_kernels(dtype, isa_guard):
    """3x3 stride-1 dilation-2/4 layers on the dilated plane kernels (the
    forward, and the adjoint with flipped weights where the padding is
    within 2D): every path that takes them against the reference and the
    scalar kernels, every ISA, 1-3 threads, with and without bias."""
    rng = np.random.default_rng(15)
    cases = _dilated_plane_cases()
    assert all(_depthwise.fwd_applies("plane", c.geom(), 4) for c in cases)
    assert sum(default_path(c.geom(), 4) == "plane" for c in cases) >= 10
    assert sum(len(c.k) == 3 for c in cases) >= 5 and {c.dil[-1] for c in cases} == {2, 4}
    for i, case in enumerate(cases):
        check_case(case, dtype, rng, use_bias=bool(i % 2), nt=1 + i % 3)


def _nhwc_cases():
    """Multiplier-1 geometries for the channels-last-memory forward: 1-3-D,
    channel counts below, on and past the kernel's channel step (8 and 16
    lanes by 2), strides 1-3, dilation 1-2, asymmetric padding, kernels that
    overhang the input, batch 1-3."""
    rng = np.random.default_rng(31)
    cases = []
    while len(cases) < 30:
        nsp = int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 5 if nsp < 3 else 4, size=nsp))
        s = tuple(int(v) for v in rng.integers(1, 4, size=nsp))
        d = tuple(int(v) for v in rng.integers(1, 3, size=nsp))
        p = tuple(int(rng.integers(0, kk + 1)) for kk in k)
        pa = tuple(max(0, v + int(rng.integers(-1, 2))) for v in p)
        in_ = tuple(int(v) for v in rng.integers(1, 13 if nsp < 3 else 7, size=nsp))
        if any(in_[i] + p[i] + pa[i] - d[i] * (k[i] - 1) - 1 < 0 for i in range(nsp)):
            continue
        C = int(rng.choice([2, 3, 7, 16, 17, 31, 32, 33, 48, 64, 70]))
        cases.append(Case(int(rng.integers(1, 4)), C, 1, in_, k, s, p, d, pa))
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fwd_nhwc(dtype, isa_guard):
    """The forward on channels-last memory (cconv._depthwise.fwd_nhwc)
    against the float64 reference and the scalar kernel, every ISA, 1-3
    threads, with and without bias."""
    rng = np.random.default_rng(5)
    tol = TOL[dtype]
    for i, case in enumerate(_nhwc_cases()):
        g = case.geom()
        assert _depthwise.nhwc_ok(g, np.dtype(dtype).itemsize)
        x, w, b, _, _ = arrays(case, dtype, rng)
        b = b if i % 2 else None
        ref = ref_fwd(x, w, b, case.stride, case.pad, case.out, case.dil)
        xl = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        got = {}
        for isa in ISAS:
            _depthwise.set_isa(isa)
            yl = np.full((case.N,) + case.out + (case.C,), np.nan, dtype)
            _depthwise.fwd_nhwc(g, xl.ravel(), w.ravel(), b, yl.reshape(-1), 1 + i % 3)
            y = np.moveaxis(yl, -1, 1)
            e = relerr(y, ref)
            assert e <= tol, f"{isa} {np.dtype(dtype).name} {case}: rel err {e:.3g}"
            got[isa] = y
        for isa in ISAS[1:]:
            e = relerr(got[isa], got["scalar"].astype(np.float64))
            assert e <= tol, f"{isa} vs scalar {case}: rel err {e:.3g}"


def test_fwd_nhwc_rejects_what_it_cannot_run():
    g2 = Case(1, 4, 2, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1)).geom()   # multiplier 2
    assert not _depthwise.nhwc_ok(g2, 4)
    with pytest.raises(ValueError):
        _depthwise.fwd_nhwc(g2, np.zeros(100, np.float32), np.zeros(72, np.float32), None,
                            np.zeros(200, np.float32), 1)
    g1 = Case(1, 4, 1, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1)).geom()
    assert not _depthwise.nhwc_ok(g1, 2)
    big = Case(1, 4096, 1, (1, 4 << 20), (1, 3), (1, 1), (0, 1), (1, 1)).geom()  # 64 GiB rows
    assert not _depthwise.nhwc_ok(big, 4)
    with pytest.raises(ValueError, match="elements"):  # sizes are checked first
        _depthwise.fwd_nhwc(g1, np.zeros(99, np.float32), np.zeros(36, np.float32), None,
                            np.zeros(100, np.float32), 1)


@pytest.mark.parametrize("isa", _depthwise.available_isas())
def test_fwd_path_choice(isa):
    """Where the forward goes channels-last, and where not (dw_cl.c), on
    each instruction set: AVX-512's wider channels-last blocks take larger
    5x5 and 7x7 planes."""
    def path(N, C, m, in_, k, s=1, p=0, d=1, es=4):
        nsp = len(in_)
        t = lambda v: v if isinstance(v, tuple) else (v,) * nsp
        with forced_isa(isa):
            return default_path(Case(N, C, m, in_, k, t(s), t(p), t(d)).geom(), es)

    wide = "channels_last" if isa == "avx512" else "plane"
    assert path(1, 192, 1, (40, 40), (7, 7), p=3) == wide             # 7x7 s1: 784 / 4096
    assert path(4, 96, 1, (56, 56), (7, 7), p=3) == wide              # ConvNeXt stage 1
    assert path(4, 96, 1, (56, 56), (7, 7), p=3, es=8) == wide
    assert path(4, 96, 1, (64, 64), (7, 7), p=3) == wide              # 4096
    assert path(1, 96, 1, (65, 65), (7, 7), p=3) == "plane"
    assert path(1, 96, 1, (112, 112), (7, 7), s=2, p=3) == wide       # 7x7 s2 onto 56x56
    assert path(1, 240, 1, (56, 56), (5, 5), s=2, p=2) == wide        # 5x5 s2: 400 / 784
    assert path(1, 240, 1, (56, 56), (5, 5), s=2, p=2, es=8) == "plane"  # float64: 400
    assert path(1, 240, 1, (58, 58), (5, 5), s=2, p=2) == "plane"
    assert path(1, 240, 1, (32, 32), (5, 5), p=2) == "plane"          # 5x5 s1: 784 on all

    assert path(1, 768, 1, (7, 7), (7, 7), p=3) == "channels_last"    # ConvNeXt stage 4
    assert path(1, 384, 1, (14, 14), (7, 7), p=3) == "channels_last"  # ConvNeXt stage 3
    assert path(1, 960, 1, (7, 7), (3, 3), p=1, es=8) == "channels_last"
    assert path(1, 96, 1, (28, 28), (9, 9), p=4) == "channels_last"   # generic kernel, small plane
    assert path(1, 144, 1, (56, 56), (3, 3), p=1) == "plane"          # MobileNetV2
    assert path(1, 576, 1, (14, 14), (3, 3), p=1) == "plane"          # 3x3 from 8x8 up
    assert path(1, 192, 1, (28, 28), (7, 7), p=3) == "channels_last"  # 7x7: up to 784 outputs
    assert path(1, 96, 1, (24, 24), (3, 3), s=2, p=1) == "channels_last"  # 3x3 s2: up to 144
    assert path(1, 96, 1, (28, 28), (3, 3), s=2, p=1) == "plane"
    assert path(1, 240, 1, (28, 28), (5, 5), p=2) == "channels_last"  # 5x5 s1: up to 784
    assert path(1, 240, 1, (32, 32), (5, 5), p=2) == "plane"
    assert path(1, 240, 1, (40, 40), (5, 5), s=2, p=2) == "channels_last"  # 5x5 s2: up to 400
    # 3x3 stride 1 dilation 2 and 4: the dilated plane kernels, by the 3x3 rule
    assert path(1, 256, 1, (33, 33), (3, 3), p=2, d=2) == "plane"
    assert path(4, 256, 1, (33, 33), (3, 3), p=4, d=4) == "plane"
    assert path(1, 96, 1, (56, 56), (3, 3), p=2, d=2) == "plane"
    assert path(1, 960, 1, (7, 7), (3, 3), p=2, d=2) == "channels_last"  # rows of 7
    # other dilations and sizes: the generic row kernel, channels-last up to 2048
    assert path(1, 256, 1, (33, 33), (3, 3), p=3, d=3) == "channels_last"
    assert path(1, 256, 1, (45, 45), (5, 5), p=4, d=2) == "channels_last"
    assert path(1, 96, 1, (56, 56), (3, 3), p=3, d=3) == "rows"
    assert path(4, 256, 1, (500,), (31,), p=15) == "rows"              # 1-D: never
    assert path(1, 768, 2, (7, 7), (7, 7), p=3) == "plane"            # multiplier 2: never
    assert path(1, 8, 1, (7, 7), (7, 7), p=3) == "plane"              # few channels
    assert path(1, 16, 1, (7, 7), (7, 7), p=3) == "channels_last"     # ... enough for 7x7
    assert path(1, 16, 1, (7, 7), (3, 3), p=1) == "plane"             # ... not for 3x3
    assert path(1, 32, 1, (7, 7), (3, 3), p=1) == "channels_last"
    # 3-D with planes the plane kernels take (one call per depth tap): the
    # 2-D rule, and 3x3 stride 1 up to 196 outputs a plane
    assert path(4, 256, 1, (8, 8, 8), (3, 3, 3), s=2, p=1) == "channels_last"
    assert path(1, 192, 1, (16, 16, 16), (3, 3, 3), p=1) == "plane"      # 256 a plane
    assert path(1, 64, 1, (8, 14, 14), (3, 3, 3), p=1) == "channels_last"  # 196
    assert path(1, 64, 1, (8, 15, 15), (3, 3, 3), p=1) == "plane"        # 225
    assert path(1, 64, 1, (8, 28, 28), (3, 5, 5), p=(1, 2, 2)) == "channels_last"  # 5x5: 784
    assert path(1, 64, 1, (16, 40, 40), (1, 7, 7), p=(0, 3, 3)) == "plane"  # 3-D: 784 on all
    assert path(1, 64, 1, (4, 28, 28), (1, 7, 7), p=(0, 3, 3)) == "channels_last"
    assert path(1, 64, 1, (8, 7, 7), (1, 3, 3), p=(0, 1, 1)) == "channels_last"
    assert path(2, 64, 1, (32, 32, 32), (3, 3, 3), p=1) == "plane"       # volume too large
    assert path(2, 8, 1, (8, 8, 8), (3, 3, 3), p=1) == "plane"           # few channels
    assert path(2, 64, 2, (8, 8, 8), (3, 3, 3), p=1) == "plane"          # multiplier 2
    # dilation 2 or 4 across the planes: the dilated plane kernels, by the 3x3 rule
    assert path(1, 64, 1, (8, 32, 32), (3, 3, 3), p=2, d=2) == "plane"
    assert path(2, 96, 1, (8, 14, 14), (3, 3, 3), p=2, d=2) == "channels_last"  # 196
    assert path(2, 8, 1, (8, 8, 8), (3, 3, 3), p=2, d=2) == "plane"      # few channels
    # other 3-D layers: the generic row kernel, channels-last up to 1024 a plane
    assert path(1, 64, 1, (8, 32, 32), (3, 3, 3), p=3, d=3) == "channels_last"
    assert path(2, 64, 1, (32, 32, 32), (3, 3, 3), p=3, d=3) == "rows"   # volume too large
    assert path(2, 8, 1, (8, 8, 8), (3, 3, 3), p=3, d=3) == "rows"       # few channels
    assert path(2, 64, 2, (8, 8, 8), (3, 4, 4), p=1) == "rows"           # multiplier 2
    bad = (1, 2, 4, 4, (1, 3, 3), (1, 3, 3), (1, 1, 1), (1, 1, 1), (1, 0, 0), (1, 1, 1))
    ok_geom = Case(1, 2, 1, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1)).geom()
    for p in _depthwise.PATHS:
        assert not _depthwise.fwd_applies(p, bad, 4) and not _depthwise.fwd_wanted(p, bad, 4)
        assert not _depthwise.fwd_applies(p, ok_geom, 2)   # elements of 4 or 8 bytes only
    with pytest.raises(ValueError, match="unknown forward path"):
        _depthwise.fwd_applies("diagonal", ok_geom, 4)


def _adj2_cases():
    """Geometries whose grad_input rows run the one-pass stride-2 kernel
    (adj2): horizontal stride 2, dilation 1, 2 to 5 taps, with every
    horizontal padding parity, odd and even widths around the vector
    lengths (1, 2, 4, 8, 16 pairs and the tails), asymmetric padding (so
    more or fewer gradient columns than the padding implies), other vertical/depth
    strides and dilations, 1-D to 3-D, multipliers 1-3."""
    rng = np.random.default_rng(22)
    cases = []
    for kw in (2, 3, 4, 5):
        for pw in range(0, 5):
            for iw in (1, 2, 3, 7, 15, 16, 17, 31, 33, 47, 64, 65, 70):
                pa = max(0, pw + int(rng.integers(-1, 2)))  # asymmetric padding too
                if iw + pw + pa < kw:
                    continue
                nsp = int(rng.integers(1, 4))
                lead = []
                for _ in range(nsp - 1):
                    k = int(rng.integers(1, 4))
                    d = int(rng.integers(1, 3))
                    ii = int(rng.integers(k * d, k * d + 6))
                    lead.append((ii, k, int(rng.integers(1, 4)), int(rng.integers(0, 3)), d))
                in_ = tuple(t[0] for t in lead) + (iw,)
                k = tuple(t[1] for t in lead) + (kw,)
                st = tuple(t[2] for t in lead) + (2,)
                pd = tuple(t[3] for t in lead) + (pw,)
                dl = tuple(t[4] for t in lead) + (1,)
                cases.append(Case(int(rng.integers(1, 3)), int(rng.integers(1, 4)),
                                  int(rng.integers(1, 4)), in_, k, st, pd, dl, pd[:-1] + (pa,)))
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stride2_adjoint_rows(dtype, isa_guard):
    rng = np.random.default_rng(5)
    for i, case in enumerate(_adj2_cases()):
        check_case(case, dtype, rng, use_bias=bool(i % 2), nt=1 + i % 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    Case(1, 2, 1, (1, 1), (3, 3), (1, 1), (1, 1), (1, 1)),       # input smaller than the kernel
    Case(2, 3, 2, (2, 1), (5, 5), (2, 1), (2, 2), (1, 1)),
    Case(1, 2, 3, (1,), (7,), (3,), (6,), (2,)),
    Case(2, 2, 1, (2, 1, 2), (3, 3, 3), (1, 2, 1), (1, 1, 1), (1, 1, 1)),
    Case(1, 3, 1, (3, 3), (3, 3), (3, 3), (3, 3), (2, 2)),        # outputs only from padding
    Case(1, 2, 2, (1,), (31,), (1,), (15,), (1,)),
    Case(3, 4, 1, (2, 3), (3, 3), (2, 2), (1, 1), (1, 1), (0, 0)),
])
def test_tiny_inputs(dtype, case, isa_guard):
    check_case(case, dtype, np.random.default_rng(7))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("L,k,pad", [(64, 31, 15), (257, 31, 15), (1000, 31, 15), (100, 15, 7),
                                     (40, 31, 30)])
def test_long_1d(dtype, L, k, pad, isa_guard):
    rng = np.random.default_rng(L + k)
    check_case(Case(2, 8, 1, (L,), (k,), (1,), (pad,), (1,)), dtype, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wgrad_deterministic(dtype, isa_guard):
    """grad_weight: the same bits for every call and every thread count."""
    rng = np.random.default_rng(3)
    case = Case(4, 6, 2, (37, 29), (3, 3), (1, 1), (1, 1), (1, 1))
    x, w, b, bi, gy = arrays(case, dtype, rng)
    for isa in ISAS:
        _depthwise.set_isa(isa)
        ref = None
        for nt in (1, 2, 3, 4, 1, 2):
            gw = np.empty(w.shape, dtype)
            _depthwise.wgrad(case.geom(), x.ravel(), gy.ravel(), gw.reshape(-1), nt)
            if ref is None:
                ref = gw
            assert np.array_equal(gw.view(np.uint8), ref.view(np.uint8)), (isa, nt)


def test_large_plane_many_threads(isa_guard):
    """Row blocks split between threads (one image, few channels)."""
    rng = np.random.default_rng(11)
    check_case(Case(1, 2, 1, (150, 70), (3, 3), (1, 1), (1, 1), (1, 1)), np.float32, rng, nt=4)
    check_case(Case(1, 1, 3, (61, 33), (5, 5), (2, 2), (2, 2), (1, 1)), np.float64, rng, nt=3)


@pytest.mark.parametrize("dtype,case", [
    # input rows 63 wide: no prefetch; 64 wide: prefetch (DW_PF_MIN_WIDTH)
    (np.float32, Case(1, 3, 1, (20, 63), (3, 3), (1, 1), (1, 1), (1, 1))),
    (np.float32, Case(2, 2, 2, (19, 64), (3, 3), (2, 2), (1, 1), (1, 1))),
    (np.float64, Case(1, 2, 1, (11, 130), (5, 5), (1, 1), (2, 2), (1, 1))),
    # narrow rows, but more than 8 MiB of input and output: prefetch
    (np.float64, Case(1, 2, 1, (6600, 40), (3, 3), (1, 1), (1, 1), (1, 1))),
    (np.float32, Case(1, 2, 1, (13200, 40), (3, 3), (2, 2), (1, 1), (1, 1))),
])
def test_plane_prefetch_rule_sides(dtype, case, isa_guard):
    """The plane kernels with and without their row prefetches
    (dw_plane_pf: by row width and by the bytes a call moves), forward and
    adjoint, against the reference and the scalar kernels."""
    check_case(case, dtype, np.random.default_rng(case.in_[1]), nt=2)


def test_zero_sizes():
    g = Case(0, 3, 2, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1)).geom()
    e = np.empty(0, np.float32)
    w = np.ones(6 * 9, np.float32)
    _depthwise.fwd("rows", g, e, w, None, e, 2)
    _depthwise.adj(g, e, w, None, e, 2)
    gw = np.full(6 * 9, np.nan, np.float32)
    _depthwise.wgrad(g, e, e, gw, 2)
    assert not gw.any()


def test_bad_arguments():
    case = Case(1, 3, 2, (5, 5), (3, 3), (1, 1), (1, 1), (1, 1))
    g = case.geom()
    x = np.zeros(3 * 25, np.float32)
    w = np.zeros(6 * 9, np.float32)
    y = np.zeros(6 * 25, np.float32)
    with pytest.raises(ValueError, match="x: expected"):
        _depthwise.fwd("rows", g, x[:-1], w, None, y, 1)
    with pytest.raises(ValueError, match="b: expected"):
        _depthwise.fwd("plane", g, x, w, np.zeros(3, np.float32), y, 1)
    with pytest.raises(ValueError, match="gw: expected"):
        _depthwise.wgrad(g, x, y, w[:-2], 1)
    bad = (1, 2, 3, 6) + g[4:]  # groups != c_in
    with pytest.raises(ValueError, match="cannot run"):
        _depthwise.fwd("rows", bad, x, w, None, y, 1)
    assert not _depthwise.geom_ok(bad)
    assert not _depthwise.geom_ok((1, 3, 3, 4) + g[4:])  # c_out not a multiple
    neg = g[:8] + ((0, -1, 1),) + g[9:]
    assert not _depthwise.geom_ok(neg)
    assert _depthwise.geom_ok(g)


def test_env_var_forces_isa(tmp_path):
    code = "from cconv import _depthwise as d; print(d.isa())"
    env = dict(os.environ, CCONV_SIMD="scalar")
    every = ("from cconv import _depthwise, _kernels, _nhwc, _winograd; "
             "print(*(m.isa() for m in (_depthwise, _kernels, _nhwc, _winograd)))")
    r = subprocess.run([sys.executable, "-c", every], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "scalar scalar scalar scalar"
    env["CCONV_SIMD"] = "no-such-isa"
    r = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "CCONV_SIMD" in r.stderr and "RuntimeWarning" in r.stderr
    assert r.stdout.strip().splitlines()[-1] == ISAS[-1]  # falls back to the best


# ---- the C test program: native, SIMDe AVX-512, aarch64 under qemu -----------

def _missing(mode):
    return c_programs.missing(mode, ISAS)


def _adjoint_planes(out):
    """How many adjoints dw_check's output says the stride-2 plane form
    (adj2p) ran."""
    m = re.search(r"adjoint by stride-2 planes: (\d+)", out)
    return int(m.group(1)) if m else -1


@pytest.mark.skipif(_missing("native") is not None, reason=str(_missing("native")))
def test_c_native():
    """Every instruction set the CPU runs vs the naive C reference and the
    scalar kernels."""
    out = c_programs.run("dw_check", "native", "300", "1")
    for isa in c_programs.cpu_isas(ISAS):
        assert isa in out.splitlines()[0]
    paths = re.search(r"plane (\d+), rows (\d+), channels-last (\d+)", out)
    assert paths and min(int(v) for v in paths.groups()) > 0, out  # every forward path ran
    assert _adjoint_planes(out) > 0, out  # the stride-2 adjoint's plane form ran


@pytest.mark.skipif(_missing("simde") is not None, reason=str(_missing("simde")))
def test_c_avx512_on_simde():
    """The AVX-512 kernels, built on SIMDe's portable AVX-512, on any AVX2
    CPU (this checks the kernels' logic where the CPU lacks AVX-512)."""
    out = c_programs.run("dw_check", "simde", "100", "2")
    assert "avx512" in out.splitlines()[0]


@pytest.mark.skipif(_missing("aarch64") is not None, reason=str(_missing("aarch64")))
def test_c_neon_under_qemu():
    """The NEON kernels, cross-compiled for aarch64 and run under qemu,
    against the naive C reference and the scalar kernels."""
    out = c_programs.run("dw_check", "aarch64", "150", "3")
    assert "neon" in out.splitlines()[0]
    assert _adjoint_planes(out) > 0, out


# ---- the backend module through the public API ------------------------------

def _public():
    try:
        import cconv
    except ImportError:  # pragma: no cover
        return None
    return cconv if hasattr(cconv, "conv2d") else None


@pytest.mark.skipif(_public() is None, reason="cconv's public API is not importable")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backend_public_api(dtype, isa_guard):
    import cconv
    from cconv._dispatch import Backend

    rng = np.random.default_rng(5)
    C, m = 4, 2
    x = rng.standard_normal((2, C, 13, 11)).astype(dtype)
    w = rng.standard_normal((C * m, 1, 3, 3)).astype(dtype)
    b = rng.standard_normal(C * m).astype(dtype)
    tol = TOL[dtype]
    for isa in ISAS:
        _depthwise.set_isa(isa)
        y = cconv.conv2d(x, w, b, stride=2, padding=1, groups=C, backend=Backend.DEPTHWISE)
        out = tuple((13 + 2 - 2 - 1) // 2 + 1 for _ in range(1)) + ((11 + 2 - 2 - 1) // 2 + 1,)
        ref = ref_fwd(x, w, b, (2, 2), (1, 1), out, (1, 1))
        assert y.dtype == dtype and relerr(y, ref) <= tol
        # transposed depthwise: weight (C, 1, k), groups = C
        wt = rng.standard_normal((C, 1, 3, 3)).astype(dtype)
        yt = cconv.conv_transpose2d(x, wt, None, stride=2, padding=1, groups=C,
                                    backend="depthwise")
        in_t = yt.shape[2:]
        ref_t = ref_adj_c(x, wt, None, (2, 2), (1, 1), in_t, (1, 1), C)
        assert relerr(yt, ref_t) <= tol
    assert cconv.select_backend(x, w, b, groups=C) == Backend.DEPTHWISE_PLANE


def test_read_only_inputs():
    rng = np.random.default_rng(8)
    case = Case(2, 3, 2, (9, 7), (3, 3), (2, 1), (1, 1), (1, 1))
    x, w, b, bi, gy = arrays(case, np.float32, rng)
    for a in (x, w, b, bi, gy):
        a.setflags(write=False)
    y, dx, gw = run_all(case, x, w, b, bi, gy)
    assert relerr(y, ref_fwd(x, w, b, case.stride, case.pad, case.out, case.dil)) <= 1e-5
    assert relerr(dx, ref_adj_c(gy, w, bi, case.stride, case.pad, case.in_, case.dil, case.C)) <= 1e-5
    assert relerr(gw, ref_wgrad(x, gy, case.k, case.stride, case.pad, case.dil)) <= 1e-5
