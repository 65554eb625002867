"""The CUDA backends' Python side (tiling, buffer layouts, GEMM shapes, the
plain/transposed mappings, dispatch), run without a GPU: the backends'
``*_with(xp, K, ...)`` functions are called with ``xp = numpy`` and ``K`` =
the kernels of cconv/cuda compiled as C++ by tests/c/cuda_harness.cpp, and
compared with the float64 reference of tests/reference.py.  Small
workspace bounds force batch tiles and column tiles (the accumulating
col2im over an image range)."""
from __future__ import annotations

import importlib.util
import itertools
import math
import os
import types

import numpy as np
import pytest

from cconv import Backend, _dispatch
from cconv._dispatch import Problem
from cconv.cuda import kernels as _cuda_kernels
from cconv._params import make_params
from cconv.cuda import depthwise as cuda_depthwise, gemm as cuda_gemm, gemm_transpose as cuda_gemm_transpose
from reference import (
    rel_err,
    reduction_length,
    ref_conv,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_transpose,
    ref_conv_transpose_grad_input,
    ref_conv_transpose_grad_weight,
    tolerance,
)

_spec = importlib.util.spec_from_file_location(
    "cuda_harness", os.path.join(os.path.dirname(os.path.abspath(__file__)), "c", "cuda_harness.py"))
cuda_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cuda_harness)

FAKE_CUPY = types.SimpleNamespace(__name__="cupy")
BACKENDS = {
    Backend.CUDA_GEMM: cuda_gemm,
    Backend.CUDA_GEMM_TRANSPOSE: cuda_gemm_transpose,
    Backend.CUDA_DEPTHWISE: cuda_depthwise,
}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    if cuda_harness.compiler() is None:
        pytest.skip("no C++ compiler to build the CUDA harness")
    return cuda_harness.Harness(cuda_harness.build(str(tmp_path_factory.mktemp("cuda_harness"))))


@pytest.fixture
def workspace():
    old = _cuda_kernels.workspace_bytes()
    yield _cuda_kernels.set_workspace_bytes
    _cuda_kernels.set_workspace_bytes(old)


# --------------------------------------------------------------------------
# random problems
# --------------------------------------------------------------------------
def random_case(rng, transposed: bool, depthwise: bool, nsp: int | None = None):
    nsp = nsp or int(rng.integers(1, 4))
    groups = int(rng.integers(2, 4)) if depthwise else int(rng.choice([1, 1, 2, 3]))
    a = 1 if depthwise else int(rng.integers(1, 4))          # plain input channels per group
    m = int(rng.integers(1, 3)) if depthwise else int(rng.integers(1, 4))  # plain outputs per group
    k = tuple(int(rng.integers(1, 4)) for _ in range(nsp))
    s = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    d = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    batch = int(rng.integers(1, 4))
    if transposed:
        pad = tuple(int(rng.integers(0, 2)) for _ in range(nsp))
        op = tuple(int(rng.integers(0, max(ss, dd))) for ss, dd in zip(s, d))
        size = tuple(1 + int(rng.integers(0, 5 - nsp)) for _ in range(nsp))
        # the transposed conv's input side is the plain output side
        c_in, c_out = groups * m, groups * a
        ok = all((i - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1 >= 1
                 for i, ss, pp, dd, kk, oo in zip(size, s, pad, d, k, op))
        if not ok:
            pad = (0,) * nsp
        w_shape = (c_in, a) + k
        kw = dict(stride=s, padding=pad, output_padding=op, groups=groups, dilation=d)
        p = make_params((batch, c_in) + size, w_shape, (c_out,), s, pad, d, True, op, groups, "t")
    else:
        same = bool(rng.integers(0, 4) == 0)
        if same:
            s = (1,) * nsp
            tot = [dd * (kk - 1) for dd, kk in zip(d, k)]
            pb = tuple(t // 2 for t in tot)
            pa = tuple(t - t // 2 for t in tot)
            padding = "same"
        else:
            pb = pa = tuple(int(rng.integers(0, 3)) for _ in range(nsp))
            padding = pb
        size = tuple(max(1, dd * (kk - 1) + 1 - b - e) + int(rng.integers(0, 6 - nsp))
                     for kk, dd, b, e in zip(k, d, pb, pa))
        c_in, c_out = groups * a, groups * m
        w_shape = (c_out, a) + k
        kw = dict(stride=s, pad_before=pb, pad_after=pa, dilation=d, groups=groups)
        p = make_params((batch, c_in) + size, w_shape, (c_out,), s, padding, d, False, 0, groups, "t")
    return p, kw


def run_case(K, mod, p, kw, dtype, rng, what=""):
    dtype = np.dtype(dtype)
    p = p.with_dtype(dtype)
    x = rng.standard_normal(p.input_shape).astype(dtype)
    w = rng.standard_normal(p.weight_shape).astype(dtype)
    b = rng.standard_normal((p.c_out,)).astype(dtype)
    gy = rng.standard_normal(p.output_shape).astype(dtype)
    if p.transposed:
        ref_y = ref_conv_transpose(x, w, b, **kw)
        ref_gx = ref_conv_transpose_grad_input(gy, w, x.shape, **kw)
        ref_gw = ref_conv_transpose_grad_weight(x, gy, w.shape, **kw)
        red = reduction_length(p.c_in, p.groups, p.kernel)
    else:
        ref_y = ref_conv(x, w, b, **kw)
        ref_gx = ref_conv_grad_input(gy, w, x.shape, **kw)
        ref_gw = ref_conv_grad_weight(x, gy, w.shape, **kw)
        red = reduction_length(p.c_in, p.groups, p.kernel)
    wred = p.batch * math.prod(p.out_size if not p.transposed else p.in_size)

    y = np.full(p.output_shape, np.nan, dtype=dtype)
    mod.forward_with(np, K, p, x, w, b, y)
    _close(y, ref_y, dtype, red, f"{what} forward")
    y2 = np.full(p.output_shape, np.nan, dtype=dtype)
    mod.forward_with(np, K, p, x, w, None, y2)
    _close(y2, ref_y - b.reshape((1, -1) + (1,) * p.nsp), dtype, red, f"{what} forward without bias")
    gx = np.full(p.input_shape, np.nan, dtype=dtype)
    mod.grad_input_with(np, K, p, gy, w, gx)
    _close(gx, ref_gx, dtype, red, f"{what} grad_input")
    gw = np.full(p.weight_shape, np.nan, dtype=dtype)
    mod.grad_weight_with(np, K, p, x, gy, gw)
    _close(gw, ref_gw, dtype, wred, f"{what} grad_weight")
    return y, gx, gw


def _close(a, ref, dtype, red, what):
    tol = tolerance(dtype, red)
    err = rel_err(a, ref)
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.0e}"


def _backend_for(p):
    if p.is_depthwise:
        return [Backend.CUDA_DEPTHWISE, Backend.CUDA_GEMM_TRANSPOSE if p.transposed else Backend.CUDA_GEMM]
    return [Backend.CUDA_GEMM_TRANSPOSE if p.transposed else Backend.CUDA_GEMM]


# --------------------------------------------------------------------------
# the differential tests
# --------------------------------------------------------------------------
WS = {"default": None, "batch_tiles": 4096, "column_tiles": 1024}


@pytest.mark.parametrize("ws", list(WS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True], ids=["plain", "transposed"])
@pytest.mark.parametrize("seed", range(8))
def test_gemm_backends(harness, workspace, seed, transposed, dtype, ws):
    rng = np.random.default_rng(1000 * transposed + seed)
    p, kw = random_case(rng, transposed, depthwise=False)
    if WS[ws] is not None:
        workspace(WS[ws])
    b = Backend.CUDA_GEMM_TRANSPOSE if transposed else Backend.CUDA_GEMM
    run_case(harness.kernels(block=16, grid_cap=8), BACKENDS[b], p, kw, dtype, rng, f"{b.name}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True], ids=["plain", "transposed"])
@pytest.mark.parametrize("seed", range(6))
def test_depthwise_backends(harness, workspace, seed, transposed, dtype):
    rng = np.random.default_rng(2000 + 1000 * transposed + seed)
    p, kw = random_case(rng, transposed, depthwise=True)
    assert p.is_depthwise
    workspace(2048)  # the GEMM run of the same problem in tiles
    for b in _backend_for(p):
        run_case(harness.kernels(block=8, grid_cap=4), BACKENDS[b], p, kw, dtype, rng, b.name)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_direct_1x1_path(harness, workspace, nsp):
    """1x1, stride 1, no padding: the GEMM reads the image as its columns."""
    rng = np.random.default_rng(nsp)
    size = (5, 4, 3)[:nsp]
    for groups, ws in itertools.product((1, 2), (None, 1024)):
        p = make_params((3, 4) + size, (6, 4 // groups) + (1,) * nsp, (6,), 1, 0, 1, False, 0, groups, "t")
        kw = dict(stride=1, pad_before=0, dilation=1, groups=groups)
        _cuda_kernels.set_workspace_bytes(ws or 64 << 20)
        run_case(harness.kernels(), cuda_gemm, p, kw, np.float64, rng, f"1x1 g={groups} ws={ws}")
        pt = make_params((3, 6) + size, (6, 4 // groups) + (1,) * nsp, (4,), 1, 0, 1, True, 0, groups, "t")
        kwt = dict(stride=1, padding=0, output_padding=0, groups=groups, dilation=1)
        run_case(harness.kernels(), cuda_gemm_transpose, pt, kwt, np.float64, rng, f"1x1T g={groups} ws={ws}")


def test_tiny_workspace_tiles_columns(harness, workspace):
    """A workspace smaller than one image's columns: np < P, col2im accumulates
    over image ranges; results equal the untiled ones to rounding."""
    rng = np.random.default_rng(7)
    p = make_params((2, 3, 9, 11), (4, 3, 3, 2), (4,), (2, 1), (1, 2), (1, 2), False, 0, 1, "t")
    kw = dict(stride=(2, 1), pad_before=(1, 2), dilation=(1, 2), groups=1)
    per_col = p.c_in * math.prod(p.kernel) + p.c_out
    P = math.prod(p.out_size)
    workspace(1024)
    nb, npc = cuda_gemm.plan_tiles(p.batch, P, per_col, 1024 // 8)
    assert nb == 1 and npc < P
    harness.calls.clear()
    run_case(harness.kernels(), cuda_gemm, p, kw, np.float64, rng, "column tiles")
    names = {n for n, _ in harness.calls}
    assert "cc_col2im_f64" in names and "cc_im2col_f64" in names
    pt = make_params((2, 4) + p.out_size, (4, 3, 3, 2), (3,), (2, 1), (1, 2), (1, 2), True, 0, 1, "t")
    kwt = dict(stride=(2, 1), padding=(1, 2), output_padding=0, groups=1, dilation=(1, 2))
    run_case(harness.kernels(), cuda_gemm_transpose, pt, kwt, np.float64, rng, "column tiles T")


@pytest.mark.parametrize("seed", range(30))
def test_image_range_covers_every_touched_element(seed):
    rng = np.random.default_rng(seed)
    p, _ = random_case(rng, False, False)
    geom = p.geom()
    _, _, _, _, i3, o3, k3, s3, pd3, d3 = geom
    P = math.prod(o3)
    p0 = int(rng.integers(0, P))
    npc = int(rng.integers(1, P - p0 + 1))
    q0, nq = cuda_gemm.image_range(geom, p0, npc)
    touched = set()
    for pp in range(p0, p0 + npc):
        o = (pp // (o3[1] * o3[2]), (pp // o3[2]) % o3[1], pp % o3[2])
        for t in itertools.product(*[range(k) for k in k3]):
            i = [o[d] * s3[d] - pd3[d] + t[d] * d3[d] for d in range(3)]
            if all(0 <= i[d] < i3[d] for d in range(3)):
                touched.add((i[0] * i3[1] + i[1]) * i3[2] + i[2])
    if touched:
        assert q0 <= min(touched) and max(touched) < q0 + nq, (q0, nq, min(touched), max(touched))
    assert 0 <= q0 and q0 + nq <= math.prod(i3)


def test_plan_tiles():
    assert cuda_gemm.plan_tiles(8, 100, 10, 10_000) == (8, 100)
    assert cuda_gemm.plan_tiles(8, 100, 10, 3_000) == (3, 100)
    assert cuda_gemm.plan_tiles(8, 100, 10, 500) == (1, 50)
    assert cuda_gemm.plan_tiles(8, 100, 10**9, 10) == (1, 1)  # at least one column


@pytest.mark.parametrize("transposed", [False, True])
def test_results_do_not_depend_on_the_launch(harness, transposed):
    rng = np.random.default_rng(99)
    p, kw = random_case(rng, transposed, depthwise=True, nsp=2)
    outs = []
    for block, cap in ((256, None), (1, 1), (7, 3)):
        r = np.random.default_rng(5)
        outs.append(run_case(harness.kernels(block, cap), cuda_depthwise, p, kw, np.float32, r))
    for other in outs[1:]:
        for a, b in zip(outs[0], other):
            assert np.array_equal(a, b)


def test_zero_batch_launches_nothing(harness):
    p = make_params((0, 4, 5, 5), (6, 2, 3, 3), (6,), 1, 1, 1, False, 0, 2, "t").with_dtype(np.float64)
    K = harness.kernels()
    harness.calls.clear()
    x = np.empty(p.input_shape)
    w = np.ones(p.weight_shape)
    y = np.empty(p.output_shape)
    cuda_gemm.forward_with(np, K, p, x, w, np.ones(6), y)
    gx = np.empty(p.input_shape)
    cuda_gemm.grad_input_with(np, K, p, y, w, gx)
    gw = np.full(p.weight_shape, np.nan)
    cuda_gemm.grad_weight_with(np, K, p, x, y, gw)
    assert np.all(gw == 0)
    assert harness.calls == []


# --------------------------------------------------------------------------
# supports / dispatch (no arrays are touched)
# --------------------------------------------------------------------------
def _p(transposed=False, groups=1, c=4, batch=2):
    if transposed:
        return make_params((batch, c, 6, 6), (c, 8 // groups, 3, 3), None, 1, 1, 1, True, 0, groups, "t")
    return make_params((batch, c, 6, 6), (8, c // groups, 3, 3), None, 1, 1, 1, False, 0, groups, "t")


@pytest.mark.parametrize("b", list(BACKENDS))
def test_cuda_backends_refuse_numpy(b):
    why = BACKENDS[b].supports(Problem(_p(), np))
    assert why and "cupy.ndarray" in why
    with pytest.raises(TypeError, match="cupy.ndarray"):
        BACKENDS[b].forward(_p().with_dtype(np.float64), np.zeros((2, 4, 6, 6)), np.zeros((8, 4, 3, 3)),
                            None, np.zeros((2, 8, 6, 6)))


def _q(p, xp=None):
    return Problem(p, FAKE_CUPY if xp is None else xp)


def test_supports_with_cupy():
    assert cuda_gemm.supports(_q(_p())) is None
    assert "transposed" in cuda_gemm.supports(_q(_p(True)))
    assert cuda_gemm_transpose.supports(_q(_p(True))) is None
    assert "plain" in cuda_gemm_transpose.supports(_q(_p()))
    assert cuda_depthwise.supports(_q(_p(groups=4))) is None
    assert cuda_depthwise.supports(_q(_p(True, groups=8, c=8))) is None
    assert "depthwise" in cuda_depthwise.supports(_q(_p(groups=2)))


def test_dispatch_order_for_cupy():
    sel = lambda p: _dispatch.select(_q(p.with_dtype(np.float32)))[0]  # noqa: E731
    assert sel(_p()) is Backend.CUDA_GEMM
    assert sel(_p(True)) is Backend.CUDA_GEMM_TRANSPOSE
    assert sel(_p(groups=4)) is Backend.CUDA_DEPTHWISE
    assert sel(_p(True, groups=8, c=8)) is Backend.CUDA_DEPTHWISE
    assert sel(_p(batch=0)) is Backend.EMPTY
    # NumPy inputs never reach a CUDA backend
    for p in (_p(), _p(True), _p(groups=4), _p(True, groups=8, c=8)):
        assert not _dispatch.select(_q(p.with_dtype(np.float32), np))[0].name.startswith("CUDA")


@pytest.mark.parametrize("b", list(BACKENDS))
def test_forcing_a_cuda_backend_on_numpy_is_a_value_error(b):
    import cconv

    x = np.zeros((1, 4, 6, 6), np.float32)
    w = np.zeros((4, 1, 3, 3), np.float32)
    with pytest.raises(ValueError, match="cupy.ndarray"):
        cconv.conv2d(x, w, groups=4, backend=b)
    with pytest.raises(ValueError, match="cupy.ndarray"):
        cconv.conv2d(x, w, groups=4, backend=b.value)
