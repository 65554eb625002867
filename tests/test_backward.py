"""cconv.convolution_backward against the independent float64 reference
(tests/reference.py), central finite differences and (when importable)
PyTorch: random shapes and parameters in every dtype, every output_mask,
every backend that runs a backward forced in turn, zero-size problems,
layouts, argument checks and call-to-call determinism."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pytest

import cconv
from cconv import Backend
from reference import (
    assert_close,
    fd_grad,
    nonfinite_mismatch,
    rel_err,
    ref_conv,
    ref_conv_grad_bias,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_transpose,
    ref_conv_transpose_grad_input,
    ref_conv_transpose_grad_weight,
    tolerance,
)

DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]
MASKS = list(itertools.product([False, True], repeat=3))


# ------------------------------------------------------------------ cases


def randn(rng, shape, dtype):
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@dataclass(frozen=True)
class Case:
    nsp: int
    transposed: bool
    batch: int
    c_in: int          # channels of the input array
    c_out: int         # channels of the result
    groups: int
    size: tuple
    kernel: tuple
    stride: tuple
    padding: object    # tuple of ints, or 'same' / 'valid'
    dilation: tuple
    output_padding: tuple

    def weight_shape(self):
        if self.transposed:
            return (self.c_in, self.c_out // self.groups) + self.kernel
        return (self.c_out, self.c_in // self.groups) + self.kernel

    def input_shape(self):
        return (self.batch, self.c_in) + self.size

    def pads(self):
        """(pad_before, pad_after) per dim."""
        if self.padding == "valid":
            z = (0,) * self.nsp
            return z, z
        if self.padding == "same":
            tot = [d * (k - 1) for d, k in zip(self.dilation, self.kernel)]
            return tuple(t // 2 for t in tot), tuple(t - t // 2 for t in tot)
        return self.padding, self.padding

    def out_size(self):
        pb, pa = self.pads()
        out = []
        for i in range(self.nsp):
            L, k, s, d = self.size[i], self.kernel[i], self.stride[i], self.dilation[i]
            if self.transposed:
                out.append((L - 1) * s - 2 * pb[i] + d * (k - 1) + self.output_padding[i] + 1)
            else:
                out.append((L + pb[i] + pa[i] - d * (k - 1) - 1) // s + 1)
        return tuple(out)

    def output_shape(self):
        return (self.batch, self.c_out) + self.out_size()

    def args(self):
        """stride, padding, dilation, transposed, output_padding, groups."""
        return (list(self.stride), self.padding if isinstance(self.padding, str) else list(self.padding),
                list(self.dilation), self.transposed, list(self.output_padding), self.groups)

    def red_len_input(self):
        k = math.prod(self.kernel)
        if self.transposed:
            return (self.c_out // self.groups) * k
        return (self.c_out // self.groups) * k

    def red_len_weight(self):
        if self.transposed:
            return self.batch * math.prod(self.size)
        return self.batch * math.prod(self.out_size())

    def red_len_bias(self):
        return self.batch * math.prod(self.out_size())


def random_case(rng, nsp=None, transposed=None, groups=None):
    nsp = int(rng.integers(1, 4)) if nsp is None else nsp
    transposed = bool(rng.random() < 0.4) if transposed is None else transposed
    groups = int(rng.choice([1, 1, 2, 3])) if groups is None else groups
    cin_g, cout_g = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    batch = int(rng.integers(1, 4))
    maxk = {1: 4, 2: 3, 3: 2}[nsp]
    maxl = {1: 12, 2: 7, 3: 5}[nsp]
    kernel = tuple(int(k) for k in rng.integers(1, maxk + 1, nsp))
    stride = tuple(int(s) for s in rng.integers(1, 4, nsp))
    dilation = tuple(int(d) for d in rng.integers(1, 3, nsp))
    padding = tuple(int(p) for p in rng.integers(0, 3, nsp))
    output_padding = (0,) * nsp
    if not transposed and rng.random() < 0.15:
        padding = "valid" if rng.random() < 0.4 else "same"
        if padding == "same":
            stride = (1,) * nsp
    size = []
    for i in range(nsp):
        dk = dilation[i] * (kernel[i] - 1) + 1
        if transposed:
            L = int(rng.integers(1, maxl // 2 + 2))
            size.append(L)
        else:
            pad = 0 if isinstance(padding, str) and padding == "valid" else (
                dk - 1 if isinstance(padding, str) else 2 * padding[i])
            lo = max(1, dk - pad)
            size.append(int(rng.integers(lo, max(lo, maxl) + 1)))
    if transposed:
        output_padding = tuple(int(rng.integers(0, max(s, d))) for s, d in zip(stride, dilation))
        # make every output dim >= 1 by growing the input
        for i in range(nsp):
            while (size[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + output_padding[i] + 1 < 1:
                size[i] += 1
    c_in, c_out = cin_g * groups, cout_g * groups
    return Case(nsp, transposed, batch, c_in, c_out, groups, tuple(size), kernel, stride, padding,
                dilation, output_padding)


def arrays(case, rng, dtype):
    x = randn(rng, case.input_shape(), dtype)
    w = randn(rng, case.weight_shape(), dtype)
    gy = randn(rng, case.output_shape(), dtype)
    return x, w, gy


def reference_grads(case, x, w, gy):
    """(grad_input, grad_weight, grad_bias) in float64/complex128."""
    x, w, gy = (np.asarray(a).astype(np.complex128 if np.iscomplexobj(a) else np.float64) for a in (x, w, gy))
    if case.transposed:
        kw = dict(stride=case.stride, padding=case.padding, output_padding=case.output_padding,
                  groups=case.groups, dilation=case.dilation)
        gi = ref_conv_transpose_grad_input(gy, w, x.shape, **kw)
        gw = ref_conv_transpose_grad_weight(x, gy, w.shape, **kw)
    else:
        pb, pa = case.pads()
        kw = dict(stride=case.stride, pad_before=pb, pad_after=pa, dilation=case.dilation, groups=case.groups)
        gi = ref_conv_grad_input(gy, w, x.shape, **kw)
        gw = ref_conv_grad_weight(x, gy, w.shape, **kw)
    return gi, gw, ref_conv_grad_bias(gy)


def reference_forward(case, x, w, b=None):
    if case.transposed:
        return ref_conv_transpose(x, w, b, case.stride, case.padding, case.output_padding, case.groups,
                                  case.dilation)
    pb, pa = case.pads()
    return ref_conv(x, w, b, case.stride, pb, pa, case.dilation, case.groups)


def backward(case, gy, x, w, mask=(True, True, True), backend=None, bias_sizes="auto"):
    if bias_sizes == "auto":
        bias_sizes = [case.c_out]
    return cconv.convolution_backward(gy, x, w, bias_sizes, *case.args(), list(mask), backend=backend)


def check_grads(case, got, ref, dtype, mask=(True, True, True), what=""):
    names = ("grad_input", "grad_weight", "grad_bias")
    shapes = (case.input_shape(), case.weight_shape(), (case.c_out,))
    reds = (case.red_len_input(), case.red_len_weight(), case.red_len_bias())
    errs = {}
    for name, g, r, m, shape, red in zip(names, got, ref, mask, shapes, reds):
        if not m:
            assert g is None, f"{what} {name} should be None when its mask is False"
            continue
        assert isinstance(g, np.ndarray), f"{what} {name}: {type(g)}"
        assert g.dtype == np.dtype(dtype), f"{what} {name}: dtype {g.dtype} != {np.dtype(dtype)}"
        assert g.shape == tuple(shape), f"{what} {name}: shape {g.shape} != {tuple(shape)}"
        err = rel_err(g, r)
        tol = tolerance(dtype, red)
        assert err <= tol, f"{what} {name}: relative error {err:.3e} > {tol:.0e} ({np.dtype(dtype)}, {case})"
        errs[name] = err
    return errs


# max relative error seen per dtype (printed by test_zz_report_max_errors with -s)
MAX_ERR: dict = {}


def _note(dtype, errs):
    d = np.dtype(dtype).name
    for k, v in errs.items():
        MAX_ERR[(d, k)] = max(MAX_ERR.get((d, k), 0.0), v)


def required_backends(case, dtype):
    """Backends that must run this backward, forced in turn: the default
    choice, EMPTY for an empty batch, and the GEMM backend of the problem."""
    out = [None]
    if case.batch == 0:
        out.append(Backend.EMPTY)
    out.append(Backend.GEMM_TRANSPOSE if case.transposed else Backend.GEMM)
    return out


# ------------------------------------------------------------------ random tests


@pytest.mark.parametrize("seed", range(300))
def test_random_against_reference(seed):
    rng = np.random.default_rng(1000 + seed)
    case = random_case(rng)
    dtype = DTYPES[seed % len(DTYPES)]
    x, w, gy = arrays(case, rng, dtype)
    ref = reference_grads(case, x, w, gy)
    for backend in required_backends(case, dtype):
        got = backward(case, gy, x, w, backend=backend)
        _note(dtype, check_grads(case, got, ref, dtype, what=f"backend={backend}"))


@pytest.mark.parametrize("seed", range(40))
def test_random_backend_string_values(seed):
    rng = np.random.default_rng(5000 + seed)
    case = random_case(rng)
    x, w, gy = arrays(case, rng, np.float64)
    ref = reference_grads(case, x, w, gy)
    b = Backend.GEMM_TRANSPOSE if case.transposed else Backend.GEMM
    check_grads(case, backward(case, gy, x, w, backend=b.value), ref, np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_every_output_mask(nsp, transposed, dtype):
    rng = np.random.default_rng(nsp * 10 + transposed)
    case = random_case(rng, nsp=nsp, transposed=transposed, groups=2)
    x, w, gy = arrays(case, rng, dtype)
    ref = reference_grads(case, x, w, gy)
    full = backward(case, gy, x, w)
    for mask in MASKS:
        got = backward(case, gy, x, w, mask)
        check_grads(case, got, ref, dtype, mask, what=f"mask={mask}")
        for g, f in zip(got, full):
            if g is not None:   # the same numbers whatever else is asked for
                np.testing.assert_array_equal(g, f)


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("mask", MASKS)
def test_only_masked_in_gradients_are_computed(monkeypatch, mask, dtype):
    import importlib

    from cconv import _kernels
    from cconv._dispatch import _MODULES

    # every backend's entry points, counted where the call enters a backend
    # (not again where one backend hands work to another)
    calls = []
    depth = [0]

    def spy(op, f):
        def g(*a, **k):
            if depth[0] == 0:
                calls.append(op)
            depth[0] += 1
            try:
                return f(*a, **k)
            finally:
                depth[0] -= 1
        return g

    for name in _MODULES.values():
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        for op in ("forward", "grad_input", "grad_weight"):
            monkeypatch.setattr(mod, op, spy(op, getattr(mod, op)))

    bias_calls = []
    real_bias = _kernels.bias_grad

    def spy_bias(*a):
        bias_calls.append(1)
        return real_bias(*a)

    monkeypatch.setattr(_kernels, "bias_grad", spy_bias)
    rng = np.random.default_rng(7)
    case = random_case(rng, nsp=2, transposed=False)
    x, w, gy = arrays(case, rng, dtype)
    got = backward(case, gy, x, w, mask)
    per = 3 if np.dtype(dtype).kind == "c" else 1
    assert calls.count("grad_input") == (per if mask[0] else 0)
    assert calls.count("grad_weight") == (per if mask[1] else 0)
    assert "forward" not in calls
    assert len(bias_calls) == ((2 if per == 3 else 1) if mask[2] else 0)
    assert [g is not None for g in got] == list(mask)


@pytest.mark.parametrize("transposed", [False, True])
def test_benchmark_mode(transposed):
    """With benchmark mode on, the gradients are tuned per op and stay right."""
    rng = np.random.default_rng(8)
    case = random_case(rng, nsp=2, transposed=transposed)
    x, w, gy = arrays(case, rng, np.float64)
    ref = reference_grads(case, x, w, gy)
    with cconv.benchmark():
        for _ in range(2):
            check_grads(case, backward(case, gy, x, w), ref, np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(6))
def test_fast_path_matches_generic_path(seed, dtype):
    """convolution_backward's fast path (real C-contiguous NumPy arrays,
    a mask of three bools) gives bit for bit what the array-generic
    backward_core gives, on random layers and every mask; the calls it
    does not take (a mask of NumPy bools, a strided input) still agree."""
    import cconv._backward as bw

    rng = np.random.default_rng(900 + seed)
    case = random_case(rng, transposed=bool(seed % 2))
    x, w, gy = arrays(case, rng, dtype)
    args = case.args()
    for mask in MASKS:
        taken = bw.fast_backward("convolution_backward", gy, x, x.shape, w, w.shape, [case.c_out],
                                 *args, list(mask))
        assert taken is not None or 0 in (x.size, w.size, gy.size)
        got = cconv.convolution_backward(gy, x, w, [case.c_out], *args, list(mask))
        want = bw.backward_core("convolution_backward", np, gy, x, x.shape, w, w.shape,
                                [case.c_out], *args, mask)
        for g, r in zip(got, want):
            assert (g is None) == (r is None)
            if g is not None:
                assert g.dtype == r.dtype and g.shape == r.shape
                assert np.array_equal(g, r), (case, mask)
    npmask = [np.bool_(True)] * 3
    assert bw.fast_backward("f", gy, x, x.shape, w, w.shape, None, *args, npmask) is None
    xs = np.repeat(x, 2, axis=-1)[..., ::2]
    assert bw.fast_backward("f", gy, xs, xs.shape, w, w.shape, None, *args, [True] * 3) is None
    for g, r in zip(cconv.convolution_backward(gy, xs, w, None, *args, npmask),
                    cconv.convolution_backward(gy, x, w, None, *args, [True] * 3)):
        assert np.array_equal(g, r)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_grad_helpers_fast_path(nsp, dtype, monkeypatch):
    """The torch.nn.grad helpers take the fast path on real contiguous
    arrays (a spy on backward_core sees no call) and give bit for bit what
    the generic path gives (convolution_backward with a NumPy-bool mask)."""
    import cconv._backward as bw
    import cconv.grad as gr

    rng = np.random.default_rng(40 + nsp)
    case = random_case(rng, nsp=nsp, transposed=False)
    if case.padding in ("same", "valid"):
        case.padding = (1,) * nsp
        case.size = tuple(max(s, 2 * k) for s, k in zip(case.size, case.kernel))
    x, w, gy = arrays(case, rng, dtype)
    stride, padding, dilation, _, _, groups = case.args()
    npmask = [np.bool_(True), np.bool_(True), np.bool_(False)]
    want = cconv.convolution_backward(gy, x, w, None, *case.args(), npmask)
    seen = []
    real = gr.backward_core
    monkeypatch.setattr(gr, "backward_core", lambda *a, **k: (seen.append(1), real(*a, **k))[1])
    gi = getattr(gr, f"conv{nsp}d_input")(x.shape, w, gy, stride, padding, dilation, groups)
    gw = getattr(gr, f"conv{nsp}d_weight")(x, w.shape, gy, stride, padding, dilation, groups)
    assert seen == [] or 0 in (x.size, w.size, gy.size)
    assert np.array_equal(gi, want[0]) and np.array_equal(gw, want[1]), case


def test_grad_bias_without_bias_sizes():
    rng = np.random.default_rng(3)
    for transposed in (False, True):
        case = random_case(rng, nsp=2, transposed=transposed)
        x, w, gy = arrays(case, rng, np.float64)
        gi, gw, gb = backward(case, gy, x, w, bias_sizes=None)
        np.testing.assert_allclose(gb, gy.sum(axis=(0, 2, 3)), rtol=1e-13)
        assert gb.shape == (case.c_out,)


@pytest.mark.parametrize("seed", range(20))
def test_larger_reductions(seed):
    """Long reductions (float32 bound 1e-4) on moderately sized problems."""
    rng = np.random.default_rng(9000 + seed)
    transposed = seed % 2 == 1
    nsp = 2
    g = int(rng.choice([1, 2]))
    case = Case(nsp, transposed, 3, 8 * g, 8 * g, g, (17, 19), (3, 3), (1 + seed % 2,) * 2, (1, 1),
                (1, 1), (0, 0))
    dtype = [np.float32, np.float64, np.float16, np.complex64][seed % 4]
    x, w, gy = arrays(case, rng, dtype)
    ref = reference_grads(case, x, w, gy)
    _note(dtype, check_grads(case, backward(case, gy, x, w), ref, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    # large enough that the GEMM kernels split images into several column
    # tiles and split channels into chunks (grad_input by GEMM + col2im)
    Case(2, False, 2, 32, 32, 1, (40, 40), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0)),
    Case(2, False, 3, 64, 48, 1, (30, 30), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0)),
    Case(2, False, 2, 32, 32, 2, (33, 35), (3, 3), (2, 2), (1, 1), (1, 1), (0, 0)),
    Case(2, True, 2, 32, 32, 1, (20, 20), (4, 4), (2, 2), (1, 1), (1, 1), (0, 0)),
    Case(1, False, 2, 48, 32, 1, (700,), (5,), (1,), (2,), (1,), (0,)),
    # grouped, 8 channels per group: grad_weight on the band (src/igemm),
    # plain and transposed (its plain twin's roles swapped)
    Case(2, False, 3, 64, 64, 8, (20, 21), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0)),
    Case(2, True, 2, 32, 48, 4, (12, 13), (3, 3), (2, 2), (1, 1), (1, 1), (1, 0)),
], ids=["3x3-40", "3x3-30-b3", "3x3-s2-g2", "tconv-4x4-s2", "1d-k5", "g8", "tconv-g4-s2"])
def test_realistic_sizes(case, dtype):
    rng = np.random.default_rng(123)
    x, w, gy = arrays(case, rng, dtype)
    ref = reference_grads(case, x, w, gy)
    for nt in (1, 2):
        old = cconv.get_num_threads()
        cconv.set_num_threads(nt)
        try:
            _note(dtype, check_grads(case, backward(case, gy, x, w), ref, dtype, what=f"{nt} threads"))
        finally:
            cconv.set_num_threads(old)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [5, 7, 8, 9, 13])
@pytest.mark.parametrize("transposed", [False, True])
def test_batched_gemm_image_blocks(batch, transposed, dtype):
    """Small images are batched several to a GEMM (src/gemm/gemm_plan.h, P * nb
    under 384 columns), in blocks of equal size: batches that do not divide
    evenly, every gradient, 1 and 2 threads, the GEMM backends forced."""
    rng = np.random.default_rng(700 + batch)
    if transposed:  # DCGAN-like: 8x8 -> 16x16, k4 s2 p1 (plain twin P = 64: 6 a block)
        case = Case(2, True, batch, 12, 10, 1, (8, 8), (4, 4), (2, 2), (1, 1), (1, 1), (0, 0))
    else:  # late-stage-like: 8x8, 3x3 p1 (P = 64), and a group split
        case = Case(2, False, batch, 12, 16, 2, (8, 8), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0))
    x, w, gy = arrays(case, rng, dtype)
    ref = reference_grads(case, x, w, gy)
    b = rng.standard_normal(case.c_out).astype(dtype)
    fwd_ref = reference_forward(case, x, w, b)
    backend = Backend.GEMM_TRANSPOSE if transposed else Backend.GEMM
    old = cconv.get_num_threads()
    try:
        for nt in (1, 2):
            cconv.set_num_threads(nt)
            y = cconv.convolution(x, w, b, *case.args(), backend=backend)
            err = rel_err(y, fwd_ref)
            red = (case.c_in // case.groups) * math.prod(case.kernel)
            assert err <= tolerance(dtype, red), f"forward, {nt} threads: relative error {err:.3e}"
            _note(dtype, check_grads(case, backward(case, gy, x, w, backend=backend), ref, dtype,
                                     what=f"{nt} threads"))
    finally:
        cconv.set_num_threads(old)


# ------------------------------------------------------------------ torch


@pytest.mark.parametrize("seed", range(60))
def test_against_torch_convolution_backward(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(20000 + seed)
    case = random_case(rng)
    if isinstance(case.padding, str):
        case = Case(**{**case.__dict__, "padding": (0,) * case.nsp})
        if any(o < 1 for o in case.out_size()):
            pytest.skip("padding string case without a torch equivalent")
    x, w, gy = arrays(case, rng, np.float64)
    t = torch.ops.aten.convolution_backward(
        torch.from_numpy(gy), torch.from_numpy(x), torch.from_numpy(w), [case.c_out], *case.args(),
        [True, True, True])
    got = backward(case, gy, x, w)
    for g, r in zip(got, t):
        assert rel_err(g, r.numpy()) <= 1e-12


@pytest.mark.parametrize("seed", range(30))
def test_complex_against_torch_autograd(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(30000 + seed)
    case = random_case(rng)
    dtype = np.complex128 if seed % 2 else np.complex64
    x, w, gy = arrays(case, rng, dtype)
    b = randn(rng, (case.c_out,), dtype)
    X, W, B = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    stride, padding, dilation, transposed, output_padding, groups = case.args()
    if transposed:
        Y = torch.nn.functional.conv_transpose1d if case.nsp == 1 else (
            torch.nn.functional.conv_transpose2d if case.nsp == 2 else torch.nn.functional.conv_transpose3d)
        Y = Y(X, W, B, stride, padding, output_padding, groups, dilation)
    else:
        f = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}
        Y = f[case.nsp](X, W, B, stride, padding, dilation, groups)
    ref = torch.autograd.grad(Y, (X, W, B), torch.tensor(gy))
    got = backward(case, gy, x, w)
    check_grads(case, got, [r.numpy() for r in ref], dtype)


# ------------------------------------------------------------------ finite differences


def _fd_case(rng, nsp, transposed):
    while True:
        c = random_case(rng, nsp=nsp, transposed=transposed)
        if math.prod(c.input_shape()) <= 60 and math.prod(c.weight_shape()) <= 40 \
                and math.prod(c.output_shape()) <= 80:
            return c


@pytest.fixture
def one_thread():
    """Finite differences make hundreds of tiny calls: one thread keeps
    them fast on a loaded machine (threads are covered elsewhere)."""
    old = cconv.get_num_threads()
    cconv.set_num_threads(1)
    yield
    cconv.set_num_threads(old)


def _loss(case, x, w, b, G):
    """Re <G, conv(x, w, b)> through cconv's forward (float64/complex128)."""
    if isinstance(case.padding, str):
        f = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}[case.nsp]
        y = f(x, w, b, case.stride, case.padding, case.dilation, case.groups)
    else:
        y = cconv.convolution(x, w, b, *case.args())
    return float(np.real(np.vdot(G, y)))


FD_RESULTS: dict = {}


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_finite_differences(seed, nsp, transposed, dtype, one_thread):
    rng = np.random.default_rng(40000 + 100 * seed + 10 * nsp + transposed)
    case = _fd_case(rng, nsp, transposed)
    x, w, G = arrays(case, rng, dtype)
    b = randn(rng, (case.c_out,), dtype)
    gi, gw, gb = backward(case, G, x, w)
    loss = lambda: _loss(case, x, w, b, G)  # noqa: E731
    for name, got, a in (("grad_input", gi, x), ("grad_weight", gw, w), ("grad_bias", gb, b)):
        fd = fd_grad(loss, a)
        err = rel_err(got, fd)
        key = (np.dtype(dtype).name, name)
        FD_RESULTS[key] = max(FD_RESULTS.get(key, 0.0), err)
        assert err < 1e-9, f"{name}: finite-difference relative error {err:.2e} ({case})"


# ------------------------------------------------------------------ backends


def _depthwise_case(rng, dtype):
    c = int(rng.integers(2, 6))
    mult = int(rng.integers(1, 3))
    k = tuple(int(v) for v in rng.integers(1, 4, 2))
    s = tuple(int(v) for v in rng.integers(1, 3, 2))
    d = tuple(int(v) for v in rng.integers(1, 3, 2))
    p = tuple(int(v) for v in rng.integers(0, 2, 2))
    size = tuple(max(dd * (kk - 1) + 1, int(rng.integers(3, 12))) for dd, kk in zip(d, k))
    return Case(2, False, int(rng.integers(1, 4)), c, c * mult, c, size, k, s, p, d, (0, 0))


def _depthwise_available():
    from cconv._dispatch import backend_module

    return backend_module(Backend.DEPTHWISE) is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64])
@pytest.mark.parametrize("seed", range(15))
def test_depthwise_backend_forced(seed, dtype):
    if not _depthwise_available():
        pytest.skip("DEPTHWISE is not in this build yet")
    rng = np.random.default_rng(50000 + seed)
    case = _depthwise_case(rng, dtype)
    x, w, gy = arrays(case, rng, dtype)
    ref = reference_grads(case, x, w, gy)
    for backend in (Backend.DEPTHWISE, "depthwise", None):
        _note(dtype, check_grads(case, backward(case, gy, x, w, backend=backend), ref, dtype,
                                 what=f"backend={backend}"))


def _wgrad_route_cases():
    """(Case, routed to GEMM's grad_weight) on both sides of the rule's
    bounds: 3-D output rows of 7/8/32/33 pixels (3x1x1: 56/57), 2-D stride 2
    of 9/10/20/21, 2-D stride 1, a transposed layer."""
    def c3(size, k, s=(1, 1, 1), p=(1, 1, 1)):
        return Case(3, False, 2, 3, 3, 3, size, k, s, p, (1, 1, 1), (0, 0, 0))

    def c2(size, s, t=False):
        return Case(2, t, 2, 3, 3, 3, size, (3, 3), s, (1, 1), (1, 1), (0, 0))

    return [
        (c3((3, 5, 7), (3, 3, 3)), False), (c3((3, 5, 8), (3, 3, 3)), True),
        (c3((2, 3, 32), (3, 3, 3)), True), (c3((2, 3, 33), (3, 3, 3)), False),
        (c3((3, 4, 56), (3, 1, 1), p=(1, 0, 0)), True), (c3((3, 4, 57), (3, 1, 1), p=(1, 0, 0)), False),
        (c3((3, 6, 20), (2, 3, 3), s=(1, 2, 2), p=(0, 1, 1)), True),
        (c2((5, 18), (2, 2)), False), (c2((5, 20), (2, 2)), True), (c2((5, 40), (2, 2)), True),
        (c2((5, 42), (2, 2)), False), (c2((5, 14), (1, 1)), False), (c2((5, 20), (2, 2), True), False),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_depthwise_wgrad_on_gemm_rule(dtype):
    """The default choice leaves the weight gradient of the layers of
    DEPTHWISE's measured rule to the GEMM methods (and only those): both
    sides of every bound; DEPTHWISE forced computes them all; each result
    against the float64 reference."""
    if not _depthwise_available():
        pytest.skip("DEPTHWISE is not in this build yet")
    rng = np.random.default_rng(77)
    for case, routed in _wgrad_route_cases():
        x, w, gy = arrays(case, rng, dtype)
        ref = reference_grads(case, x, w, gy)
        chosen = cconv.select_backend(x, w, None, case.stride, case.padding, case.dilation,
                                      case.transposed, case.output_padding, case.groups,
                                      op="grad_weight")
        assert (chosen is not Backend.DEPTHWISE) == routed, (case, routed, chosen)
        for be in (None, "depthwise"):
            got = backward(case, gy, x, w, backend=be)
            _note(dtype, check_grads(case, got, ref, dtype, what=f"routed={routed} backend={be}"))


def test_depthwise_selected_for_backward_when_available():
    if not _depthwise_available():
        pytest.skip("DEPTHWISE is not in this build yet")
    x = np.zeros((2, 8, 10, 10), np.float32)
    w = np.zeros((8, 1, 3, 3), np.float32)
    fwd = cconv.select_backend(x, w, None, 1, 1, 1, False, 0, 8, need_backward=True)
    assert fwd in (Backend.DEPTHWISE, Backend.DEPTHWISE_PLANE, Backend.DEPTHWISE_CHANNEL_BLOCKS)
    for op in ("grad_input", "grad_weight"):
        assert cconv.select_backend(x, w, None, 1, 1, 1, False, 0, 8, op=op) == Backend.DEPTHWISE


@pytest.mark.parametrize("transposed", [False, True])
def test_wrong_backend_forced_is_a_value_error(transposed):
    rng = np.random.default_rng(11)
    case = random_case(rng, nsp=2, transposed=transposed)
    x, w, gy = arrays(case, rng, np.float32)
    wrong = Backend.GEMM if transposed else Backend.GEMM_TRANSPOSE
    for b in (wrong, Backend.EMPTY):
        with pytest.raises(ValueError, match="backend"):
            backward(case, gy, x, w, backend=b)
    with pytest.raises(ValueError, match="backend"):
        backward(case, gy, x, w, backend="no-such-backend")


@pytest.mark.parametrize("transposed", [False, True])
def test_inference_only_backend_refused(transposed):
    """WINOGRAD_DEPTHWISE_3X3 is inference only: forcing it for a backward
    is a ValueError (whether or not this build has it)."""
    x = np.zeros((1, 4, 8, 8), np.float32)
    w = np.zeros((4, 1, 3, 3), np.float32)
    gy = np.zeros((1, 4, 8, 8), np.float32)
    with pytest.raises(ValueError):
        cconv.convolution_backward(gy, x, w, None, 1, 1, 1, False, 0, 4, [True, True, True],
                                   backend=Backend.WINOGRAD_DEPTHWISE_3X3)


# ------------------------------------------------------------------ zero sizes


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_zero_batch(nsp, transposed, dtype):
    rng = np.random.default_rng(nsp)
    case = random_case(rng, nsp=nsp, transposed=transposed)
    case = Case(**{**case.__dict__, "batch": 0})
    x, w, gy = arrays(case, rng, dtype)
    for backend in required_backends(case, dtype):
        gi, gw, gb = backward(case, gy, x, w, backend=backend)
        assert gi.shape == x.shape and gi.dtype == np.dtype(dtype)
        assert gw.shape == w.shape and gw.dtype == np.dtype(dtype) and not gw.any()
        assert gb.shape == (case.c_out,) and gb.dtype == np.dtype(dtype) and not gb.any()


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float16])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_zero_input_channels(nsp, dtype):
    """ATen's Empty backend: (N, 0, *out) result; grad_bias zeros of C_out."""
    k = (2,) * nsp
    x = np.zeros((2, 0) + (5,) * nsp, dtype)
    w = np.zeros((4, 0) + k, dtype)
    y = cconv.convolution(x, w, None, 1, 0, 1, False, 0, 1)
    gy = np.ones(y.shape, dtype)
    gi, gw, gb = cconv.convolution_backward(gy, x, w, [4], 1, 0, 1, False, 0, 1, [True] * 3)
    assert gi.shape == x.shape and gw.shape == w.shape
    assert gb.shape == (4,) and not gb.any() and gb.dtype == np.dtype(dtype)


@pytest.mark.parametrize("backend", [None, "gemm", "empty"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_zero_input_channels_with_bias_any_backend(nsp, dtype, backend):
    """A bias with an empty input (found by a fuzz against torch): the result
    is ATen's (N, 0, *out) whichever backend is forced; forcing GEMM raised
    "b: expected 0 elements for this geometry, got 3".  A zero batch with a
    bias: the empty result, and the gradients' zeros."""
    rng = np.random.default_rng(nsp)
    f = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}[nsp]
    x = np.zeros((3, 0) + (5,) * nsp, dtype)
    w = np.zeros((3, 0) + (3,) * nsp, dtype)
    b = rng.standard_normal(3).astype(dtype)
    y = f(x, w, b, padding=1, dilation=2, backend=backend)
    assert y.shape == (3, 0) + (3,) * nsp and y.dtype == np.dtype(dtype)
    x0 = rng.standard_normal((0, 2) + (5,) * nsp).astype(dtype)
    w0 = rng.standard_normal((3, 2) + (3,) * nsp).astype(dtype)
    y0 = f(x0, w0, b, backend=backend)
    assert y0.shape == (0, 3) + (3,) * nsp
    gi, gw, gb = cconv.convolution_backward(np.zeros(y0.shape, dtype), x0, w0, [3], 1, 0, 1, False,
                                            0, 1, [True] * 3, backend=backend)
    assert gi.shape == x0.shape and gw.shape == w0.shape and not gw.any() and not gb.any()


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_transposed_zero_output_channels(dtype):
    # a transposed weight with no output channels is an error in PyTorch
    # (forward and convolution_backward, every dtype): "non-empty ... weight"
    x = np.ones((2, 3, 4, 4), dtype)
    w = np.ones((3, 0, 3, 3), dtype)
    with pytest.raises(ValueError, match="weight"):
        cconv.convolution(x, w, None, 1, 0, 1, True, 0, 1)
    with pytest.raises(ValueError, match="weight"):
        cconv.convolution_backward(np.ones((2, 0, 6, 6), dtype), x, w, [0], 1, 0, 1, True, 0, 1,
                                   [True] * 3)


def test_all_masks_false_returns_nones():
    rng = np.random.default_rng(0)
    case = random_case(rng, nsp=2)
    x, w, gy = arrays(case, rng, np.float32)
    assert backward(case, gy, x, w, (False, False, False)) == (None, None, None)


# ------------------------------------------------------------------ layouts


def _layouts(a, rng):
    yield "C", a
    yield "F", np.asfortranarray(a)
    yield "neg", a[..., ::-1].copy()[..., ::-1]
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    big[..., ::2] = a
    yield "strided", big[..., ::2]
    ro = a.copy()
    ro.flags.writeable = False
    yield "readonly", ro
    yield "channels_last", np.moveaxis(np.ascontiguousarray(np.moveaxis(a, 1, -1)), -1, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.float16])
@pytest.mark.parametrize("transposed", [False, True])
def test_layouts_give_the_same_result(transposed, dtype):
    rng = np.random.default_rng(17 + transposed)
    case = random_case(rng, nsp=2, transposed=transposed)
    x, w, gy = arrays(case, rng, dtype)
    base = backward(case, gy, x, w)
    snapshot = [a.copy() for a in (x, w, gy)]
    for (nx, xl), (nw, wl), (ng, gl) in zip(_layouts(x, rng), _layouts(w, rng), _layouts(gy, rng)):
        got = backward(case, gl, xl, wl)
        for g, b in zip(got, base):
            np.testing.assert_array_equal(g, b, err_msg=f"layout {nx}")
            for a in (xl, wl, gl):
                assert not np.shares_memory(g, a)
    for a, s in zip((x, w, gy), snapshot):
        np.testing.assert_array_equal(a, s)   # inputs untouched


def test_broadcast_zero_stride_inputs():
    rng = np.random.default_rng(2)
    case = random_case(rng, nsp=2, transposed=False)
    x, w, gy = arrays(case, rng, np.float64)
    gyb = np.broadcast_to(gy[:, :, :1], gy.shape)
    xb = np.broadcast_to(x[:1], x.shape)
    ref = reference_grads(case, xb, w, gyb)
    check_grads(case, backward(case, gyb, xb, w), ref, np.float64)


def test_array_likes_are_converted():
    x = np.arange(2 * 2 * 5, dtype=np.float64).reshape(2, 2, 5)
    w = np.ones((3, 2, 2))
    gy = np.ones((2, 3, 4))
    ref = cconv.convolution_backward(gy, x, w, [3], 1, 0, 1, False, 0, 1, [True] * 3)
    got = cconv.convolution_backward(gy.tolist(), x.tolist(), w.tolist(), (3,), (1,), [0], 1, False, [0], 1,
                                     (True, True, True))
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_padding_strings(nsp, padding):
    rng = np.random.default_rng(nsp)
    k = (4, 3, 2)[:nsp]
    case = Case(nsp, False, 2, 3, 4, 1, (9, 7, 5)[:nsp], k, (1,) * nsp, padding, (2, 1, 1)[:nsp],
                (0,) * nsp)
    x, w, gy = arrays(case, rng, np.float64)
    check_grads(case, backward(case, gy, x, w), reference_grads(case, x, w, gy), np.float64)


# ------------------------------------------------------------------ errors


def _std():
    rng = np.random.default_rng(0)
    x = randn(rng, (2, 3, 8, 8), np.float32)
    w = randn(rng, (4, 3, 3, 3), np.float32)
    gy = randn(rng, (2, 4, 6, 6), np.float32)
    return x, w, gy


def _call(gy, x, w, bias_sizes=(4,), stride=1, padding=0, dilation=1, transposed=False, output_padding=0,
          groups=1, mask=(True, True, True)):
    return cconv.convolution_backward(gy, x, w, bias_sizes, stride, padding, dilation, transposed,
                                      output_padding, groups, mask)


@pytest.mark.parametrize("bad_shape", [(2, 4, 6, 5), (2, 4, 7, 6), (1, 4, 6, 6), (2, 5, 6, 6), (2, 3, 6, 6)])
def test_wrong_grad_output_shape(bad_shape):
    x, w, _ = _std()
    with pytest.raises(ValueError, match=r"grad_output.*\[2, 4, 6, 6\].*" + ", ".join(map(str, bad_shape))):
        _call(np.zeros(bad_shape, np.float32), x, w)


def test_grad_output_rank():
    x, w, gy = _std()
    with pytest.raises(ValueError, match="grad_output"):
        _call(gy[0], x, w)
    with pytest.raises(ValueError, match="grad_output"):
        _call(gy[None], x, w)


def test_unbatched_input_rejected():
    x, w, gy = _std()
    with pytest.raises(ValueError, match="input"):
        _call(gy[0], x[0], w)


@pytest.mark.parametrize("mask", [(True, True), (True,) * 4, (), [True, False, True, False]])
def test_output_mask_wrong_length(mask):
    x, w, gy = _std()
    with pytest.raises(ValueError, match="output_mask"):
        _call(gy, x, w, mask=mask)


@pytest.mark.parametrize("mask", [None, True, "TTT", (True, None, True), (1.0, True, True), (2, True, True)])
def test_output_mask_not_bools(mask):
    x, w, gy = _std()
    with pytest.raises(TypeError, match="output_mask"):
        _call(gy, x, w, mask=mask)


@pytest.mark.parametrize("bias_sizes", [(5,), (4, 1), (), [3]])
def test_bias_sizes_wrong(bias_sizes):
    x, w, gy = _std()
    with pytest.raises(ValueError, match="bias_sizes"):
        _call(gy, x, w, bias_sizes=bias_sizes)


@pytest.mark.parametrize("bias_sizes", [4, "4", (4.0,), (True,)])
def test_bias_sizes_not_a_shape(bias_sizes):
    x, w, gy = _std()
    with pytest.raises(TypeError, match="bias_sizes"):
        _call(gy, x, w, bias_sizes=bias_sizes)


def test_bias_sizes_transposed():
    rng = np.random.default_rng(0)
    x = randn(rng, (2, 4, 5, 5), np.float64)
    w = randn(rng, (4, 3, 3, 3), np.float64)   # groups=2: C_out = 6
    gy = randn(rng, (2, 6, 7, 7), np.float64)
    cconv.convolution_backward(gy, x, w, [6], 1, 0, 1, True, 0, 2, [True] * 3)
    with pytest.raises(ValueError, match="bias_sizes"):
        cconv.convolution_backward(gy, x, w, [3], 1, 0, 1, True, 0, 2, [True] * 3)


@pytest.mark.parametrize("which", ["grad_output", "input", "weight"])
def test_mismatched_dtypes(which):
    x, w, gy = _std()
    arrs = {"grad_output": gy, "input": x, "weight": w}
    arrs[which] = arrs[which].astype(np.float64)
    with pytest.raises(TypeError, match=which):
        _call(arrs["grad_output"], arrs["input"], arrs["weight"])


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, object, np.uint8])
def test_unsupported_dtypes(dtype):
    x, w, gy = _std()
    with pytest.raises(TypeError):
        _call(gy.astype(dtype), x.astype(dtype), w.astype(dtype))


@pytest.mark.parametrize("op", [1, (1, 0), [0, 2]])
def test_output_padding_on_non_transposed_rejected(op):
    """As aten::convolution_backward in PyTorch 2.13 (the forward ignores it)."""
    x, w, gy = _std()
    with pytest.raises(ValueError, match="output_padding"):
        _call(gy, x, w, output_padding=op)
    _call(gy, x, w, output_padding=(0, 0))


def test_negative_output_padding_rejected():
    x, w, gy = _std()
    with pytest.raises(ValueError, match="output_padding"):
        _call(gy, x, w, output_padding=-1)


@pytest.mark.parametrize("kw, word", [
    (dict(stride=0), "stride"),
    (dict(padding=-1), "padding"),
    (dict(dilation=0), "dilation"),
    (dict(groups=0), "groups"),
    (dict(groups=2), "groups"),
    (dict(stride=(1, 1, 1)), "stride"),
    (dict(padding="full"), "padding"),
    (dict(padding="same", stride=2), "same"),
])
def test_parameter_errors(kw, word):
    x, w, gy = _std()
    with pytest.raises(ValueError, match=word):
        _call(gy, x, w, **kw)


def test_transposed_padding_string_rejected():
    rng = np.random.default_rng(0)
    x = randn(rng, (1, 2, 4, 4), np.float32)
    w = randn(rng, (2, 3, 3, 3), np.float32)
    gy = randn(rng, (1, 3, 6, 6), np.float32)
    with pytest.raises(ValueError, match="padding"):
        cconv.convolution_backward(gy, x, w, None, 1, "same", 1, True, 0, 1, [True] * 3)


def test_weight_input_mismatch_errors():
    x, w, gy = _std()
    with pytest.raises(ValueError, match="channels"):
        _call(gy, x[:, :2], w)
    with pytest.raises(ValueError, match="weight"):
        _call(gy, x, w[..., 0])
    with pytest.raises(ValueError, match="Kernel size"):
        _call(gy, x[..., :2, :2], w)


def test_none_arrays_rejected():
    x, w, gy = _std()
    for args in ((None, x, w), (gy, None, w), (gy, x, None)):
        with pytest.raises(TypeError):
            _call(*args)


# ------------------------------------------------------------------ determinism


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_bit_identical_repeats_at_1_and_2_threads(transposed, dtype):
    rng = np.random.default_rng(99)
    if transposed:
        case = Case(2, True, 5, 16, 12, 1, (13, 11), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1))
    else:
        case = Case(2, False, 5, 12, 16, 1, (25, 23), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0))
    x, w, gy = arrays(case, rng, dtype)
    old = cconv.get_num_threads()
    try:
        for nt in (1, 2):
            cconv.set_num_threads(nt)
            first = backward(case, gy, x, w)
            for _ in range(3):
                again = backward(case, gy, x, w)
                for a, b in zip(first, again):
                    assert a.tobytes() == b.tobytes(), f"not bit-identical at {nt} threads"
            check_grads(case, first, reference_grads(case, x, w, gy), dtype)
    finally:
        cconv.set_num_threads(old)


def test_zz_report_max_errors(capsys):
    """Prints the largest relative errors seen (run with -s to see them)."""
    with capsys.disabled():
        if MAX_ERR:
            print("\nlargest relative error vs the float64 reference:")
            for (d, k), v in sorted(MAX_ERR.items()):
                print(f"  {d:10s} {k:12s} {v:.3e}")
        if FD_RESULTS:
            print("largest relative error vs central finite differences:")
            for (d, k), v in sorted(FD_RESULTS.items()):
                print(f"  {d:10s} {k:12s} {v:.3e}")


@pytest.mark.parametrize("nthreads", [1, 2, 3])
@pytest.mark.parametrize("xshape,wshape,stride,pad,groups", [
    # the GEMM weight gradient's work split (gemm_plan.h cc_plan_wgrad):
    # few images or tiles leave threads idle, so the input channels are
    # chunked; blocks of small images share one GEMM; 1x1 reads x in place
    ((2, 64, 7, 7), (64, 64, 7, 7), 1, 3, 1),           # 7x7 kernel, 7x7 plane
    ((1, 5, 9, 9), (6, 5, 3, 3), 1, 1, 1),              # 5 channels in 2-3 chunks
    ((1, 6, 12, 10), (8, 3, 3, 3), 2, 1, 2),            # grouped, strided
    ((8, 24, 5, 5), (16, 24, 3, 3), 1, 1, 1),           # a block of images
    ((6, 32, 4, 4), (12, 16, 3, 3), 1, 0, 2),           # ... grouped
    ((1, 40, 9, 9), (20, 40, 1, 1), 1, 0, 1),           # 1x1: x read in place
    ((1, 12, 4, 4, 4), (8, 12, 3, 3, 3), 1, 1, 1),      # a small volume
    ((2, 7, 300), (9, 7, 5), 1, 2, 1),                  # 1-D, long rows
])
def test_gemm_wgrad_work_split(xshape, wshape, stride, pad, groups, nthreads, restore_threads):
    """grad_weight on the GEMM backend against the reference wherever its
    plan splits input channels, tiles or image blocks among threads."""
    cconv.set_num_threads(nthreads)
    rng = np.random.default_rng(sum(xshape) * 7 + nthreads)
    nsp = len(xshape) - 2
    for dt in (np.float32, np.float64):
        x = rng.standard_normal(xshape).astype(dt)
        w = rng.standard_normal(wshape).astype(dt)
        y = cconv.convolution(x, w, None, (stride,) * nsp, (pad,) * nsp, (1,) * nsp, False,
                              (0,) * nsp, groups, backend="gemm")
        gy = rng.standard_normal(y.shape).astype(dt)
        _, gw, _ = cconv.convolution_backward(
            gy, x, w, None, (stride,) * nsp, (pad,) * nsp, (1,) * nsp, False, (0,) * nsp,
            groups, (False, True, False), backend="gemm")
        ref = ref_conv_grad_weight(x, gy, w.shape, stride, pad, None, 1, groups)
        assert rel_err(gw, ref) <= (1e-5 if dt == np.float32 else 1e-12), (xshape, wshape, dt)


# ---- grad_input of a stride-1 convolution: forward form or col2im ----

def _weight_adjoint_ref(w, groups):
    cout, cig = w.shape[:2]
    k = w.shape[2:]
    w6 = w.reshape((groups, cout // groups, cig) + k)
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * len(k)
    return np.ascontiguousarray(w6.transpose((0, 2, 1) + tuple(range(3, 3 + len(k))))[flip]) \
        .reshape((groups * cig, cout // groups) + k)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flipped_weight_matches_numpy(dtype, restore_threads):
    """The C weight transform of the forward form (channels swapped per
    group, taps reversed), bit for bit, 1-3 threads, 1-3 spatial dims,
    groups, 1x1 (the plain transpose), big weights (threaded), channel
    counts that end in partial 16 x 16 tiles, 3x3 and 3x3x3 taps."""
    from cconv.backends._gemm_common import flipped_weight as _flipped_weight
    rng = np.random.default_rng(5)
    shapes = [((8, 3, 3, 3), 1), ((12, 4, 5), 3), ((6, 2, 3, 3, 3), 2), ((256, 128, 31), 1),
              ((64, 8, 1, 1), 4), ((9, 1, 3, 3), 9), ((512, 160, 3, 3), 1), ((5, 7, 2, 4), 1),
              ((40, 30, 2, 3, 2), 5), ((37, 21, 3, 3), 1), ((33, 18, 3, 3, 3), 1),
              ((512, 512, 3, 3), 1), ((48, 40, 3, 3), 2)]
    for shape, g in shapes:
        w = rng.standard_normal(shape).astype(dtype)
        nk = len(shape) - 2
        k3 = (1,) * (3 - nk) + shape[2:]
        geom = (1, g, shape[1] * g, shape[0], (4, 4, 4), (4, 4, 4), k3, (1, 1, 1), (0, 0, 0),
                (1, 1, 1))
        want = _weight_adjoint_ref(w, g)
        for nt in (1, 2, 3):
            cconv.set_num_threads(nt)
            got, finite = _flipped_weight(geom, w)
            assert np.array_equal(got.reshape(want.shape), want), (shape, g, nt)
            assert finite
        # a non-contiguous weight gives the same
        wf = np.asfortranarray(w)
        assert np.array_equal(_flipped_weight(geom, wf)[0].reshape(want.shape), want)
        # a NaN or an infinity anywhere is reported (taps of one: not looked at)
        for bad in (np.nan, np.inf, -np.inf):
            wb = w.copy()
            wb.reshape(-1)[rng.integers(0, w.size)] = bad
            got, finite = _flipped_weight(geom, wb)
            assert finite == (int(np.prod(shape[2:])) == 1), (shape, bad)
            assert np.array_equal(got.reshape(want.shape), _weight_adjoint_ref(wb, g), equal_nan=True)


def test_weight_adjoint_argument_checks():
    from cconv import _nhwc
    a = np.zeros(36, np.uint8)
    with pytest.raises(ValueError, match="2 bytes"):
        _nhwc.weight_adjoint(1, 2, 3, 3, 2, a, np.zeros(36, np.uint8), 1)
    with pytest.raises(ValueError, match="wrong size"):
        _nhwc.weight_adjoint(1, 2, 3, 3, 4, a, np.zeros(40, np.uint8), 1)
    _nhwc.weight_adjoint(0, 2, 3, 3, 4, np.zeros(0, np.uint8), np.zeros(0, np.uint8), 1)


@pytest.mark.parametrize("case", [
    # (input shape, weight shape, padding, dilation, forward form expected)
    ((4, 16, 64), (32, 16, 31), 0, 2, False),       # 64 -> 4 positions: col2im
    ((2, 8, 7, 7), (6, 8, 5, 5), 0, 1, False),      # 7x7 -> 3x3
    ((2, 4, 6, 6, 6), (4, 4, 3, 3, 3), 0, 1, False),  # 6^3 -> 4^3
    ((4, 8, 512), (8, 8, 9), 4, 1, True),           # 'same' 1-D
    ((2, 8, 24, 24), (8, 8, 3, 3), 1, 1, True),     # 'same' 2-D
    ((2, 8, 28, 28), (8, 8, 7, 7), 0, 1, False),    # 28 -> 22: 1.62 positions
    ((2, 8, 30, 30), (8, 8, 3, 3), 0, 1, True),     # 30 -> 28: 1.15
])
def test_grad_input_forward_form_or_col2im(case):
    """Stride-1 grad_input runs by default as a forward convolution of the
    flipped weight (igemm, shift or Winograd) unless the input has many
    more positions than the output (a 'valid' convolution of a small image
    with a large kernel), where col2im does only the real products; values
    against the float64 reference either way."""
    from cconv import _trace
    xs, ws, pad, dil, want_forward = case
    rng = np.random.default_rng(11)
    x = rng.standard_normal(xs)
    w = rng.standard_normal(ws)
    nd = len(xs) - 2
    y = ref_conv(x, w, None, 1, pad, None, dil, 1)
    gy = rng.standard_normal(y.shape)
    with _trace.recording() as calls:
        gi, _, _ = cconv.convolution_backward(gy, x, w, None, (1,) * nd, (pad,) * nd, (dil,) * nd,
                                              False, (0,) * nd, 1, (True, False, False))
    assert [k for k, _ in calls] == (["fwd"] if want_forward else ["adj"]), calls
    chosen = cconv.select_backend(x, w, None, 1, pad, dil, op="grad_input")
    flips = (Backend.IMPLICIT_GEMM, Backend.SHIFT, Backend.WINOGRAD_3X3)
    assert (chosen in flips) == want_forward, chosen
    assert rel_err(gi, ref_conv_grad_input(gy, w, xs, 1, pad, None, dil, 1)) <= 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_grad_weight_of_a_nonfinite_input_has_the_product_pattern(seed):
    """An infinite or NaN input element: grad_weight is NaN/inf exactly where
    a real product x * gO meets it.  The vector kernels read past the last
    output of a row (the depthwise weight gradient's masked tail loaded the
    input row whole; the implicit-GEMM one re-read counted lanes) and made
    0 * inf = NaN for inputs no output reads (stride, the row's end): a
    fuzz against torch, e.g. x = [inf] padded by 2 with a 1-tap float64
    kernel gave NaN, torch inf.  1-3-D, grouped and depthwise, every backend
    that applies."""
    from reference import ref_conv_grad_weight
    rng = np.random.default_rng(1500 + seed)
    for it in range(20):
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 2, 4]))
        cin = g * int(rng.integers(1, 4))
        cout = g * int(rng.integers(1, 4))
        k = tuple(int(v) for v in rng.integers(1, 4, nsp))
        s = tuple(int(v) for v in rng.integers(1, 3, nsp))
        p = tuple(int(v) for v in rng.integers(0, 3, nsp))
        d = tuple(int(v) for v in rng.integers(1, 3, nsp))
        size = tuple(int(v) for v in rng.integers(1, 14 if nsp < 3 else 7, nsp))
        if any(size[i] + 2 * p[i] < d[i] * (k[i] - 1) + 1 for i in range(nsp)):
            continue
        dt = np.float64 if it % 2 else np.float32
        x = rng.standard_normal((2, cin) + size).astype(dt)
        x.reshape(-1)[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan])
        out = tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp))
        gy = rng.standard_normal((2, cout) + out).astype(dt)
        wshape = (cout, cin // g) + k
        with np.errstate(invalid="ignore", over="ignore"):
            r = ref_conv_grad_weight(x.astype(np.float64), gy.astype(np.float64), wshape, s, p,
                                     dilation=d, groups=g)
        for backend in (None, "gemm", "depthwise"):
            try:
                _, gw, _ = cconv.convolution_backward(gy, x, np.zeros(wshape, dt), None, s, p, d,
                                                      False, (0,) * nsp, g,
                                                      (False, True, False), backend=backend)
            except ValueError:
                continue  # (DEPTHWISE does not apply)
            why = nonfinite_mismatch(gw, r)
            assert why is None, (backend, why, size, k, s, p, d, g)


def test_complex_nonfinite_gradients_have_torchs_pattern():
    """Complex gradients of infinite or NaN values have PyTorch's NaN/inf
    pattern, quietly (no NumPy RuntimeWarning from inf - inf).  PyTorch's
    autograd through its Gauss-trick forward (t1 - t2) + i * (t3 - t1 - t2)
    hands t3 the real part of gy * conj(i) = 0 * gy_r + gy_i, NaN wherever
    gy_r is not finite (before: 65 of 200 random grad_input patterns
    differed from torch's).  The expected pattern is built from the
    reference's real gradients with that rule, and checked against torch's
    autograd where it is installed."""
    import warnings

    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = None
    rng = np.random.default_rng(5)
    for t in range(40):
        k = int(rng.integers(1, 4))
        pad = 1 if k >= 2 else 0
        cin, cout, n = (int(v) for v in rng.integers(1, 4, 3))
        x = rng.standard_normal((2, cin, n + 4)) + 1j * rng.standard_normal((2, cin, n + 4))
        w = rng.standard_normal((cout, cin, k)) + 1j * rng.standard_normal((cout, cin, k))
        gy = rng.standard_normal((2, cout, n + 5 + 2 * pad - k)) + 1j * rng.standard_normal(
            (2, cout, n + 5 + 2 * pad - k))
        target = (x, w, gy)[t % 3]
        f = target.reshape(-1)
        for _ in range(2):
            i, v = int(rng.integers(f.size)), float(rng.choice([np.inf, -np.inf, np.nan]))
            f[i] = [complex(v, f[i].imag), complex(f[i].real, v), complex(v, v)][int(rng.integers(3))]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gi, gw, gb = cconv.convolution_backward(gy, x, w, [cout], 1, pad, 1, False, 0, 1,
                                                    (True, True, True))
        with np.errstate(invalid="ignore", over="ignore"):
            gc = np.where(np.isfinite(gy.real), gy.imag, np.nan)
            ga, gbb = gy.real - gc, -gy.real - gc
            wr, wi, xr, xi = w.real, w.imag, x.real, x.imag

            def rgi(g, ww):
                return ref_conv_grad_input(g, ww, x.shape, 1, pad)

            def rgw(xx, g):
                return ref_conv_grad_weight(xx, g, w.shape, 1, pad)
            s_i, s_w = rgi(gc, wr + wi), rgw(xr + xi, gc)
            # (parts as pairs: 1j * inf would be NaN + infj in NumPy too)
            want = {"grad_input": (rgi(ga, wr) + s_i, rgi(gbb, wi) + s_i),
                    "grad_weight": (rgw(xr, ga) + s_w, rgw(xi, gbb) + s_w),
                    "grad_bias": (ga.sum(axis=(0, 2)) + gc.sum(axis=(0, 2)), gc.sum(axis=(0, 2)))}
        got = {"grad_input": gi, "grad_weight": gw, "grad_bias": gb}
        if torch is not None:
            tx, tw = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()
            tb = torch.zeros(cout, dtype=torch.complex128, requires_grad=True)
            y = F.conv1d(tx, tw, tb, padding=pad)
            tg = torch.autograd.grad(y, (tx, tw, tb), torch.from_numpy(gy))
            torch_want = {name: (a.numpy().real, a.numpy().imag)
                          for name, a in zip(("grad_input", "grad_weight", "grad_bias"), tg)}
        for name in got:
            refs = [("reference", want[name])] + ([("torch", torch_want[name])] if torch else [])
            for who, r in refs:
                for part, have, r_part in (("real", got[name].real, r[0]), ("imag", got[name].imag, r[1])):
                    why = nonfinite_mismatch(have, r_part)
                    assert why is None, (t, name, who, part, why)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_1x1_adjoint_writes_every_element(seed):
    """The 1x1 adjoint's direct GEMMs start from beta 0 where there is no
    bias (x is not set first): every element must still be written.  The
    output memory is filled with NaN first (``out=``), so an element left
    unwritten, or a GEMM that keeps C's NaN at beta 0, shows; random sizes
    from one position up (GEMV-shaped products), groups, 1-3 threads,
    float32 and float64, with and without bias, against the float64
    reference; and grad_input through convolution_backward."""
    rng = np.random.default_rng(100 + seed)
    prev = cconv.get_num_threads()
    for case in range(12):
        g = int(rng.choice([1, 1, 2, 3]))
        ci = g * int(rng.integers(1, 40)); co = g * int(rng.integers(1, 40))
        h = int(rng.integers(1, 40)); w_ = int(rng.choice([1, 2, 3, 17, 64, 301]))
        n = int(rng.integers(1, 4))
        for dt in (np.float32, np.float64):
            x = rng.standard_normal((n, ci, h, w_)).astype(dt)
            w = rng.standard_normal((ci, co // g, 1, 1)).astype(dt)
            b = rng.standard_normal(co).astype(dt) if case % 3 == 0 else None
            ref = ref_conv_transpose(x.astype(np.float64), w.astype(np.float64),
                                     None if b is None else b.astype(np.float64), groups=g)
            gy = rng.standard_normal((n, co, h, w_)).astype(dt)
            wf = rng.standard_normal((co, ci // g, 1, 1)).astype(dt)
            gref = ref_conv_grad_input(gy.astype(np.float64), wf.astype(np.float64),
                                       (n, ci, h, w_), groups=g)
            for t in (1, 2, 3):
                cconv.set_num_threads(t)
                try:
                    out = np.full(ref.shape, np.nan, dt)
                    y = cconv.conv_transpose2d(x, w, b, groups=g, out=out, backend="gemm_1x1")
                    gx = cconv.convolution_backward(gy, np.zeros((n, ci, h, w_), dt), wf, None,
                                                    1, 0, 1, False, 0, g, (True, False, False),
                                                    backend="gemm_1x1")[0]
                finally:
                    cconv.set_num_threads(prev)
                assert y is out
                assert_close(y, ref, dt, ci // g)
                assert_close(gx, gref, dt, co // g)
