"""The dispatch model: one decision per call.

* the method the compiled kernels ran (cconv._trace) is the one
  ``select_backend`` names, for the forward and both gradients, on
  thousands of random problems (dtypes, layouts, plain and transposed,
  groups, depthwise, 1-D to 3-D, thread counts);
* every method that says it can compute a problem can be forced with
  ``backend=``, runs (the trace says so) and matches the float64 reference;
* a forced method that cannot run a problem is a ValueError saying why;
  one that would change a NaN/inf pattern yields to the default choice;
* benchmark mode times every applicable method.
"""
from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import Backend, _dispatch, _layout, _trace
from cconv._args import compute_dtype
from cconv._dispatch import Problem
from cconv._params import make_params
from reference import (
    rel_err,
    ref_conv,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_transpose,
    tolerance,
)

OPS = ("forward", "grad_input", "grad_weight")

# what the kernel trace calls each CPU method (EMPTY runs no kernel)
TRACED = {
    Backend.GEMM: "im2col",
    Backend.GEMM_TRANSPOSE: "im2col",
    Backend.GEMM_1X1: "gemm_1x1",
    Backend.IMPLICIT_GEMM: "implicit_gemm",
    Backend.WINOGRAD_3X3: "winograd_3x3",
    Backend.SHIFT: "shift",
    Backend.NHWC: "nhwc",
    Backend.DEPTHWISE: "depthwise",
    Backend.DEPTHWISE_PLANE: "depthwise_plane",
    Backend.DEPTHWISE_CHANNEL_BLOCKS: "depthwise_channel_blocks",
    Backend.DEPTHWISE_NHWC: "depthwise_nhwc",
    Backend.WINOGRAD_DEPTHWISE_3X3: "winograd_depthwise_3x3",
}
# methods that compute the adjoint as a forward of the flipped weight
FLIPS = {Backend.IMPLICIT_GEMM, Backend.WINOGRAD_3X3, Backend.SHIFT}


def _to_last(nd):
    return (0,) + tuple(range(2, nd)) + (1,)


def _to_first(nd):
    return (0, nd - 1) + tuple(range(1, nd - 1))


def channels_last(a):
    return np.ascontiguousarray(a.transpose(_to_last(a.ndim))).transpose(_to_first(a.ndim))


def randn(rng, shape, dtype):
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


class Case:
    """A random problem: arrays and the keyword arguments of its call."""

    def __init__(self, rng, dtype=None):
        kind = rng.choice(["general", "general", "depthwise", "1x1", "3x3", "patch", "medium"])
        self.nsp = nsp = int(rng.integers(1, 4)) if kind not in ("3x3", "medium") else int(rng.choice([2, 2, 3]))
        self.transposed = bool(rng.random() < 0.3) and kind != "patch"
        self.dtype = np.dtype(dtype if dtype is not None else rng.choice(
            [np.float32, np.float32, np.float64, np.float64, np.float16, np.complex64]))
        n = int(rng.integers(1, 4))
        groups, cg, og = 1, int(rng.integers(1, 5)), int(rng.integers(1, 5))
        k = tuple(int(v) for v in rng.integers(1, 4, nsp))
        stride = tuple(int(v) for v in rng.integers(1, 3, nsp))
        dil = tuple(int(v) for v in rng.integers(1, 3, nsp))
        pad = tuple(int(v) for v in rng.integers(0, 2, nsp))
        size = {1: 12, 2: 9, 3: 6}[nsp]
        L = tuple(int(v) for v in rng.integers(size // 2, size + 1, nsp))
        if kind == "general":
            groups = int(rng.choice([1, 1, 2, 3]))
        elif kind == "depthwise":
            groups, cg, og = int(rng.integers(2, 40)), 1, int(rng.choice([1, 1, 1, 2, 3]))
            k = tuple(int(rng.choice([1, 3, 3, 5, 7])) for _ in range(nsp))
            L = tuple(int(v) for v in rng.integers(4, 15, nsp))
            pad = tuple(kk // 2 for kk in k)
        elif kind == "1x1":
            k, pad, stride = (1,) * nsp, (0,) * nsp, (1,) * nsp if rng.random() < 0.7 else stride
            cg, og = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        elif kind == "3x3":
            k, stride, pad = (3,) * nsp, (1,) * nsp, (1,) * nsp
            dil = (1,) * nsp if rng.random() < 0.7 else dil
        elif kind == "patch":
            k = tuple(int(v) for v in rng.integers(2, 4, nsp))
            stride, pad, dil = k, (0,) * nsp, (1,) * nsp
            L = tuple(kk * int(rng.integers(1, 4)) for kk in k)
        elif kind == "medium":  # channels and planes where Winograd/igemm are wanted
            n, cg, og = 1, int(rng.choice([32, 48])), int(rng.choice([32, 64]))
            k, stride, pad, dil = (3,) * nsp, (1,) * nsp, (1,) * nsp, (1,) * nsp
            L = (14, 14) if nsp == 2 else (4, 8, 8)
            self.dtype = np.dtype(np.float64 if rng.random() < 0.6 else np.float32)
        self.groups = groups
        c_in, c_out = cg * groups, og * groups
        if self.transposed:
            self.output_padding = tuple(int(rng.integers(0, max(s, d))) for s, d in zip(stride, dil))
            w_shape = (c_in, og) + k
        else:
            self.output_padding = (0,) * nsp
            w_shape = (c_out, cg) + k
            # the padded input must hold the dilated kernel
            L = tuple(max(li, d * (kk - 1) + 1 - 2 * p) for li, d, kk, p in zip(L, dil, k, pad))
        self.stride, self.dilation, self.padding = stride, dil, pad
        self.x = randn(rng, (n, c_in) + L, self.dtype)
        self.w = randn(rng, w_shape, self.dtype)
        self.b = randn(rng, (c_out,), self.dtype) if rng.random() < 0.5 else None
        if rng.random() < 0.3:
            self.x = channels_last(self.x)
        # (size-1 axes can make it C-contiguous too: channels first then)
        self.cl = _layout.is_channels_last(self.x)
        p = self.params()
        self.gy = randn(rng, p.output_shape, self.dtype)
        # the forward of some cases without the batch axis (one image)
        self.unbatched = self.x.shape[0] == 1 and rng.random() < 0.5

    def params(self):
        return make_params(self.x.shape, self.w.shape, None, self.stride, self.padding, self.dilation,
                           self.transposed, self.output_padding, self.groups, "t",
                           compute_dtype(self.dtype), self.dtype)

    def kwargs(self):
        return dict(stride=self.stride, padding=self.padding, dilation=self.dilation,
                    transposed=self.transposed, output_padding=self.output_padding, groups=self.groups)

    def select(self, op):
        x = self.x[0] if self.unbatched and op == "forward" else self.x
        return cconv.select_backend(x, self.w, self.b, op=op, **self.kwargs())

    def call(self, op, backend=None):
        kw = self.kwargs()
        if op == "forward" and self.unbatched:
            fn = getattr(cconv, f"conv{'_transpose' if self.transposed else ''}{self.nsp}d")
            args = dict(stride=kw["stride"], padding=kw["padding"], dilation=kw["dilation"],
                        groups=kw["groups"])
            if self.transposed:
                args["output_padding"] = kw["output_padding"]
            return fn(self.x[0], self.w, self.b, backend=backend, **args)[None]
        if op == "forward":
            return cconv.convolution(self.x, self.w, self.b, kw["stride"], kw["padding"], kw["dilation"],
                                     kw["transposed"], kw["output_padding"], kw["groups"], backend=backend)
        mask = (op == "grad_input", op == "grad_weight", False)
        gi, gw, _ = cconv.convolution_backward(
            self.gy, self.x, self.w, None, kw["stride"], kw["padding"], kw["dilation"], kw["transposed"],
            kw["output_padding"], kw["groups"], mask, backend=backend)
        return gi if op == "grad_input" else gw

    def reference(self, op):
        x, w, gy = (np.asarray(a).astype(np.complex128 if self.dtype.kind == "c" else np.float64)
                    for a in (self.x, self.w, self.gy))
        b = None if self.b is None else self.b.astype(x.dtype)
        kw = dict(stride=self.stride, dilation=self.dilation, groups=self.groups)
        if op == "forward":
            if self.transposed:
                return ref_conv_transpose(x, w, b, self.stride, self.padding, self.output_padding,
                                          self.groups, self.dilation)
            return ref_conv(x, w, b, pad_before=self.padding, **kw)
        extra = dict(transposed=self.transposed, output_padding=self.output_padding)
        if op == "grad_input":
            return ref_conv_grad_input(gy, w, x.shape, pad_before=self.padding, **kw, **extra)
        return ref_conv_grad_weight(x, gy, w.shape, pad_before=self.padding, **kw, **extra)

    def describe(self):
        return (f"x{self.x.shape} cl={self.cl} w{self.w.shape} {self.dtype.name} T={self.transposed} "
                f"{self.kwargs()}")


def expected_events(b: Backend, case: Case, op: str) -> set:
    """The (kind, method) trace entries a call run by ``b`` makes."""
    if b is Backend.EMPTY:
        return set()
    kind = _dispatch.kind_of(case.transposed, op)
    if kind == "adj" and b in FLIPS:
        kind = "fwd"  # the adjoint as the flipped weight's forward
    return {(kind, TRACED[b])}


def check_trace(case: Case, op: str, events: list, b: Backend) -> None:
    got = set(events)
    want = expected_events(b, case, op)
    assert got == want, f"{op}: select_backend said {b.name}, the kernels ran {events} ({case.describe()})"


@pytest.mark.parametrize("block", range(8))
def test_trace_matches_select_backend(block, restore_threads):
    """A few thousand random problems, each op: the kernels run exactly the
    method select_backend names (select_backend reads the same things a
    call does: shapes, dtypes, parameters, layout, thread count)."""
    rng = np.random.default_rng(1000 + block)
    seen = {op: set() for op in OPS}
    for i in range(120):
        cconv.set_num_threads(int(rng.integers(1, 3)))
        case = Case(rng)
        for op in OPS:
            b = case.select(op)
            with _trace.recording() as events:
                case.call(op)
            check_trace(case, op, events, b)
            seen[op].add(b)
    # the random problems reach more than the methods of last resort
    assert len(seen["forward"]) >= 4, seen


def _applicable(case: Case, op: str) -> list:
    p = case.params()
    dt = np.dtype(case.dtype)
    q = Problem(p, np, op, case.cl and op == "forward" and dt.kind != "c", op != "forward")
    return _dispatch.candidates(q)


@pytest.mark.parametrize("block", range(6))
def test_every_applicable_method_forced(block):
    """Every method that can compute a random problem, forced with
    backend=, runs (the trace) and matches the float64 reference."""
    rng = np.random.default_rng(2000 + block)
    forced = set()
    for i in range(40):
        case = Case(rng)
        for op in OPS:
            ref = case.reference(op)
            red = max(1, int(np.prod(case.w.shape[1:])))
            tol = tolerance(case.dtype, red) * (4 if case.dtype == np.float16 else 1)
            for b in _applicable(case, op):
                with _trace.recording() as events:
                    got = case.call(op, backend=b)
                check_trace(case, op, events, b)
                err = rel_err(got, ref)
                assert err <= tol, f"{op} {b.name}: rel err {err:.2e} > {tol:.0e} ({case.describe()})"
                forced.add(b)
    assert len(forced) >= 6, forced


def test_each_cpu_method_reached_by_forcing():
    """Hand-picked problems reach every CPU method through backend=."""
    rng = np.random.default_rng(7)
    f32 = np.float32

    def check(x, w, b, **kw):
        y = cconv.conv2d(x, w, **kw, backend=b) if w.ndim == 4 else cconv.conv1d(x, w, **kw, backend=b)
        ref = ref_conv(x.astype(np.float64), w.astype(np.float64), None,
                       kw.get("stride", 1), kw.get("padding", 0), None, kw.get("dilation", 1),
                       kw.get("groups", 1))
        assert rel_err(y, ref) <= 1e-5, b

    x = randn(rng, (2, 16, 12, 12), f32)
    check(x, randn(rng, (8, 16, 1, 1), f32), Backend.GEMM_1X1)
    for b in (Backend.GEMM, Backend.IMPLICIT_GEMM, Backend.WINOGRAD_3X3, Backend.SHIFT):
        check(x, randn(rng, (8, 16, 3, 3), f32), b, padding=1)
    wd = randn(rng, (16, 1, 3, 3), f32)
    for b in (Backend.DEPTHWISE, Backend.DEPTHWISE_PLANE, Backend.DEPTHWISE_CHANNEL_BLOCKS,
              Backend.WINOGRAD_DEPTHWISE_3X3):
        check(x, wd, b, padding=1, groups=16)
    xl = channels_last(x)
    check(xl, randn(rng, (8, 16, 3, 3), f32), Backend.NHWC, padding=1)
    check(xl, wd, Backend.DEPTHWISE_NHWC, padding=1, groups=16)


@pytest.mark.parametrize("b,why", [
    (Backend.GEMM_1X1, "1x1"),
    (Backend.WINOGRAD_3X3, "3x3"),
    (Backend.NHWC, "channels-last"),
    (Backend.DEPTHWISE_NHWC, "depthwise"),
    (Backend.DEPTHWISE_PLANE, "depthwise"),
    (Backend.DEPTHWISE_CHANNEL_BLOCKS, "depthwise"),
    (Backend.GEMM_TRANSPOSE, "transposed"),
])
def test_forced_method_that_cannot_run_says_why(b, why):
    rng = np.random.default_rng(3)
    x = randn(rng, (1, 4, 9, 9), np.float32)
    w = randn(rng, (4, 4, 5, 5), np.float32)
    with pytest.raises(ValueError, match=why):
        cconv.conv2d(x, w, padding=2, backend=b)


def test_forced_flip_method_refuses_strided_adjoint():
    rng = np.random.default_rng(4)
    x = randn(rng, (1, 4, 9, 9), np.float32)
    w = randn(rng, (4, 4, 3, 3), np.float32)
    with pytest.raises(ValueError, match="stride"):
        cconv.conv_transpose2d(x, w, stride=2, backend=Backend.IMPLICIT_GEMM)
    with pytest.raises(ValueError, match="weight gradient"):
        cconv.convolution_backward(cconv.conv2d(x, w, padding=1), x, w, None, 1, 1, 1, False, 0, 1,
                                   (False, True, False), backend=Backend.WINOGRAD_3X3)


@pytest.mark.parametrize("b", [Backend.DEPTHWISE, Backend.DEPTHWISE_PLANE, Backend.WINOGRAD_DEPTHWISE_3X3])
def test_forced_method_yields_on_nonfinite_weight(b):
    """A depthwise method with an infinite weight would put NaN where
    PyTorch's products have none: forcing it runs the default choice for
    such data, whose pattern is the reference's."""
    rng = np.random.default_rng(5)
    x = randn(rng, (1, 8, 7, 7), np.float32)
    w = randn(rng, (8, 1, 3, 3), np.float32)
    w[2, 0, 0, 0] = np.inf
    ref = ref_conv(x.astype(np.float64), w.astype(np.float64), None, 1, 1, None, 1, 8)
    with _trace.recording() as events:
        y = cconv.conv2d(x, w, padding=1, groups=8, backend=b)
    assert np.array_equal(np.isnan(y), np.isnan(ref))
    assert np.array_equal(np.isinf(y), np.isinf(ref))
    assert events and all(m not in ("depthwise", "depthwise_plane", "winograd_depthwise_3x3")
                          for _, m in events), events
    assert cconv.select_backend(x, w, padding=1, groups=8) not in (
        Backend.DEPTHWISE, Backend.DEPTHWISE_PLANE, Backend.DEPTHWISE_CHANNEL_BLOCKS)


def test_winograd_nonfinite_data_recomputed():
    """WINOGRAD_3X3 stops at an infinity in x; the call is recomputed by
    the default choice for non-finite data (the trace shows both)."""
    rng = np.random.default_rng(6)
    x = randn(rng, (1, 4, 8, 8), np.float64)
    x[0, 1, 3, 3] = np.inf
    w = randn(rng, (4, 4, 3, 3), np.float64)
    ref = ref_conv(x, w, None, 1, 1, None, 1, 1)
    with _trace.recording() as events:
        y = cconv.conv2d(x, w, padding=1, backend=Backend.WINOGRAD_3X3)
    assert np.array_equal(np.isinf(y), np.isinf(ref)) and np.array_equal(np.isnan(y), np.isnan(ref))
    fin = np.isfinite(ref)
    assert np.allclose(y[fin], ref[fin], rtol=1e-12, atol=1e-12)
    assert events and events[-1][1] != "winograd_3x3", events


def test_benchmark_mode_times_every_applicable_method():
    rng = np.random.default_rng(8)
    x = randn(rng, (1, 16, 10, 10), np.float32)
    w = randn(rng, (16, 16, 3, 3), np.float32)
    case_q = Problem(make_params(x.shape, w.shape, None, 1, 1, 1, False, 0, 1, "t", np.float32), np)
    cands = _dispatch.candidates(case_q)
    assert {Backend.GEMM, Backend.IMPLICIT_GEMM, Backend.WINOGRAD_3X3, Backend.SHIFT} <= set(cands)
    try:
        with cconv.benchmark(), _trace.recording() as events:
            y = cconv.conv2d(x, w, padding=1)
        assert {m for _, m in events} == {TRACED[b] for b in cands}
        winner = cconv.select_backend(x, w, padding=1)
        assert winner in cands
        with _trace.recording() as events:
            y2 = cconv.conv2d(x, w, padding=1)
        assert {m for _, m in events} == {TRACED[winner]}
        assert rel_err(y, y2) < 1e-5
    finally:
        cconv._autotune.clear()


def test_select_backend_op_argument():
    x = np.zeros((1, 2, 5, 5), np.float32)
    w = np.zeros((2, 2, 3, 3), np.float32)
    for op in OPS:
        assert isinstance(cconv.select_backend(x, w, op=op), Backend)
    with pytest.raises(ValueError, match="op"):
        cconv.select_backend(x, w, op="backward")


def test_member_names_and_values_keep_working():
    """The original members keep their names and values (member, value, name)."""
    for name in ("EMPTY", "GEMM", "GEMM_TRANSPOSE", "DEPTHWISE", "WINOGRAD_DEPTHWISE_3X3",
                 "CUDA_GEMM", "CUDA_GEMM_TRANSPOSE", "CUDA_DEPTHWISE"):
        b = Backend[name]
        assert _dispatch.as_backend(b.value) is b and _dispatch.as_backend(name.lower()) is b
    assert set(_dispatch.ORDER) == set(Backend)
