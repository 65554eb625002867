"""The CUDA path on a GPU: the whole API on cupy.ndarray inputs against the
CPU path (NumPy) and the float64 reference.

Every test here needs CuPy and a CUDA device and is skipped, with the
reason, where ``cconv.cuda._cupy.has_cupy()`` is False.  (Without a GPU the
kernels are checked by tests/test_cuda_sources.py and the backends by
tests/test_cuda_emulated.py.)

Covered: conv1d/2d/3d, conv_transpose1d/2d/3d and convolution, with each
CUDA backend forced and with the default choice; convolution_backward,
convolution_double_backward and cconv.grad; float32, float64, float16
and complex64/complex128; out=, strided views, bit-identical repeats,
tiled workspaces, mixed array types and dispatch.
"""
from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest

import cconv
import cconv.grad
from cconv import Backend
from cconv.cuda import _cupy as _cuda, kernels as _cuda_kernels
from reference import (
    rel_err,
    reduction_length,
    ref_conv,
    ref_conv_grad_bias,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_transpose,
    ref_conv_transpose_grad_input,
    ref_conv_transpose_grad_weight,
    same_padding,
    tolerance,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _cuda.has_cupy(), reason=f"CUDA path unavailable: {_cuda._load()[1]}"),
]

cp = _cuda.cupy_or_none()
# tests/test_cuda_shim.py runs this file on a NumPy-backed stand-in for CuPy
SHIM = bool(getattr(cp, "__cconv_test_shim__", False))

DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]
CUDA_BACKENDS = [Backend.CUDA_GEMM, Backend.CUDA_GEMM_TRANSPOSE, Backend.CUDA_DEPTHWISE]
CONV = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
CONVT = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d, 3: cconv.conv_transpose3d}
GRAD_IN = {1: cconv.grad.conv1d_input, 2: cconv.grad.conv2d_input, 3: cconv.grad.conv3d_input}
GRAD_W = {1: cconv.grad.conv1d_weight, 2: cconv.grad.conv2d_weight, 3: cconv.grad.conv3d_weight}


# (name, nsp, transposed, N, C_in, C_out, size, kernel, stride, padding, dilation, groups, output_padding)
CASES = [
    ("1d_grouped_strided", 1, False, 2, 4, 6, (17,), (3,), 2, 1, 1, 2, 0),
    ("1d_depthwise_same", 1, False, 3, 4, 4, (9,), (3,), 1, "same", 2, 4, 0),
    ("2d_dense", 2, False, 2, 3, 8, (11, 9), (3, 3), 1, 1, 1, 1, 0),
    ("2d_grouped_mixed", 2, False, 2, 6, 12, (10, 12), (3, 2), (2, 1), (1, 0), (1, 2), 3, 0),
    ("2d_depthwise_mult2", 2, False, 2, 8, 16, (9, 9), (3, 3), 2, 1, 1, 8, 0),
    ("2d_1x1", 2, False, 2, 8, 8, (7, 7), (1, 1), 1, 0, 1, 1, 0),
    ("2d_same_even", 2, False, 1, 3, 5, (8, 7), (4, 2), 1, "same", (1, 2), 1, 0),
    ("3d_same", 3, False, 2, 4, 4, (5, 6, 7), (3, 3, 2), 1, "same", 1, 1, 0),
    ("3d_depthwise", 3, False, 1, 4, 8, (6, 5, 7), (2, 2, 2), 2, 1, (1, 2, 1), 4, 0),
    ("1d_T_grouped", 1, True, 2, 4, 6, (7,), (3,), 2, 1, 1, 2, 1),
    ("2d_T", 2, True, 2, 6, 4, (5, 6), (3, 3), 2, 1, 1, 2, (1, 0)),
    ("2d_T_depthwise", 2, True, 2, 8, 8, (6, 6), (3, 3), 1, 1, 1, 8, 0),
    ("2d_T_dilated", 2, True, 1, 3, 5, (4, 5), (2, 3), (1, 2), (0, 1), (2, 1), 1, (1, 1)),
    ("3d_T", 3, True, 1, 4, 4, (3, 4, 3), (2, 3, 2), (2, 1, 2), 0, 1, 1, (1, 0, 0)),
]
IDS = [c[0] for c in CASES]


class Case:
    def __init__(self, spec):
        (self.name, self.nsp, self.transposed, self.N, self.c_in, self.c_out, self.size, self.k,
         self.stride, self.padding, self.dilation, self.groups, self.output_padding) = spec
        g = self.groups
        if self.transposed:
            self.w_shape = (self.c_in, self.c_out // g) + self.k
        else:
            self.w_shape = (self.c_out, self.c_in // g) + self.k
        self.x_shape = (self.N, self.c_in) + self.size
        self.depthwise = g >= 2 and g == (self.c_out if self.transposed else self.c_in)

    def tup(self, v):
        return (v,) * self.nsp if isinstance(v, int) else tuple(v)

    def backends(self):
        out = [None, Backend.CUDA_GEMM_TRANSPOSE if self.transposed else Backend.CUDA_GEMM]
        if self.depthwise:
            out.append(Backend.CUDA_DEPTHWISE)
        return out

    def pads(self):
        if self.padding == "same":
            return same_padding(self.k, self.tup(self.dilation))
        p = self.tup(self.padding)
        return p, p

    # ---- reference (float64 / complex128) --------------------------------
    def ref_forward(self, x, w, b):
        if self.transposed:
            return ref_conv_transpose(x, w, b, self.stride, self.padding, self.output_padding, self.groups,
                                      self.dilation)
        pb, pa = self.pads()
        return ref_conv(x, w, b, self.stride, pb, pa, self.dilation, self.groups)

    def ref_backward(self, gy, x, w):
        if self.transposed:
            args = (self.stride, self.padding, self.output_padding, self.groups, self.dilation)
            return (ref_conv_transpose_grad_input(gy, w, x.shape, *args),
                    ref_conv_transpose_grad_weight(x, gy, w.shape, *args), ref_conv_grad_bias(gy))
        pb, pa = self.pads()
        args = (self.stride, pb, pa, self.dilation, self.groups)
        return (ref_conv_grad_input(gy, w, x.shape, *args), ref_conv_grad_weight(x, gy, w.shape, *args),
                ref_conv_grad_bias(gy))

    def red(self):
        """Length of the dot products behind one output element (at most)."""
        return reduction_length(self.c_in, self.groups, self.k)

    # ---- calls -------------------------------------------------------------
    def forward(self, x, w, b, backend=None, out=None, via_convolution=False):
        if via_convolution:
            return cconv.convolution(x, w, b, self.stride, self.padding, self.dilation, self.transposed,
                                     self.output_padding, self.groups, out=out, backend=backend)
        if self.transposed:
            return CONVT[self.nsp](x, w, b, self.stride, self.padding, self.output_padding, self.groups,
                                   self.dilation, out=out, backend=backend)
        return CONV[self.nsp](x, w, b, self.stride, self.padding, self.dilation, self.groups, out=out,
                              backend=backend)

    def backward(self, gy, x, w, backend=None):
        return cconv.convolution_backward(gy, x, w, [self.c_out], self.stride, self.padding, self.dilation,
                                          self.transposed, self.output_padding, self.groups,
                                          (True, True, True), backend=backend)

    def double_backward(self, ggI, ggW, ggb, gO, w, x, backend=None):
        return cconv.convolution_double_backward(ggI, ggW, ggb, gO, w, x, self.stride, self.padding,
                                                 self.dilation, self.transposed, self.output_padding,
                                                 self.groups, (True, True, True), backend=backend)


def seed(*parts) -> int:
    return zlib.crc32(repr([str(p) for p in parts]).encode())


def randn(rng, shape, dtype):
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def gpu(a):
    return None if a is None else cp.asarray(a)


def host(a):
    return None if a is None else cp.asnumpy(a)


def assert_gpu_array(a, dtype, shape):
    assert isinstance(a, cp.ndarray), type(a)
    assert a.dtype == np.dtype(dtype), (a.dtype, dtype)
    assert tuple(a.shape) == tuple(shape), (a.shape, shape)


def assert_close(got, ref, dtype, red, what):
    tol = tolerance(dtype, red)
    err = rel_err(got, ref)
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.0e} (dtype {np.dtype(dtype)})"


def assert_matches_cpu(got_gpu, cpu, ref, dtype, red, what):
    """The device result is within tolerance of the float64 reference and
    of the CPU path's result."""
    g = host(got_gpu)
    assert_close(g, ref, dtype, red, f"{what} vs reference")
    tol = 2 * tolerance(dtype, red)
    err = rel_err(g, cpu)
    assert err <= tol, f"{what}: relative difference to the CPU path {err:.3e} > {tol:.0e}"


def _case_params():
    for spec in CASES:
        c = Case(spec)
        for b in c.backends():
            yield pytest.param(spec, b, id=f"{c.name}-{'default' if b is None else b.value}")


# --------------------------------------------------------------------------
# setup
# --------------------------------------------------------------------------
def test_every_kernel_compiles_and_loads():
    for base in _cuda_kernels.KERNEL_BASENAMES:
        for sfx in ("f32", "f64"):
            assert _cuda_kernels._function(cp, f"{base}_{sfx}") is not None


def test_show_config_reports_cuda(capsys):
    assert "available" in _cuda.describe() and "unavailable" not in _cuda.describe()
    cconv.show_config()
    assert "CuPy" in capsys.readouterr().out


# --------------------------------------------------------------------------
# forward
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec,backend", list(_case_params()))
def test_forward(spec, backend, dtype):
    c = Case(spec)
    rng = np.random.default_rng(seed(c.name, "fw", dtype))
    x = randn(rng, c.x_shape, dtype)
    w = randn(rng, c.w_shape, dtype)
    b = randn(rng, (c.c_out,), dtype)
    ref = c.ref_forward(x, w, b)
    cpu = c.forward(x, w, b)
    y = c.forward(gpu(x), gpu(w), gpu(b), backend=backend)
    assert_gpu_array(y, dtype, ref.shape)
    assert_matches_cpu(y, cpu, ref, dtype, c.red(), f"{c.name} {backend}")
    # bit-identical from call to call
    y2 = c.forward(gpu(x), gpu(w), gpu(b), backend=backend)
    assert bool((y2 == y).all())
    # without bias
    y0 = c.forward(gpu(x), gpu(w), None, backend=backend)
    assert_close(host(y0), c.ref_forward(x, w, None), dtype, c.red(), f"{c.name} no bias")
    # out=
    out = cp.empty(ref.shape, dtype=dtype)
    r = c.forward(gpu(x), gpu(w), gpu(b), backend=backend, out=out)
    assert r is out and bool((out == y).all())
    # torch.convolution's entry point (integer padding only)
    if c.padding != "same":
        yc = c.forward(gpu(x), gpu(w), gpu(b), backend=backend, via_convolution=True)
        assert bool((yc == y).all())


@pytest.mark.parametrize("spec", CASES, ids=IDS)
def test_forward_unbatched_and_views(spec):
    c = Case(spec)
    rng = np.random.default_rng(3)
    dt = np.float64
    x = randn(rng, c.x_shape, dt)
    w = randn(rng, c.w_shape, dt)
    # unbatched
    y = c.forward(gpu(x[0]), gpu(w), None)
    assert_gpu_array(y, dt, c.ref_forward(x[:1], w, None).shape[1:])
    assert_close(host(y), c.ref_forward(x[:1], w, None)[0], dt, c.red(), "unbatched")
    # non-contiguous device arrays: a reversed spatial axis, a Fortran-order weight
    xr = gpu(x)[..., ::-1]
    wf = cp.asfortranarray(gpu(w))
    y = c.forward(xr, wf, None)
    assert_close(host(y), c.ref_forward(x[..., ::-1], w, None), dt, c.red(), "views")


@pytest.mark.parametrize("spec", CASES, ids=IDS)
def test_select_backend_on_cupy(spec):
    c = Case(spec)
    x = cp.zeros(c.x_shape, np.float32)
    w = cp.zeros(c.w_shape, np.float32)
    want = (Backend.CUDA_DEPTHWISE if c.depthwise else
            Backend.CUDA_GEMM_TRANSPOSE if c.transposed else Backend.CUDA_GEMM)
    got = cconv.select_backend(x, w, None, c.stride, c.padding, c.dilation, c.transposed,
                               c.output_padding, c.groups)
    assert got is want
    # CPU backends refuse device arrays, with the reason
    cpu_b = Backend.GEMM_TRANSPOSE if c.transposed else Backend.GEMM
    with pytest.raises(ValueError, match="NumPy"):
        c.forward(x, w, None, backend=cpu_b)
    # and a CUDA backend that does not fit says why
    wrong = Backend.CUDA_GEMM if c.transposed else Backend.CUDA_GEMM_TRANSPOSE
    with pytest.raises(ValueError, match=wrong.value):
        c.forward(x, w, None, backend=wrong)


# --------------------------------------------------------------------------
# backward, double backward, cconv.grad
# --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("spec,backend", list(_case_params()))
def test_convolution_backward(spec, backend, dtype):
    c = Case(spec)
    rng = np.random.default_rng(seed(c.name, "bw", dtype))
    x = randn(rng, c.x_shape, dtype)
    w = randn(rng, c.w_shape, dtype)
    gy = randn(rng, c.ref_forward(x, w, None).shape, dtype)
    refs = c.ref_backward(gy, x, w)
    cpus = c.backward(gy, x, w)
    gots = c.backward(gpu(gy), gpu(x), gpu(w), backend=backend)
    wred = c.N * math.prod(gy.shape[2:] if not c.transposed else x.shape[2:])
    for name, got, cpu_r, ref, red, shape in zip(
            ("grad_input", "grad_weight", "grad_bias"), gots, cpus, refs,
            (c.red(), wred, c.N * math.prod(gy.shape[2:])), (x.shape, w.shape, (c.c_out,))):
        assert_gpu_array(got, dtype, shape)
        assert_matches_cpu(got, cpu_r, ref, dtype, red, f"{c.name} {backend} {name}")
    again = c.backward(gpu(gy), gpu(x), gpu(w), backend=backend)
    for a, b in zip(gots, again):
        assert bool((a == b).all()), "backward is not bit-identical from call to call"
    # masks
    gi, gw, gb = cconv.convolution_backward(gpu(gy), gpu(x), gpu(w), None, c.stride, c.padding, c.dilation,
                                            c.transposed, c.output_padding, c.groups, (False, True, False),
                                            backend=backend)
    assert gi is None and gb is None and bool((gw == gots[1]).all())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("spec,backend", list(_case_params()))
def test_convolution_double_backward(spec, backend, dtype):
    c = Case(spec)
    rng = np.random.default_rng(seed(c.name, "dbw", dtype))
    x = randn(rng, c.x_shape, dtype)
    w = randn(rng, c.w_shape, dtype)
    gO = randn(rng, c.ref_forward(x, w, None).shape, dtype)
    ggI = randn(rng, x.shape, dtype)
    ggW = randn(rng, w.shape, dtype)
    ggb = randn(rng, (c.c_out,), dtype)
    cpus = c.double_backward(ggI, ggW, ggb, gO, w, x)
    gots = c.double_backward(gpu(ggI), gpu(ggW), gpu(ggb), gpu(gO), gpu(w), gpu(x), backend=backend)
    # ggO = conv(ggI, w) + conv(x, ggW) + ggb; gI = grad_input(gO, ggW); gW = grad_weight(ggI, gO)
    ref_ggO = c.ref_forward(ggI, w, ggb) + c.ref_forward(x, ggW, None)
    ref_gI = c.ref_backward(gO, x, ggW)[0]
    ref_gW = c.ref_backward(gO, ggI, w)[1]
    wred = c.N * math.prod(gO.shape[2:] if not c.transposed else x.shape[2:])
    for name, got, cpu_r, ref, red in zip(("ggO", "gI", "gW"), gots, cpus, (ref_ggO, ref_gI, ref_gW),
                                          (2 * c.red(), c.red(), wred)):
        assert_gpu_array(got, dtype, ref.shape)
        assert_matches_cpu(got, cpu_r, ref, dtype, red, f"{c.name} {backend} {name}")
    # any of ggI, ggW, ggb may be None
    ggO, gI, gW = c.double_backward(None, gpu(ggW), None, gpu(gO), gpu(w), gpu(x), backend=backend)
    assert gW is None and gI is not None
    assert_close(host(ggO), c.ref_forward(x, ggW, None), dtype, c.red(), "ggO from ggW only")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64])
@pytest.mark.parametrize("spec", [s for s in CASES if not s[2]], ids=[s[0] for s in CASES if not s[2]])
def test_grad_helpers(spec, dtype):
    c = Case(spec)
    rng = np.random.default_rng(11)
    x = randn(rng, c.x_shape, dtype)
    w = randn(rng, c.w_shape, dtype)
    gy = randn(rng, c.ref_forward(x, w, None).shape, dtype)
    ref_gi, ref_gw, _ = c.ref_backward(gy, x, w)
    gi = GRAD_IN[c.nsp](c.x_shape, gpu(w), gpu(gy), c.stride, c.padding, c.dilation, c.groups)
    gw = GRAD_W[c.nsp](gpu(x), c.w_shape, gpu(gy), c.stride, c.padding, c.dilation, c.groups)
    cpu_gi = GRAD_IN[c.nsp](c.x_shape, w, gy, c.stride, c.padding, c.dilation, c.groups)
    cpu_gw = GRAD_W[c.nsp](x, c.w_shape, gy, c.stride, c.padding, c.dilation, c.groups)
    assert_gpu_array(gi, dtype, c.x_shape)
    assert_gpu_array(gw, dtype, c.w_shape)
    assert_matches_cpu(gi, cpu_gi, ref_gi, dtype, c.red(), f"{c.name} grad input")
    assert_matches_cpu(gw, cpu_gw, ref_gw, dtype, c.N * math.prod(gy.shape[2:]), f"{c.name} grad weight")


# --------------------------------------------------------------------------
# tiling, reductions, larger problems
# --------------------------------------------------------------------------
@pytest.fixture
def small_workspace():
    old = _cuda_kernels.workspace_bytes()
    _cuda_kernels.set_workspace_bytes(16 * 1024)
    yield
    _cuda_kernels.set_workspace_bytes(old)


@pytest.mark.parametrize("spec", [s for s in CASES if not s[0].endswith("depthwise")],
                         ids=[s[0] for s in CASES if not s[0].endswith("depthwise")])
def test_tiled_workspace(spec, small_workspace):
    """A 16 KiB workspace: batch and column tiles, accumulating col2im."""
    c = Case(spec)
    rng = np.random.default_rng(5)
    dt = np.float64
    x = randn(rng, c.x_shape, dt)
    w = randn(rng, c.w_shape, dt)
    b = randn(rng, (c.c_out,), dt)
    backend = Backend.CUDA_GEMM_TRANSPOSE if c.transposed else Backend.CUDA_GEMM
    y = c.forward(gpu(x), gpu(w), gpu(b), backend=backend)
    assert_close(host(y), c.ref_forward(x, w, b), dt, c.red(), "tiled forward")
    gy = randn(rng, tuple(y.shape), dt)
    gots = c.backward(gpu(gy), gpu(x), gpu(w), backend=backend)
    for got, ref in zip(gots, c.ref_backward(gy, x, w)):
        assert_close(host(got), ref, dt, 10_000, "tiled backward")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 5), (4, 7, 1000), (1, 300, 17, 3)])
def test_bias_grad_helper(dtype, shape):
    rng = np.random.default_rng(1)
    g = randn(rng, shape, dtype)
    gb = _cuda_kernels.bias_grad(gpu(g))
    assert_gpu_array(gb, dtype, (shape[1],))
    assert_close(host(gb), ref_conv_grad_bias(g), dtype, 0, "bias_grad")
    assert bool((gb == _cuda_kernels.bias_grad(gpu(g))).all())


def _random_specs(n, seed_):
    """n random layers in CASES' format: 1-3 spatial dims, plain or
    transposed, grouped or depthwise, strides, dilations, integer or 'same'
    padding, output padding; every one with a non-empty output."""
    rng = np.random.default_rng(seed_)
    out = []
    while len(out) < n:
        nsp = int(rng.integers(1, 4))
        transposed = bool(rng.random() < 0.35)
        depthwise = bool(rng.random() < 0.25)
        g = int(rng.integers(2, 6)) if depthwise else int(rng.choice([1, 1, 2, 3]))
        per_in = 1 if depthwise and not transposed else int(rng.integers(1, 4))
        per_out = 1 if depthwise and transposed else int(rng.integers(1, 4))
        c_in, c_out = g * per_in, g * per_out
        hi = 12 if nsp < 3 else 7
        size = tuple(int(rng.integers(2, hi)) for _ in range(nsp))
        k = tuple(int(rng.integers(1, 4)) for _ in range(nsp))
        stride = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
        dil = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
        if not transposed and all(s == 1 for s in stride) and rng.random() < 0.3:
            padding = "same"
            pads = [d * (kk - 1) // 2 for d, kk in zip(dil, k)]
        else:
            padding = tuple(int(rng.integers(0, d * (kk - 1) // 2 + 2)) for d, kk in zip(dil, k))
            pads = list(padding)
        op = tuple(int(rng.integers(0, max(s, d))) for s, d in zip(stride, dil)) if transposed else 0
        if transposed:
            osz = [(i - 1) * s - 2 * p + d * (kk - 1) + o + 1
                   for i, s, p, d, kk, o in zip(size, stride, pads, dil, k, op)]
        elif padding == "same":
            osz = list(size)
        else:
            osz = [(i + 2 * p - d * (kk - 1) - 1) // s + 1 for i, p, d, kk, s in zip(size, pads, dil, k, stride)]
        if min(osz) < 1:
            continue
        N = int(rng.integers(1, 4))
        out.append((f"random{len(out)}_{nsp}d{'T' if transposed else ''}", nsp, transposed, N, c_in, c_out,
                    size, k, stride, padding, dil, g, op))
    return out


RANDOM = _random_specs(30, 20261204)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spec", RANDOM, ids=[s[0] for s in RANDOM])
def test_random_layers(spec, dtype):
    """Random layers, forward and backward, every CUDA backend that takes
    them, against the float64 reference and the CPU path."""
    c = Case(spec)
    rng = np.random.default_rng(seed(c.name, dtype))
    x = randn(rng, c.x_shape, dtype)
    w = randn(rng, c.w_shape, dtype)
    b = randn(rng, (c.c_out,), dtype)
    ref = c.ref_forward(x, w, b)
    gy = randn(rng, ref.shape, dtype)
    refs = c.ref_backward(gy, x, w)
    cpu = c.forward(x, w, b)
    cpus = c.backward(gy, x, w)
    wred = c.N * math.prod(gy.shape[2:] if not c.transposed else x.shape[2:])
    for backend in c.backends():
        y = c.forward(gpu(x), gpu(w), gpu(b), backend=backend)
        assert_gpu_array(y, dtype, ref.shape)
        assert_matches_cpu(y, cpu, ref, dtype, c.red(), f"{spec} {backend} forward")
        gots = c.backward(gpu(gy), gpu(x), gpu(w), backend=backend)
        for name, got, cpu_r, r, red in zip(("grad_input", "grad_weight", "grad_bias"), gots, cpus, refs,
                                            (c.red(), wred, c.N * math.prod(gy.shape[2:]))):
            assert_gpu_array(got, dtype, r.shape)
            assert_matches_cpu(got, cpu_r, r, dtype, red, f"{spec} {backend} {name}")


@pytest.mark.parametrize("layer", [
    # (N, C_in, C_out, H, k, stride, groups): ResNet/MobileNet-like layers, float32
    (8, 64, 64, 56, 3, 1, 1),
    (8, 256, 512, 28, 1, 2, 1),
    (8, 128, 128, 28, 3, 1, 128),
    (4, 3, 64, 224, 7, 2, 1),
], ids=["resnet_3x3", "resnet_1x1_s2", "mobilenet_dw", "resnet_stem"])
@pytest.mark.skipif(SHIM, reason="too large for the CPU stand-in of tests/test_cuda_shim.py")
def test_larger_layers(layer):
    N, ci, co, H, k, s, g = layer
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, ci, H, H)).astype(np.float32)
    w = rng.standard_normal((co, ci // g, k, k)).astype(np.float32)
    pad = k // 2
    cpu = cconv.conv2d(x, w, None, s, pad, 1, g)
    y = cconv.conv2d(gpu(x), gpu(w), None, s, pad, 1, g)
    red = reduction_length(ci, g, (k, k))
    assert rel_err(host(y), cpu) <= 2 * tolerance(np.float32, red)
    gy = rng.standard_normal(cpu.shape).astype(np.float32)
    cpu_b = cconv.convolution_backward(gy, x, w, None, s, pad, 1, False, 0, g, (True, True, True))
    gpu_b = cconv.convolution_backward(gpu(gy), gpu(x), gpu(w), None, s, pad, 1, False, 0, g,
                                       (True, True, True))
    for a, b_ in zip(gpu_b, cpu_b):
        assert rel_err(host(a), b_) <= 2e-4


# --------------------------------------------------------------------------
# array types
# --------------------------------------------------------------------------
def test_mixed_array_types_are_a_type_error():
    x = np.zeros((1, 4, 6, 6), np.float32)
    w = np.zeros((2, 4, 3, 3), np.float32)
    with pytest.raises(TypeError, match="input.*weight|weight.*input"):
        cconv.conv2d(gpu(x), w)
    with pytest.raises(TypeError, match="bias"):
        cconv.conv2d(gpu(x), gpu(w), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="out"):
        cconv.conv2d(gpu(x), gpu(w), out=np.zeros((1, 2, 4, 4), np.float32))
    with pytest.raises(TypeError, match="grad_output"):
        cconv.convolution_backward(np.zeros((1, 2, 4, 4), np.float32), gpu(x), gpu(w), None, 1, 0, 1,
                                   False, 0, 1, (True, True, True))


def test_out_checks_on_device():
    x = cp.zeros((1, 4, 6, 6), np.float32)
    w = cp.zeros((2, 4, 3, 3), np.float32)
    with pytest.raises(ValueError, match="shape"):
        cconv.conv2d(x, w, out=cp.zeros((1, 2, 5, 4), np.float32))
    with pytest.raises(ValueError, match="dtype"):
        cconv.conv2d(x, w, out=cp.zeros((1, 2, 4, 4), np.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        cconv.conv2d(x, w, out=cp.zeros((1, 2, 4, 8), np.float32)[..., ::2])


def test_integer_and_mismatched_dtypes_on_device():
    with pytest.raises(TypeError):
        cconv.conv2d(cp.zeros((1, 4, 6, 6), np.int32), cp.zeros((2, 4, 3, 3), np.int32))
    with pytest.raises(TypeError):
        cconv.conv2d(cp.zeros((1, 4, 6, 6), np.float32), cp.zeros((2, 4, 3, 3), np.float64))


def test_zero_batch_on_device():
    y = cconv.conv2d(cp.zeros((0, 4, 6, 6), np.float32), cp.ones((2, 4, 3, 3), np.float32))
    assert_gpu_array(y, np.float32, (0, 2, 4, 4))
    for b in (Backend.CUDA_GEMM,):
        y = cconv.conv2d(cp.zeros((0, 4, 6, 6), np.float32), cp.ones((2, 4, 3, 3), np.float32), backend=b)
        assert tuple(y.shape) == (0, 2, 4, 4)


def test_all_backends_agree_bitwise_run_to_run():
    rng = np.random.default_rng(0)
    x = gpu(rng.standard_normal((4, 8, 20, 20)).astype(np.float32))
    w = gpu(rng.standard_normal((8, 1, 3, 3)).astype(np.float32))
    for b, _ in itertools.product((Backend.CUDA_DEPTHWISE, Backend.CUDA_GEMM), range(1)):
        y1 = cconv.conv2d(x, w, None, 1, 1, 1, 8, backend=b)
        y2 = cconv.conv2d(x, w, None, 1, 1, 1, 8, backend=b)
        assert bool((y1 == y2).all())
