"""Randomised forward tests of cconv against tests/reference.py.

Every random case is run through every backend that must run it
(``required_backends``: GEMM or GEMM_TRANSPOSE always, EMPTY for an empty
batch, DEPTHWISE and WINOGRAD_DEPTHWISE_3X3 for the problems they are for;
forced with ``backend=``, as a member and as its string value), through
whatever ``select_backend`` picks, and through the default ``backend=None``;
each result is checked for values, dtype, shape, array type, call-to-call
bit-identity, memory sharing, ``out=`` and untouched inputs.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import io
import itertools
import os
import re
import subprocess
import sys
import textwrap
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest

import cconv
from cconv import Backend, _kernels
from cconv._params import make_params
from methods import fwd_method
from reference import (
    nonfinite_mismatch,
    rel_err,
    reduction_length,
    ref_conv,
    ref_conv_grad_input,
    ref_conv_out_size,
    ref_conv_transpose,
    ref_conv_transpose_out_size,
    same_padding,
    tolerance,
)

DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]
X_LAYOUTS = ["C", "F", "neg", "channels_last", "slice", "broadcast", "readonly"]
W_LAYOUTS = ["C", "F", "neg", "channels_last", "slice", "broadcast", "readonly"]
B_LAYOUTS = ["C", "neg", "slice", "broadcast", "readonly"]
REAL = (np.float16, np.float32, np.float64)

CONV = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
CONVT = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d, 3: cconv.conv_transpose3d}


# ------------------------------------------------------------------ data


def randn(rng, shape, dtype):
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def apply_layout(a, kind, channel_axis=1):
    """Same shape (and, except for 'broadcast', the same values), other memory layout."""
    a = np.asarray(a)
    if kind == "C":
        return np.ascontiguousarray(a)
    if kind == "F":
        return np.asfortranarray(a)
    if kind == "neg":
        flip = (slice(None, None, -1),) * a.ndim
        r = a[flip].copy()[flip]
        assert all(s < 0 for s, n in zip(r.strides, r.shape) if n > 1) or a.size <= 1
        return r
    if kind == "channels_last":
        if a.ndim < 3:
            return a.copy()
        perm = [i for i in range(a.ndim) if i != channel_axis] + [channel_axis]
        return np.ascontiguousarray(a.transpose(perm)).transpose(np.argsort(perm))
    if kind == "slice":
        # every other element of a NaN-filled buffer: reading outside the view poisons results
        big = np.full(tuple(2 * n + 1 for n in a.shape), np.nan, dtype=a.dtype)
        view = big[tuple(slice(1, 1 + 2 * n, 2) for n in a.shape)]
        view[...] = a
        return view
    if kind == "broadcast":
        # zero strides: the first entry repeated along axis 0 and along the last axis
        src = a[:1]
        if a.ndim > 1:
            src = src[..., :1]
        r = np.broadcast_to(src, a.shape)
        assert r.size == 0 or 0 in r.strides or r.size == 1
        return r
    if kind == "readonly":
        r = a.copy()
        r.flags.writeable = False
        return r
    raise AssertionError(kind)


def fmt_param(rng, tup):
    """One of the accepted spellings of an int tuple: int, tuple, list, NumPy ints."""
    tup = tuple(int(v) for v in tup)
    choices = ["tuple", "list", "np_tuple"]
    if len(set(tup)) == 1:
        choices += ["int", "int", "np_int"]
    c = choices[int(rng.integers(len(choices)))]
    if c == "int":
        return tup[0]
    if c == "np_int":
        return np.int64(tup[0]) if rng.random() < 0.5 else np.int32(tup[0])
    if c == "list":
        return list(tup)
    if c == "np_tuple":
        return tuple(np.int64(v) for v in tup)
    return tup


@dataclasses.dataclass
class Case:
    nsp: int
    transposed: bool
    batched: bool
    x: np.ndarray
    w: np.ndarray
    b: np.ndarray | None
    groups: int
    stride: tuple
    dilation: tuple
    pad_before: tuple
    pad_after: tuple
    output_padding: tuple
    kwargs: dict  # what is passed to cconv (user spellings)
    dtype: np.dtype

    @property
    def c_in(self):
        return self.x.shape[1 if self.batched else 0]

    @property
    def kernel(self):
        return self.w.shape[2:]

    def fn(self):
        return (CONVT if self.transposed else CONV)[self.nsp]

    def call(self, backend=None, out=None):
        kw = dict(self.kwargs)
        if backend is not None:
            kw["backend"] = backend
        if out is not None:
            kw["out"] = out
        return self.fn()(self.x, self.w, self.b, **kw)

    def reference(self):
        xb = self.x if self.batched else self.x[None]
        if self.transposed:
            r = ref_conv_transpose(xb, self.w, self.b, self.stride, self.pad_before,
                                   self.output_padding, self.groups, self.dilation)
        else:
            r = ref_conv(xb, self.w, self.b, self.stride, self.pad_before, self.pad_after,
                         self.dilation, self.groups)
        return r if self.batched else r[0]

    def tol(self):
        return tolerance(self.dtype, reduction_length(self.c_in, self.groups, self.kernel))

    def is_depthwise(self):
        return (not self.transposed and self.groups == self.c_in and self.c_in >= 2)

    def select(self):
        return cconv.select_backend(
            self.x, self.w, self.b, stride=self.kwargs["stride"], padding=self.kwargs["padding"],
            dilation=self.kwargs["dilation"], transposed=self.transposed,
            output_padding=self.kwargs.get("output_padding", 0), groups=self.kwargs["groups"])

    def required_backends(self):
        """The backends that must run this case: every problem has a GEMM
        backend, an empty batch EMPTY, a real 2-D depthwise one DEPTHWISE,
        and a float32 3x3 stride-1 undilated depthwise one with padding of
        at most 1 WINOGRAD_DEPTHWISE_3X3."""
        n = self.x.shape[0] if self.batched else 1
        req = []
        if n == 0:
            req.append(Backend.EMPTY)
        req.append(Backend.GEMM_TRANSPOSE if self.transposed else Backend.GEMM)
        if self.is_depthwise() and np.dtype(self.dtype) in [np.dtype(t) for t in REAL]:
            if self.nsp == 2:
                req.append(Backend.DEPTHWISE)
            if (np.dtype(self.dtype) == np.float32 and self.nsp == 2 and self.kernel == (3, 3)
                    and self.stride == (1, 1) and self.dilation == (1, 1)
                    and self.w.shape[0] == self.c_in
                    and max(self.pad_before + self.pad_after) <= 1 and n > 0):
                req.append(Backend.WINOGRAD_DEPTHWISE_3X3)
        return req

    def describe(self):
        return (f"nsp={self.nsp} T={self.transposed} batched={self.batched} x{self.x.shape} "
                f"strides={self.x.strides} w{self.w.shape} bias={self.b is not None} "
                f"dtype={np.dtype(self.dtype).name} kwargs={self.kwargs}")


MAX_L = {1: 12, 2: 7, 3: 5}


def make_case(rng, *, nsp, transposed, dtype, x_layout="C", w_layout="C", b_layout="C",
              kind="general", batched=None, bias=None, padding_kind=None):
    """A random small problem.  kind: 'general', 'depthwise' or 'winograd'."""
    dtype = np.dtype(dtype)
    if batched is None:
        batched = bool(rng.random() < 0.8)
    if bias is None:
        bias = bool(rng.random() < 0.6)
    n = int(rng.integers(1, 4))
    if kind == "general":
        groups = int(rng.choice([1, 1, 2, 3]))
        cg = int(rng.integers(1, 4))
        og = int(rng.integers(1, 4))
        if not transposed and rng.random() < 0.15:  # depthwise, multiplier 1 or 2
            cg, og = 1, int(rng.integers(1, 3))
            groups = int(rng.integers(2, 5))
        k = tuple(int(v) for v in rng.integers(1, 4 if nsp < 3 else 3, nsp) + (rng.random() < 0.1))
        stride = tuple(int(v) for v in rng.integers(1, 4, nsp))
        dilation = tuple(int(v) for v in rng.integers(1, 3, nsp))
    elif kind == "depthwise":
        groups = int(rng.integers(2, 6))
        cg, og = 1, int(rng.choice([1, 1, 2, 3]))
        k = tuple(int(v) for v in rng.integers(1, 6 if nsp < 3 else 4, nsp))
        stride = tuple(int(v) for v in rng.integers(1, 3, nsp))
        dilation = tuple(int(v) for v in rng.integers(1, 3, nsp))
    elif kind == "winograd":
        groups = int(rng.integers(2, 9))
        cg, og = 1, 1
        k = (3, 3)
        stride = (1, 1)
        dilation = (1, 1)
    else:
        raise AssertionError(kind)
    c_in = cg * groups
    c_out = og * groups

    output_padding = (0,) * nsp
    if transposed:
        output_padding = tuple(int(rng.integers(0, max(s, d))) for s, d in zip(stride, dilation))
        while True:
            p = tuple(int(v) for v in rng.integers(0, 3, nsp))
            L = tuple(int(rng.integers(1, MAX_L[nsp] + 1)) for _ in range(nsp))
            if min(ref_conv_transpose_out_size(L, k, stride, p, output_padding, dilation)) > 0:
                break
        pad_spec = p if rng.random() < 0.7 or len(set(p)) > 1 else p[0]
        pb = pa = p
    else:
        if padding_kind is None:
            if kind == "winograd":
                padding_kind = str(rng.choice(["int", "tuple", "same", "valid"]))
            else:
                padding_kind = str(rng.choice(["int", "tuple", "tuple", "same", "valid"]))
        if padding_kind == "same":
            stride = (1,) * nsp
            pb, pa = same_padding(k, dilation)
            pad_spec = "same"
        elif padding_kind == "valid":
            pb = pa = (0,) * nsp
            pad_spec = "valid"
        else:
            hi = 2 if kind == "winograd" else 3
            if padding_kind == "int":
                pb = (int(rng.integers(0, hi)),) * nsp
            else:
                pb = tuple(int(v) for v in rng.integers(0, hi, nsp))
            pa = pb
            pad_spec = pb[0] if padding_kind == "int" else pb
        need = [d * (kk - 1) + 1 - b - a for d, kk, b, a in zip(dilation, k, pb, pa)]
        lo = [max(1, v) for v in need]
        if pad_spec == "same" and rng.random() < 0.3:
            lo = [1] * nsp  # 'same' works even when the kernel is larger than the input
        L = tuple(int(rng.integers(lo_i, max(lo_i, MAX_L[nsp]) + 1)) for lo_i in lo)
        assert min(ref_conv_out_size(L, k, stride, pb, pa, dilation)) > 0

    xshape = ((n,) if batched else ()) + (c_in,) + L
    wshape = ((c_in, og) if transposed else (c_out, cg)) + k
    x = apply_layout(randn(rng, xshape, dtype), x_layout, channel_axis=1 if batched else 0)
    w = apply_layout(randn(rng, wshape, dtype), w_layout, channel_axis=1)
    b = apply_layout(randn(rng, (c_out,), dtype), b_layout, channel_axis=0) if bias else None

    kwargs = dict(stride=fmt_param(rng, stride), padding=pad_spec if isinstance(pad_spec, str)
                  else (fmt_param(rng, pad_spec) if isinstance(pad_spec, tuple) else pad_spec),
                  dilation=fmt_param(rng, dilation),
                  groups=groups if rng.random() < 0.7 else np.int64(groups))
    if transposed:
        kwargs["output_padding"] = fmt_param(rng, output_padding)
    return Case(nsp, transposed, batched, x, w, b, groups, stride, dilation, pb, pa,
                output_padding, kwargs, dtype)


# ------------------------------------------------------------------ checks


def _same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _snapshot(case):
    return [None if a is None else (np.array(a, copy=True), a.strides, a.flags.writeable)
            for a in (case.x, case.w, case.b)]


def check_case(case, backends=None, use_string=False, check_out=True):
    """Run ``case`` through every required backend, the selected one and the default."""
    info = case.describe()
    ref = case.reference()
    tol = case.tol()
    before = _snapshot(case)

    if backends is None:
        backends = case.required_backends()
    selected = case.select()
    assert isinstance(selected, Backend), f"select_backend returned {selected!r}; {info}"
    todo = list(backends) + ([selected] if selected not in backends else []) + [None]

    results = {}
    for be in todo:
        arg = be.value if (use_string and be is not None) else be
        what = f"backend={arg!r}; {info}"
        y = case.call(backend=arg)
        assert type(y) is np.ndarray, what
        assert y.dtype == case.dtype, f"dtype {y.dtype} != {case.dtype}; {what}"
        assert y.shape == ref.shape, f"shape {y.shape} != {ref.shape}; {what}"
        err = rel_err(y, ref)
        assert err <= tol, f"relative error {err:.3e} > {tol:.0e}; {what}"
        for a in (case.x, case.w, case.b):
            if a is not None:
                assert not np.shares_memory(y, a), f"result shares memory with an input; {what}"
        y2 = case.call(backend=arg)
        assert _same_bits(y, y2), f"two identical calls differ; {what}"
        if check_out:
            out = np.empty(ref.shape, dtype=case.dtype)
            r = case.call(backend=arg, out=out)
            assert r is out, f"out= did not return out itself; {what}"
            err = rel_err(out, ref)
            assert err <= tol, f"out=: relative error {err:.3e} > {tol:.0e}; {what}"
        results[be] = y

    # the default runs what select_backend names
    assert _same_bits(results[None], results[selected]), f"default != forced {selected}; {info}"

    after = _snapshot(case)
    for (a0, s0, w0), a1 in zip([t for t in before if t is not None], [t for t in after if t is not None]):
        assert _same_bits(a0, a1[0]) and s0 == a1[1] and w0 == a1[2], f"an input was modified; {info}"
    return results


# ------------------------------------------------------------------ random suites


@pytest.mark.parametrize("seed", range(240))
def test_random_conv(seed):
    rng = np.random.default_rng(seed)
    nsp = 1 + seed % 3
    dtype = DTYPES[(seed // 3) % len(DTYPES)]
    x_layout = X_LAYOUTS[(seed // 15) % len(X_LAYOUTS)]
    case = make_case(rng, nsp=nsp, transposed=False, dtype=dtype, x_layout=x_layout,
                     w_layout=W_LAYOUTS[int(rng.integers(len(W_LAYOUTS)))],
                     b_layout=B_LAYOUTS[int(rng.integers(len(B_LAYOUTS)))])
    check_case(case, use_string=seed % 2 == 1)


@pytest.mark.parametrize("seed", range(150))
def test_random_conv_transpose(seed):
    rng = np.random.default_rng(10_000 + seed)
    nsp = 1 + seed % 3
    dtype = DTYPES[(seed // 3) % len(DTYPES)]
    x_layout = X_LAYOUTS[(seed // 15) % len(X_LAYOUTS)]
    case = make_case(rng, nsp=nsp, transposed=True, dtype=dtype, x_layout=x_layout,
                     w_layout=W_LAYOUTS[int(rng.integers(len(W_LAYOUTS)))],
                     b_layout=B_LAYOUTS[int(rng.integers(len(B_LAYOUTS)))])
    check_case(case, use_string=seed % 2 == 1)


@pytest.mark.parametrize("seed", range(90))
def test_random_depthwise_2d(seed):
    rng = np.random.default_rng(20_000 + seed)
    dtype = [np.float32, np.float64, np.float16][seed % 3]
    case = make_case(rng, nsp=2, transposed=False, dtype=dtype, kind="depthwise",
                     x_layout=X_LAYOUTS[(seed // 3) % len(X_LAYOUTS)],
                     w_layout=W_LAYOUTS[int(rng.integers(len(W_LAYOUTS)))])
    assert Backend.DEPTHWISE in case.required_backends()
    check_case(case, use_string=seed % 2 == 1)


@pytest.mark.parametrize("seed", range(40))
def test_random_winograd_depthwise_3x3(seed):
    rng = np.random.default_rng(30_000 + seed)
    case = make_case(rng, nsp=2, transposed=False, dtype=np.float32, kind="winograd",
                     x_layout=X_LAYOUTS[seed % len(X_LAYOUTS)],
                     w_layout=W_LAYOUTS[(seed // 7) % len(W_LAYOUTS)],
                     padding_kind=["int", "tuple", "same", "valid"][seed % 4])
    assert Backend.WINOGRAD_DEPTHWISE_3X3 in case.required_backends()
    check_case(case, use_string=seed % 2 == 1)


@pytest.mark.parametrize("seed", range(24))
def test_random_depthwise_1d_3d(seed):
    rng = np.random.default_rng(40_000 + seed)
    nsp = 1 if seed % 2 == 0 else 3
    dtype = [np.float32, np.float64, np.float16, np.complex64][(seed // 2) % 4]
    case = make_case(rng, nsp=nsp, transposed=False, dtype=dtype, kind="depthwise",
                     x_layout=X_LAYOUTS[(seed // 2) % len(X_LAYOUTS)])
    backends = case.required_backends()
    # 1-D/3-D depthwise: forced DEPTHWISE too whenever select_backend picks it
    if case.select() == Backend.DEPTHWISE and Backend.DEPTHWISE not in backends:
        backends.append(Backend.DEPTHWISE)
    check_case(case, backends=backends)


@pytest.mark.parametrize("seed", range(12))
def test_random_larger_reduction(seed):
    # longer reductions (C_in/groups * prod(k) in the hundreds to thousands)
    rng = np.random.default_rng(50_000 + seed)
    nsp = 1 + seed % 3
    transposed = seed % 2 == 1
    dtype = [np.float32, np.float64, np.complex64][seed % 3]
    k = {1: (7,), 2: (5, 5), 3: (3, 3, 3)}[nsp]
    cg = {1: 300, 2: 90, 3: 80}[nsp]
    L = {1: (20,), 2: (8, 8), 3: (4, 4, 4)}[nsp]
    x = randn(rng, (2, cg) + L, dtype)
    w = randn(rng, ((cg, 3) if transposed else (3, cg)) + k, dtype)
    b = randn(rng, (3,), dtype)
    case = Case(nsp, transposed, True, x, w, b, 1, (1,) * nsp, (1,) * nsp, (1,) * nsp, (1,) * nsp,
                (0,) * nsp, dict(stride=1, padding=1, dilation=1, groups=1), np.dtype(dtype))
    check_case(case, check_out=False)


# ------------------------------------------------------------------ zero sizes


# Zero sizes are where kernels divide by zero or index out of bounds, so each
# of these runs in a subprocess: a crash then fails one test (with its signal)
# instead of killing the whole run.

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def run_isolated(tmp_path, body, *args):
    """Run ``body(*args)`` (a function of this module) in a fresh interpreter."""
    code = textwrap.dedent(f"""
        import sys, importlib.util
        sys.path.insert(0, {_TESTS_DIR!r})
        spec = importlib.util.spec_from_file_location("_cconv_isolated_tests", {os.path.abspath(__file__)!r})
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        mod.{body}(*{args!r})
        print("ISOLATED-OK")
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    if r.returncode < 0:
        pytest.fail(f"{body}{args} crashed the interpreter (signal {-r.returncode}):\n{r.stderr[-3000:]}")
    assert r.returncode == 0 and "ISOLATED-OK" in r.stdout, f"{body}{args} failed:\n{r.stderr[-5000:]}"


def _zero_batch_body(nsp, transposed):
    for i, dtype in enumerate(DTYPES):
        rng = np.random.default_rng(nsp * 10 + transposed + 100 * i)
        case = make_case(rng, nsp=nsp, transposed=transposed, dtype=dtype, batched=True, bias=True)
        case.x = np.zeros((0,) + case.x.shape[1:], dtype=dtype)
        ref = case.reference()
        assert ref.shape[0] == 0
        assert Backend.EMPTY in case.required_backends()
        check_case(case)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_zero_batch(nsp, transposed, tmp_path):
    # every dtype; forced EMPTY, forced GEMM/GEMM_TRANSPOSE (they run every
    # plain/transposed convolution), the selected backend and the default
    run_isolated(tmp_path, "_zero_batch_body", nsp, transposed)


def _zero_batch_zero_spatial_body(transposed):
    # a zero batch may come with zero spatial sizes (ATen's Empty backend allows it)
    x = np.zeros((0, 2, 0, 5), np.float32)
    if transposed:
        w = np.ones((2, 3, 1, 1), np.float32)
        expect = (0, 3, 0, 5)  # torch: conv_transpose2d -> (0, 3, 0, 5)
    else:
        w = np.ones((3, 2, 1, 1), np.float32)
        expect = (0, 3, 2, 7)  # torch: conv2d(padding=1) -> (0, 3, 2, 7)
    fn = cconv.conv_transpose2d if transposed else cconv.conv2d
    kw = {} if transposed else dict(padding=1)
    for be in (None, Backend.EMPTY):
        y = fn(x, w, np.ones(3, np.float32), backend=be, **kw)
        assert y.shape == expect and y.dtype == np.float32 and type(y) is np.ndarray


@pytest.mark.parametrize("transposed", [False, True])
def test_zero_batch_zero_spatial(transposed, tmp_path):
    run_isolated(tmp_path, "_zero_batch_zero_spatial_body", transposed)


def _zero_input_channels_body(nsp):
    # ATen's Empty backend: zero input channels give (N, 0, *out)
    for dtype, groups in itertools.product([np.float32, np.float64, np.float16, np.complex128], [1, 2]):
        L = (5,) * nsp
        k = (3,) * nsp
        fn = CONV[nsp]
        x = np.zeros((2, 0) + L, dtype)
        w = np.zeros((4, 0) + k, dtype)
        b = np.ones(4, dtype)
        what = f"dtype={np.dtype(dtype).name} groups={groups}"
        y = fn(x, w, None, stride=2, padding=1, groups=groups)
        assert type(y) is np.ndarray, what
        assert y.dtype == dtype, what
        assert y.shape == (2, 0) + (3,) * nsp, what
        y = fn(x, w, b, stride=2, padding=1, groups=groups)
        assert y.shape == (2, 0) + (3,) * nsp and y.dtype == dtype, "with bias; " + what
        y = fn(x, w, None, padding="same", groups=groups)
        assert y.shape == (2, 0) + L, "padding='same'; " + what
        y = fn(x[0], w, b, groups=groups)
        assert y.shape == (0,) + (3,) * nsp and y.dtype == dtype, "unbatched; " + what
        out = np.empty((2, 0) + (3,) * nsp, dtype)
        assert fn(x, w, b, groups=groups, out=out) is out, "out=; " + what


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_zero_input_channels(nsp, tmp_path):
    run_isolated(tmp_path, "_zero_input_channels_body", nsp)


def _zero_batch_fresh_body():
    x = np.zeros((0, 3, 4, 4))
    w = np.ones((2, 3, 3, 3))
    y = cconv.conv2d(x, w)
    assert y.shape == (0, 2, 2, 2) and y.dtype == np.float64 and type(y) is np.ndarray
    out = np.empty((0, 2, 2, 2))
    assert cconv.conv2d(x, w, out=out, backend=Backend.EMPTY) is out
    y = cconv.conv2d(x[0:0, :, :, ::-1], w, backend="empty")
    assert y.shape == (0, 2, 2, 2)


def test_zero_batch_out_and_views(tmp_path):
    run_isolated(tmp_path, "_zero_batch_fresh_body")


# ------------------------------------------------------------------ parameter spellings


PARAM_SPELLINGS = [
    dict(stride=2, padding=1, dilation=2, groups=2),
    dict(stride=(2, 1), padding=(1, 0), dilation=(2, 1), groups=2),
    dict(stride=[2, 1], padding=[1, 0], dilation=[2, 1], groups=2),
    dict(stride=np.int64(2), padding=np.int32(1), dilation=np.int16(2), groups=np.int64(2)),
    dict(stride=(np.int64(2), np.int64(1)), padding=[np.int32(1), 0], dilation=(2, np.uint8(1)), groups=np.int32(2)),
    dict(stride=(2,), padding=[1], dilation=(2,), groups=2),
]


def _minus_one_like(v):
    """v - 1 in the same spelling (int, NumPy int, tuple, list)."""
    if isinstance(v, (tuple, list)):
        return type(v)(type(e)(int(e) - 1) for e in v)
    return type(v)(int(v) - 1)


@pytest.mark.parametrize("spec", range(len(PARAM_SPELLINGS)))
def test_parameter_spellings(spec):
    rng = np.random.default_rng(99)
    x = randn(rng, (2, 4, 9, 8), np.float64)
    w = randn(rng, (6, 2, 3, 2), np.float64)
    b = randn(rng, (6,), np.float64)
    kw = PARAM_SPELLINGS[spec]
    norm = {k: (tuple(int(e) for e in v) * (2 if len(v) == 1 else 1) if isinstance(v, (tuple, list))
                else (int(v),) * 2) for k, v in kw.items() if k != "groups"}
    ref = ref_conv(x, w, b, norm["stride"], norm["padding"], None, norm["dilation"], 2)
    y = cconv.conv2d(x, w, b, **kw)
    assert rel_err(y, ref) <= 1e-12
    # transposed, with output_padding spelled like stride (stride - 1 per dim)
    wt = randn(rng, (4, 3, 3, 2), np.float64)
    op = _minus_one_like(kw["stride"])
    op_norm = tuple(v - 1 for v in norm["stride"])
    ref = ref_conv_transpose(x, wt, b, norm["stride"], norm["padding"], op_norm, 2, norm["dilation"])
    y = cconv.conv_transpose2d(x, wt, b, kw["stride"], kw["padding"], op, kw["groups"], kw["dilation"])
    assert rel_err(y, ref) <= 1e-12


def test_array_likes_are_converted():
    x = [[[1.0, 2.0, 3.0, 4.0]]]
    w = [[[1.0, 0.0, -1.0]]]
    y = cconv.conv1d(x, w)
    assert type(y) is np.ndarray and y.dtype == np.float64
    np.testing.assert_array_equal(y, [[[-2.0, -2.0]]])


def test_torch_style_keyword_names():
    rng = np.random.default_rng(3)
    x = randn(rng, (1, 2, 6), np.float64)
    w = randn(rng, (3, 2, 3), np.float64)
    b = randn(rng, (3,), np.float64)
    y = cconv.conv1d(input=x, weight=w, bias=b, stride=1, padding=1, dilation=1, groups=1)
    assert rel_err(y, ref_conv(x, w, b, 1, 1)) <= 1e-12
    wt = randn(rng, (2, 3, 3), np.float64)
    y = cconv.conv_transpose1d(input=x, weight=wt, bias=b, stride=2, padding=1, output_padding=1,
                               groups=1, dilation=1)
    assert rel_err(y, ref_conv_transpose(x, wt, b, 2, 1, 1, 1, 1)) <= 1e-12


def test_positional_order_matches_torch():
    # conv: (input, weight, bias, stride, padding, dilation, groups)
    # conv_transpose: (input, weight, bias, stride, padding, output_padding, groups, dilation)
    rng = np.random.default_rng(4)
    x = randn(rng, (1, 4, 7, 7), np.float64)
    w = randn(rng, (4, 2, 3, 3), np.float64)
    y = cconv.conv2d(x, w, None, 2, 1, 2, 2)
    assert rel_err(y, ref_conv(x, w, None, 2, 1, None, 2, 2)) <= 1e-12
    y = cconv.conv_transpose2d(x, w, None, 2, 1, 1, 2, 3)
    assert rel_err(y, ref_conv_transpose(x, w, None, 2, 1, 1, 2, 3)) <= 1e-12


# ------------------------------------------------------------------ convolution()


@pytest.mark.parametrize("seed", range(30))
def test_convolution_entry_point(seed):
    rng = np.random.default_rng(60_000 + seed)
    transposed = seed % 2 == 1
    nsp = 1 + (seed // 2) % 3
    dtype = [np.float32, np.float64, np.complex128, np.float16, np.complex64][(seed // 6) % 5]
    case = make_case(rng, nsp=nsp, transposed=transposed, dtype=dtype, batched=True,
                     padding_kind=str(rng.choice(["int", "tuple"])))
    s, p, d = (list(v) for v in (case.stride, case.pad_before, case.dilation))
    if transposed:
        op = list(case.output_padding)
        be = Backend.GEMM_TRANSPOSE
    else:
        op = [int(v) for v in rng.integers(0, 6, nsp)]  # ignored for a plain convolution
        be = Backend.GEMM
    ref = case.reference()
    for backend in (None, be):
        y = cconv.convolution(case.x, case.w, case.b, s, p, d, transposed, op, case.groups,
                              backend=backend)
        assert type(y) is np.ndarray and y.dtype == dtype and y.shape == ref.shape
        assert rel_err(y, ref) <= case.tol()
    out = np.empty(ref.shape, dtype)
    assert cconv.convolution(case.x, case.w, case.b, s, p, d, transposed, op, case.groups, out=out) is out
    assert rel_err(out, ref) <= case.tol()


def test_convolution_plain_ignores_output_padding():
    rng = np.random.default_rng(8)
    x = randn(rng, (2, 4, 6, 6), np.float64)
    w = randn(rng, (4, 4, 3, 3), np.float64)
    ref = ref_conv(x, w, None, 1, 0)
    for op in ([0, 0], [5, 5], [1, 7], 3, (2, 0)):
        y = cconv.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, op, 1)
        assert y.shape == (2, 4, 4, 4)
        assert rel_err(y, ref) <= 1e-12


def test_convolution_transposed_flag_selects_semantics():
    rng = np.random.default_rng(9)
    x = randn(rng, (1, 3, 5), np.float64)
    w = randn(rng, (3, 3, 2), np.float64)
    yp = cconv.convolution(x, w, None, [2], [1], [1], False, [0], 1)
    yt = cconv.convolution(x, w, None, [2], [1], [1], True, [1], 1)
    assert yp.shape == (1, 3, 3) and yt.shape == (1, 3, 9)  # (5-1)*2 - 2*1 + (2-1) + 1 + 1
    assert rel_err(yp, ref_conv(x, w, None, 2, 1)) <= 1e-12
    assert rel_err(yt, ref_conv_transpose(x, w, None, 2, 1, 1)) <= 1e-12


# ------------------------------------------------------------------ out=


def _out_problem():
    rng = np.random.default_rng(11)
    x = randn(rng, (2, 3, 6, 6), np.float32)
    w = randn(rng, (3, 3, 3, 3), np.float32)
    return x, w, ref_conv(x, w, None, 1, 1)


def test_out_returns_out_and_is_written():
    x, w, ref = _out_problem()
    out = np.full(ref.shape, np.nan, np.float32)
    r = cconv.conv2d(x, w, padding=1, out=out)
    assert r is out
    assert rel_err(out, ref) <= 1e-5


def test_out_unbatched():
    x, w, ref = _out_problem()
    out = np.empty(ref.shape[1:], np.float32)
    assert cconv.conv2d(x[0], w, padding=1, out=out) is out
    assert rel_err(out, ref[0]) <= 1e-5


@pytest.mark.parametrize("dtype", [np.float16, np.complex64, np.complex128])
def test_out_converted_dtypes(dtype):
    rng = np.random.default_rng(12)
    x = randn(rng, (2, 3, 7), dtype)
    w = randn(rng, (4, 3, 3), dtype)
    ref = ref_conv(x, w, None, 2, 1)
    out = np.empty(ref.shape, dtype)
    assert cconv.conv1d(x, w, stride=2, padding=1, out=out) is out
    assert rel_err(out, ref) <= tolerance(dtype)
    wt = randn(rng, (3, 2, 3), dtype)
    ref = ref_conv_transpose(x, wt, None, 2, 1, 1)
    out = np.empty(ref.shape, dtype)
    assert cconv.conv_transpose1d(x, wt, stride=2, padding=1, output_padding=1, out=out) is out
    assert rel_err(out, ref) <= tolerance(dtype)


@pytest.mark.parametrize("bad", ["shape", "batched_shape", "dtype", "dtype64", "sliced", "fortran",
                                 "readonly"])
def test_out_rejected(bad):
    x, w, ref = _out_problem()
    if bad == "shape":
        out = np.empty((2, 3, 6, 5), np.float32)
    elif bad == "batched_shape":
        out = np.empty((1,) + ref.shape, np.float32)
    elif bad == "dtype":
        out = np.empty(ref.shape, np.float16)
    elif bad == "dtype64":
        out = np.empty(ref.shape, np.float64)
    elif bad == "sliced":
        out = np.empty(ref.shape[:-1] + (2 * ref.shape[-1],), np.float32)[..., ::2]
    elif bad == "fortran":
        out = np.asfortranarray(np.empty(ref.shape, np.float32))
    elif bad == "readonly":
        out = np.empty(ref.shape, np.float32)
        out.flags.writeable = False
    with pytest.raises(ValueError, match="out"):
        cconv.conv2d(x, w, padding=1, out=out)


def test_out_overlapping_input_rejected():
    x, w, ref = _out_problem()
    assert ref.shape == x.shape
    xc = x.copy()
    with pytest.raises(ValueError, match="out"):
        cconv.conv2d(x, w, padding=1, out=x)
    np.testing.assert_array_equal(x, xc)


def test_out_overlapping_weight_rejected():
    rng = np.random.default_rng(13)
    x = randn(rng, (1, 2, 5), np.float64)
    buf = np.zeros(12 + 6)
    w = buf[:12].reshape(3, 2, 2)
    w[...] = randn(rng, (3, 2, 2), np.float64)
    out = buf[6:18].reshape(1, 3, 4)  # shares 6 elements with w
    with pytest.raises(ValueError, match="out"):
        cconv.conv1d(x, w, out=out)


def test_out_overlapping_bias_rejected():
    rng = np.random.default_rng(14)
    x = randn(rng, (1, 2, 5), np.float64)
    w = randn(rng, (3, 2, 2), np.float64)
    out = np.zeros((1, 3, 4))
    b = out[0, :, 0]
    with pytest.raises(ValueError, match="out"):
        cconv.conv1d(x, w, b, out=out)


def test_out_overlapping_transposed_input_rejected():
    rng = np.random.default_rng(15)
    x = randn(rng, (1, 3, 5), np.float64)
    w = randn(rng, (3, 3, 3), np.float64)
    with pytest.raises(ValueError, match="out"):
        cconv.conv_transpose1d(x, w, padding=1, out=x)


# ------------------------------------------------------------------ backends and dispatch


def test_backend_enum():
    import enum

    assert issubclass(Backend, enum.Enum)
    for name in ["EMPTY", "GEMM", "GEMM_TRANSPOSE", "DEPTHWISE", "WINOGRAD_DEPTHWISE_3X3",
                 "CUDA_GEMM", "CUDA_GEMM_TRANSPOSE", "CUDA_DEPTHWISE"]:
        member = getattr(Backend, name)
        assert isinstance(member.value, str)
        assert Backend(member.value) is member
    assert len({b.value for b in Backend}) == len(Backend)


@pytest.mark.parametrize("seed", range(20))
def test_select_backend_returns_backend(seed):
    rng = np.random.default_rng(70_000 + seed)
    kind = ["general", "depthwise", "winograd", "general"][seed % 4]
    nsp = 2 if kind == "winograd" else 1 + seed % 3
    transposed = kind == "general" and seed % 8 == 3
    dtype = np.float32 if kind == "winograd" else DTYPES[seed % 5]
    case = make_case(rng, nsp=nsp, transposed=transposed, dtype=dtype, kind=kind)
    b = case.select()
    assert isinstance(b, Backend)
    assert not b.name.startswith("CUDA"), "a NumPy problem must not select a CUDA backend"
    b2 = cconv.select_backend(case.x, case.w, case.b, case.kwargs["stride"], case.kwargs["padding"],
                              case.kwargs["dilation"], case.transposed,
                              case.kwargs.get("output_padding", 0), case.kwargs["groups"], False)
    assert b2 is b
    assert isinstance(cconv.select_backend(case.x, case.w, case.b, stride=case.kwargs["stride"],
                                           padding=case.kwargs["padding"],
                                           dilation=case.kwargs["dilation"],
                                           transposed=case.transposed,
                                           output_padding=case.kwargs.get("output_padding", 0),
                                           groups=case.kwargs["groups"], need_backward=True), Backend)


def test_select_backend_defaults():
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    assert isinstance(cconv.select_backend(x, w), Backend)
    assert cconv.select_backend(np.zeros((0, 2, 5, 5), np.float32), w) in set(Backend)


DEPTHWISE_METHODS = (Backend.DEPTHWISE, Backend.DEPTHWISE_PLANE, Backend.DEPTHWISE_CHANNEL_BLOCKS)


@pytest.mark.parametrize("nsp,m,expect", [
    (2, 1, True), (2, 16, True), (2, 24, False), (2, 32, False), (1, 8, True), (3, 1, True),
    (3, 2, False),
])
def test_depthwise_multiplier_dispatch(nsp, m, expect):
    """Automatic dispatch leaves large channel multipliers (and 3-D ones
    above 1) to the grouped GEMM methods, where they measured faster
    (backends/_depthwise_common.auto_ok); DEPTHWISE can still be forced, and
    both agree."""
    rng = np.random.default_rng(m + 10 * nsp)
    x = randn(rng, (1, 4) + (6,) * nsp, np.float64)
    w = randn(rng, (4 * m, 1) + (3,) * nsp, np.float64)
    assert (cconv.select_backend(x, w, groups=4, padding=1) in DEPTHWISE_METHODS) == expect
    f = getattr(cconv, f"conv{nsp}d")
    y = f(x, w, groups=4, padding=1)
    yd = f(x, w, groups=4, padding=1, backend="depthwise")
    assert rel_err(yd, y) <= 1e-12


def _small(dtype=np.float32, nsp=2, c=4, groups=1, m=1, k=3, batch=2):
    rng = np.random.default_rng(0)
    x = randn(rng, (batch, c) + (6,) * nsp, dtype)
    w = randn(rng, (c * m if groups == c else 3, c // groups) + (k,) * nsp, dtype)
    return x, w


# (backend, what the problem is, words one of which its reason must contain).
# Only problems the backend cannot run by its definition: a more capable
# implementation than the documented minimum must still reject these.
INAPPLICABLE = [
    ("DEPTHWISE", "groups1", ("depthwise", "groups", "c_in", "channels")),
    ("WINOGRAD_DEPTHWISE_3X3", "groups1", ("depthwise", "groups", "c_in", "channels")),
    ("WINOGRAD_DEPTHWISE_3X3", "stride2", ("stride",)),
    ("WINOGRAD_DEPTHWISE_3X3", "dilation2", ("dilation", "dilated")),
    ("WINOGRAD_DEPTHWISE_3X3", "kernel5", ("3x3", "kernel", "3 x 3")),
    ("WINOGRAD_DEPTHWISE_3X3", "1d", ("2-d", "2d", "spatial", "dim")),
    ("GEMM", "transposed", ("transpose",)),
    ("GEMM_TRANSPOSE", "plain", ("transpose",)),
    ("EMPTY", "plain", ("empty", "batch", "zero")),
    ("CUDA_GEMM", "plain", ("cuda", "cupy", "gpu", "numpy", "available", "device")),
    ("CUDA_GEMM_TRANSPOSE", "transposed", ("cuda", "cupy", "gpu", "numpy", "available", "device")),
    ("CUDA_DEPTHWISE", "depthwise", ("cuda", "cupy", "gpu", "numpy", "available", "device")),
]


@pytest.mark.parametrize("name,problem,words", INAPPLICABLE, ids=[f"{a}-{b}" for a, b, _ in INAPPLICABLE])
def test_forcing_inapplicable_backend_raises(name, problem, words):
    kw = {}
    fn = cconv.conv2d
    if problem == "groups1":
        x, w = _small()
    elif problem == "transposed":
        x, w = _small(groups=4)
        w = np.ones((4, 1, 3, 3), np.float32)
        fn = cconv.conv_transpose2d
        kw = dict(groups=4)
    elif problem == "stride2":
        x, w = _small(groups=4)
        kw = dict(groups=4, padding=1, stride=2)
    elif problem == "dilation2":
        x, w = _small(groups=4)
        kw = dict(groups=4, padding=1, dilation=2)
    elif problem == "kernel5":
        x, w = _small(groups=4, k=5)
        kw = dict(groups=4, padding=1)
    elif problem == "1d":
        x, w = _small(groups=4, nsp=1)
        kw = dict(groups=4, padding=1)
        fn = cconv.conv1d
    elif problem == "plain":
        x, w = _small()
    elif problem == "depthwise":
        x, w = _small(groups=4)
        kw = dict(groups=4)
    else:
        raise AssertionError(problem)
    member = getattr(Backend, name)
    # the problem itself is fine
    y = fn(x, w, **kw)
    assert y.size > 0
    for arg in (member, member.value):
        with pytest.raises(ValueError) as ei:
            fn(x, w, backend=arg, **kw)
        # the reason, not just the backend's own name, must say why
        msg = str(ei.value).replace(repr(member.value), "").replace(member.name, "")
        msg = re.sub(r"cconv\.backends\.\w+", "", msg).lower()
        assert any(word in msg for word in words), f"reason {msg!r} names none of {words}"


def test_unknown_backend_string():
    x, w = _small()
    with pytest.raises(ValueError, match="backend"):
        cconv.conv2d(x, w, backend="no_such_backend")


# ------------------------------------------------------------------ threads and config


def test_get_num_threads_default():
    n = cconv.get_num_threads()
    assert isinstance(n, int) and n >= 1


@pytest.mark.parametrize("bad", [0, -1, -100])
def test_set_num_threads_rejects_non_positive(bad, restore_threads):
    before = cconv.get_num_threads()
    with pytest.raises(ValueError):
        cconv.set_num_threads(bad)
    assert cconv.get_num_threads() == before


@pytest.mark.parametrize("bad", [1.5, "2", None, [2]])
def test_set_num_threads_rejects_non_integers(bad, restore_threads):
    before = cconv.get_num_threads()
    with pytest.raises(TypeError, match="set_num_threads: n must be an int"):
        cconv.set_num_threads(bad)
    assert cconv.get_num_threads() == before


def test_set_num_threads_takes_numpy_integers(restore_threads):
    cconv.set_num_threads(np.int64(1))
    assert cconv.get_num_threads() == 1


@pytest.mark.parametrize("nthreads", [1, 2])
def test_results_with_thread_counts(nthreads, restore_threads):
    cconv.set_num_threads(nthreads)
    assert cconv.get_num_threads() == nthreads
    rng = np.random.default_rng(80_000 + nthreads)
    # enough batch, groups and channels that the parallel loops split work
    for transposed, kind, dtype in [(False, "general", np.float32), (True, "general", np.float64),
                                    (False, "depthwise", np.float32), (False, "winograd", np.float32),
                                    (False, "general", np.complex64)]:
        case = make_case(rng, nsp=2, transposed=transposed, dtype=dtype, kind=kind, batched=True)
        case.x = randn(rng, (8,) + case.x.shape[1:], dtype)
        check_case(case)


def test_thread_count_env_default(tmp_path):
    code = textwrap.dedent("""
        import cconv
        print(cconv.get_num_threads())
    """)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
    env.pop("OMP_NUM_THREADS")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    ncpu = {os.cpu_count()}
    if hasattr(os, "sched_getaffinity"):
        ncpu.add(len(os.sched_getaffinity(0)))
    assert int(r.stdout.strip()) in ncpu


def test_show_config_prints_version(capsys):
    cconv.show_config()
    text = capsys.readouterr().out
    assert importlib.metadata.version("cconv") in text
    assert len(text.strip().splitlines()) >= 3  # version, BLAS, SIMD, threads, CUDA
    low = text.lower()
    assert "blas" in low and "thread" in low and "cuda" in low


# ------------------------------------------------------------------ vs PyTorch (optional)


@pytest.mark.parametrize("seed", range(100))
def test_against_torch(seed):
    torch = pytest.importorskip("torch", reason="optional differential test against PyTorch")
    F = torch.nn.functional
    rng = np.random.default_rng(90_000 + seed)
    transposed = seed % 3 == 2
    nsp = 1 + seed % 3 if seed % 4 else 2
    padding_kind = ["int", "tuple", "same", "valid"][(seed // 3) % 4]
    case = make_case(rng, nsp=nsp, transposed=transposed, dtype=np.float64,
                     kind="depthwise" if seed % 7 == 0 and not transposed else "general",
                     batched=True, padding_kind=None if transposed else padding_kind)
    s, d, g = case.stride, case.dilation, case.groups
    pad = case.kwargs["padding"]
    pad_t = pad if isinstance(pad, str) else (tuple(int(v) for v in pad) if isinstance(pad, (tuple, list)) else int(pad))
    xt, wt = torch.from_numpy(np.array(case.x)), torch.from_numpy(np.array(case.w))
    bt = None if case.b is None else torch.from_numpy(np.array(case.b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if transposed:
            yt = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nsp - 1](
                xt, wt, bt, s, pad_t, case.output_padding, g, d)
        else:
            yt = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1](xt, wt, bt, s, pad_t, d, g)
    y = case.call()
    assert y.shape == tuple(yt.shape)
    assert rel_err(y, yt.numpy()) <= 1e-10, case.describe()


@pytest.mark.parametrize("nthreads", [2, 3])
@pytest.mark.parametrize("shape,wshape,stride,pad,groups", [
    # (small images, more than 32 output channels, reductions of >= 1024:
    # the im2col method by default)
    ((1, 40, 4, 4, 4), (64, 40, 3, 3, 3), 1, 1, 1),    # one 4x4x4 volume
    ((1, 120, 7, 7), (96, 120, 3, 3), 1, 1, 1),        # a late-ResNet image
    ((1, 240, 9, 5), (80, 120, 3, 3), (2, 1), (1, 0), 2),  # grouped: chunks per group
    ((2, 128, 6, 6), (40, 128, 3, 3), 1, 1, 1),        # two images, still few tiles
    ((8, 128, 5, 5), (128, 128, 3, 3), 1, 1, 1),       # blocks of images share a GEMM
    ((6, 256, 7, 7), (72, 128, 3, 3), 2, 1, 2),        # ... grouped, strided
])
def test_small_images_split_by_output_channels(shape, wshape, stride, pad, groups, nthreads,
                                                restore_threads):
    """Few, small images on several threads: the GEMM backend splits output
    channels, the chunks sharing one im2col made by all threads."""
    cconv.set_num_threads(nthreads)
    rng = np.random.default_rng(sum(shape) + nthreads)
    for dt in (np.float32, np.float64):
        x = rng.standard_normal(shape).astype(dt)
        w = rng.standard_normal(wshape).astype(dt)
        b = rng.standard_normal(wshape[0]).astype(dt)
        f = getattr(cconv, f"conv{len(shape) - 2}d")
        y = f(x, w, b, stride=stride, padding=pad, groups=groups, backend="gemm")
        p = make_params(x.shape, w.shape, b.shape, stride, pad, 1, False, 0, groups, "t", dt)
        assert fwd_method(p, nthreads, x.itemsize) == "im2col"
        ref = ref_conv(x, w, b, stride, pad, None, 1, groups)
        assert rel_err(y, ref) <= (1e-5 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_small_planes_padded_plane_im2col(seed, restore_threads):
    """im2col of whole small images with short output lines goes through a
    zero-padded copy of each plane (src/gemm/im2col.inc): random 1-3-D
    geometries that the GEMM forward runs by im2col (strides leaving input
    rows unread, dilation, padding wider than the kernel reaches, groups),
    forward and grad_weight against the float64 reference, 1-3 threads."""
    rng = np.random.default_rng(900 + seed)
    hit = 0
    while hit < 6:
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 1, 2]))
        cin = g * int(rng.integers(48, 130))
        cout = g * int(rng.integers(36, 72))
        k = tuple(int(v) for v in rng.integers(1, 5, nsp))
        size = tuple(int(v) for v in rng.integers(2, 10 if nsp < 3 else 6, nsp))
        s = tuple(int(v) for v in rng.integers(1, 4, nsp))
        d = tuple(int(v) for v in rng.integers(1, 3, nsp))
        p = tuple(int(v) for v in rng.integers(0, 3, nsp))
        n = int(rng.integers(1, 4))
        out = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
        if min(out) < 1 or out[-1] > 16:
            continue
        dt = np.float64 if hit % 2 else np.float32
        nt = 1 + hit % 3
        cconv.set_num_threads(nt)
        prm = make_params((n, cin) + size, (cout, cin // g) + k, None, s, p, d, False, 0, g,
                          "t", dt)
        if fwd_method(prm, nt, np.dtype(dt).itemsize) != "im2col":
            continue
        hit += 1
        x = rng.standard_normal((n, cin) + size).astype(dt)
        w = rng.standard_normal((cout, cin // g) + k).astype(dt)
        y = cconv.convolution(x, w, None, s, p, d, False, (0,) * nsp, g, backend="gemm")
        tol = 1e-5 if dt == np.float32 else 1e-12
        assert rel_err(y, ref_conv(x, w, None, s, p, None, d, g)) <= tol
        gy = rng.standard_normal(y.shape).astype(dt)
        _, gw, _ = cconv.convolution_backward(gy, x, w, None, s, p, d, False, (0,) * nsp, g,
                                              (False, True, False), backend="gemm")
        from reference import ref_conv_grad_weight
        assert rel_err(gw, ref_conv_grad_weight(x, gy, w.shape, s, p, None, d, g)) <= tol * 10


@pytest.mark.parametrize("seed", range(6))
def test_small_planes_padded_plane_col2im(seed, restore_threads):
    """col2im of whole small images (the transposed forward and the strided
    grad_input of the GEMM backends) adds into a zero-padded plane
    (src/gemm/im2col.inc), stride-2 taps in interleaved pairs: random 1-3-D
    transposed layers with stride 1-3, dilation, padding, output padding
    and groups against the float64 reference, 1-3 threads."""
    rng = np.random.default_rng(700 + seed)
    for it in range(8):
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 2, 4]))
        cin = g * int(rng.integers(1, 12))
        cog = int(rng.integers(1, 12))
        k = tuple(int(v) for v in rng.integers(1, 6, nsp))
        size = tuple(int(v) for v in rng.integers(1, 12 if nsp < 3 else 6, nsp))
        s = tuple(int(v) for v in rng.choice([1, 2, 2, 3], nsp))
        d = tuple(int(v) for v in rng.choice([1, 1, 2], nsp))
        p = tuple(int(min(rng.integers(0, 3), d[i] * (k[i] - 1))) for i in range(nsp))
        op = tuple(int(rng.integers(0, max(s[i], d[i]))) for i in range(nsp))
        out = [(size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1
               for i in range(nsp)]
        if min(out) < 1:
            continue
        dt = np.float64 if it % 2 else np.float32
        cconv.set_num_threads(1 + it % 3)
        n = int(rng.integers(1, 4))
        x = rng.standard_normal((n, cin) + size).astype(dt)
        w = rng.standard_normal((cin, cog) + k).astype(dt)
        b = rng.standard_normal(cog * g).astype(dt)
        y = cconv.convolution(x, w, b, s, p, d, True, op, g, backend="gemm_transpose")
        tol = 1e-5 if dt == np.float32 else 1e-12
        assert rel_err(y, ref_conv_transpose(x, w, b, s, p, op, g, d)) <= tol, (size, k, s, p)


def _transposed_problem(rng, it, nmax, cig, cog, g, size, k):
    """Iteration it of the gather col2im tests: (dtype, tolerance, x, w,
    bias) of a transposed layer, float32 / float64 and 1-3 threads by turns
    (the thread count set here), a bias on two iterations of three, batch
    1 to nmax - 1."""
    dt = np.float64 if it % 2 else np.float32
    tol = 1e-5 if dt == np.float32 else 1e-12
    cconv.set_num_threads(1 + it % 3)
    n = int(rng.integers(1, nmax))
    x = rng.standard_normal((n, cig * g) + size).astype(dt)
    w = rng.standard_normal((cig * g, cog) + k).astype(dt)
    b = rng.standard_normal(cog * g).astype(dt) if it % 3 else None
    return dt, tol, x, w, b


@pytest.mark.parametrize("seed", range(8))
def test_whole_output_gather_col2im(seed, restore_threads):
    """col2im in gather form (src/gemm/col2im_gather.inc): where the adjoint's
    whole output is one column block and its rows (the transposed layer's
    input rows) are longer than 16, each row of the result is formed once,
    bias included, with no pass setting it first.  Random 1-3-D transposed
    layers with stride 1-5 (strides past the kernel leave rows and columns
    only the bias reaches), dilation, padding, output padding and groups,
    and the strided grad_input of plain layers (convolution_backward), 1-3
    threads, against the float64 reference."""
    from reference import ref_conv_grad_input
    rng = np.random.default_rng(900 + seed)
    for it in range(10):
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 2, 4]))
        cig = int(rng.integers(1, 6))
        cog = int(rng.integers(1, 6))
        k = tuple(int(v) for v in rng.integers(1, 6, nsp))
        # the last dim 17-48 (2-D and 3-D: the others small), one block
        size = tuple(int(v) for v in rng.integers(1, 6, nsp - 1)) + (int(rng.integers(17, 49)),)
        s = tuple(int(v) for v in rng.choice([1, 2, 2, 3, 5], nsp))
        d = tuple(int(v) for v in rng.choice([1, 1, 2, 3], nsp))
        p = tuple(int(rng.integers(0, d[i] * (k[i] - 1) + 1)) for i in range(nsp))
        op = tuple(int(rng.integers(0, max(s[i], d[i]))) for i in range(nsp))
        out = [(size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1
               for i in range(nsp)]
        if min(out) < 1:
            continue
        dt, tol, x, w, b = _transposed_problem(rng, it, 4, cig, cog, g, size, k)
        y = cconv.convolution(x, w, b, s, p, d, True, op, g, backend="gemm_transpose")
        assert rel_err(y, ref_conv_transpose(x, w, b, s, p, op, g, d)) <= tol, (size, k, s, p, d)
        if any(op[i] >= s[i] for i in range(nsp)):
            continue  # (then the plain layer y -> x is longer than x)
        # the same adjoint as the grad_input of the plain layer y -> x
        gi, _, _ = cconv.convolution_backward(x, y, w, None, s, p, d, False, (0,) * nsp, g,
                                              (True, False, False), backend="gemm")
        ref = ref_conv_grad_input(x, w, y.shape, s, p, dilation=d, groups=g)
        assert rel_err(gi, ref) <= tol, (size, k, s, p, d)


@pytest.mark.parametrize("seed", range(6))
def test_gather_col2im_taps_that_tile_the_row(seed, restore_threads):
    """The gather col2im's direct path: where the last dimension's taps
    tile the row (kernel = stride, no dilation, padding or output padding
    there: UNet's 2x2 stride-2 layer) a row reached by one pair of outer
    taps is its column rows interleaved, written straight to x with the
    bias.  Random 1-3-D transposed layers of that kind (outer dimensions
    free: overlapping taps there take the summing path row by row), next
    to ones that differ by a padding or an output padding in the last
    dimension (the summing path), 1-3 threads, float32 and float64, with
    and without bias, against the float64 reference."""
    rng = np.random.default_rng(950 + seed)
    for it in range(12):
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 2]))
        cig, cog = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        sl = int(rng.choice([2, 2, 3, 4, 5]))
        ko = tuple(int(v) for v in rng.integers(1, 4, nsp - 1))
        so = tuple(int(v) for v in rng.choice([1, 2, 3], nsp - 1))
        k, s = ko + (sl,), so + (sl,)
        d = (1,) * nsp
        p = tuple(int(rng.integers(0, k[i])) for i in range(nsp - 1)) + (0,)
        op = tuple(int(rng.integers(0, s[i])) for i in range(nsp - 1)) + (0,)
        if it % 4 == 3:  # a neighbour: the last dimension padded or output-padded
            if rng.random() < 0.5:
                p = p[:-1] + (int(rng.integers(1, sl)),)
            else:
                op = op[:-1] + (int(rng.integers(1, sl)),)
        # the last dim 17-48 (the gather form's rows), the others small
        size = tuple(int(v) for v in rng.integers(1, 6, nsp - 1)) + (int(rng.integers(17, 49)),)
        if min((size[i] - 1) * s[i] - 2 * p[i] + k[i] + op[i] for i in range(nsp)) < 1:
            continue
        dt, tol, x, w, b = _transposed_problem(rng, it, 3, cig, cog, g, size, k)
        for be in ("gemm_transpose", None):
            y = cconv.convolution(x, w, b, s, p, d, True, op, g, backend=be)
            ref = ref_conv_transpose(x, w, b, s, p, op, g, d)
            assert rel_err(y, ref) <= tol, (be, size, k, s, p, op)


@pytest.mark.parametrize("seed", range(6))
def test_gemm_over_images_side_by_side(seed, restore_threads):
    """The GEMM backend's blocks of small images: one product over the
    images' columns side by side, which the own GEMM (AVX-512) writes into
    each image's rows of the output with the bias, its micro-tiles that
    straddle two or more images through a buffer.  Random 1-3-D layers
    with output planes of 5-900 positions (a micro-tile of 48 columns over
    several images, or an image's end inside one), 2-9 images, reductions
    of 16-1600 (one to four K blocks: the bias added at the first), 8-200
    output channels a group, 1-2 groups, with and without bias, float32
    and float64, against the float64 reference, and the same bits at 1 and
    2 threads."""
    rng = np.random.default_rng(1700 + seed)
    for it in range(8):
        nsp = int(rng.integers(1, 4))
        g = int(rng.choice([1, 1, 2]))
        k = tuple(int(v) for v in rng.integers(1, 4, nsp))
        s = tuple(int(v) for v in rng.integers(1, 3, nsp))
        kk = int(np.prod(k))
        cig = int(rng.integers(max(1, 16 // kk), max(2, 1600 // kk) + 1))
        cog = int(rng.integers(8, 201))
        # an output plane of 5-900 positions
        target = int(rng.integers(5, 901))
        side = max(1, round(target ** (1.0 / nsp)))
        out = [side] * nsp
        out[-1] = max(1, target // max(1, int(np.prod(out[:-1]))))
        size = tuple((o - 1) * st + kd for o, st, kd in zip(out, s, k))
        n = int(rng.integers(2, 10))
        dt = np.float32 if it % 2 == 0 else np.float64
        x = randn(rng, (n, g * cig) + size, dt)
        w = randn(rng, (g * cog, cig) + k, dt)
        b = randn(rng, (g * cog,), dt) if it % 3 != 2 else None
        ref = ref_conv(x, w, b, s, 0, groups=g)
        tol = tolerance(dt, reduction_length(g * cig, g, k))
        ys = []
        for t in (1, 2):
            cconv.set_num_threads(t)
            y = CONV[nsp](x, w, b, stride=s, groups=g, backend="gemm")
            assert rel_err(y, ref) <= tol, (n, g, cig, cog, size, k, s, dt)
            ys.append(y)
        assert np.array_equal(ys[0], ys[1]), (n, g, cig, cog, size, k, s, dt)


@pytest.mark.parametrize("seed", range(4))
def test_gemm_bias_added_as_the_product_is_stored(seed, restore_threads):
    """One image a GEMM (output planes of 1024 positions and more): the own
    GEMM (AVX-512) adds the bias as it stores its first K block, the other
    blocks then summed onto it.  Random 1x1 layers (gemm_1x1: x read in
    place) and im2col layers (gemm) with reductions of 16-1500 (one to three
    K blocks), 8-300 output channels, with and without bias, float32 and
    float64, 1-3 images: the float64 reference's values, the same bits at 1
    and 2 threads."""
    rng = np.random.default_rng(1800 + seed)
    for it in range(6):
        one = it % 2 == 0
        k = (1, 1) if one else tuple(int(v) for v in rng.integers(2, 4, 2))
        kk = int(np.prod(k))
        cin = int(rng.integers(max(1, 16 // kk), 1500 // kk + 1))
        cout = int(rng.integers(8, 301))
        hw = (int(rng.integers(32, 60)), int(rng.integers(32, 60)))
        size = tuple(h + kd - 1 for h, kd in zip(hw, k))
        n = int(rng.integers(1, 4))
        dt = np.float32 if it % 3 != 1 else np.float64
        x = randn(rng, (n, cin) + size, dt)
        w = randn(rng, (cout, cin) + k, dt)
        b = randn(rng, (cout,), dt) if it != 3 else None
        ref = ref_conv(x, w, b, 1, 0)
        tol = tolerance(dt, reduction_length(cin, 1, k))
        ys = []
        for t in (1, 2):
            cconv.set_num_threads(t)
            y = cconv.conv2d(x, w, b, backend="gemm_1x1" if one else "gemm")
            assert rel_err(y, ref) <= tol, (n, cin, cout, size, k, dt)
            ys.append(y)
        assert np.array_equal(ys[0], ys[1]), (n, cin, cout, size, k, dt)


@pytest.mark.parametrize("seed", range(6))
def test_transposed_taps_stored_where_they_go(seed, restore_threads):
    """Transposed layers whose taps tile the output (stride = kernel, no
    padding, the last dimension's kernel 1 or 2): the own GEMM (AVX-512)
    stores each element of its product where it goes in the output, lines
    copied or pairs of rows interleaved, the bias with the first K block,
    no col buffer.  Random 1-3-D layers sized for the own GEMM (products of
    a million multiply-adds and more: reductions of 16-1100, so one to three
    K blocks; 128-1500 input positions, one to four images side by side or
    one a product), 1-2 groups, with and without bias, float32 and
    float64, and neighbours the rule leaves to col2im (padding, output
    padding, a last kernel of 3), and rows of one position: the float64
    reference's values, the same bits at 1 and 2 threads.  The grad_input of the plain layers of the same
    shapes too (the same adjoint)."""
    rng = np.random.default_rng(1900 + seed)
    for it in range(6):
        nsp = int(rng.integers(2 if it == 4 else 1, 4))
        g = int(rng.choice([1, 1, 2]))
        k = tuple(int(v) for v in rng.integers(1, 3, nsp - 1)) + (int(rng.integers(1, 3)),)
        if nsp == 1 or k[-1] == 1 and all(v == 1 for v in k):
            k = k[:-1] + (2,)
        p = (0,) * nsp
        op = (0,) * nsp
        if it == 5:  # a neighbour the stored form does not take
            which = int(rng.integers(0, 3))
            if which == 0:
                p = p[:-1] + (1,)
            elif which == 1:
                k = k[:-1] + (2,)  # (output padding below the stride)
                op = op[:-1] + (1,)
            else:
                k = k[:-1] + (3,)
        s = k
        kk = int(np.prod(k))
        # the product's reduction, a group (past two K blocks on rows of one)
        cin = int(rng.integers(520, 1100) if it == 4 else rng.integers(16, 401))
        cout = int(rng.integers(max(1, 8 // kk), max(2, 160 // kk) + 1))
        target = int(rng.integers(128, 1501))  # input positions an image
        side = max(1, round(target ** (1.0 / nsp)))
        size = [side] * nsp
        size[-1] = max(1, target // max(1, int(np.prod(size[:-1]))))
        if it == 4 and nsp > 1:  # rows of one position: the element-by-element store
            size[-1] = 1
            size[-2] = max(1, target // max(1, int(np.prod(size[:-2]))))
        size = tuple(size)
        n = int(rng.integers(1, 5))
        dt = np.float32 if it % 2 == 0 else np.float64
        x = randn(rng, (n, g * cin) + size, dt)
        w = randn(rng, (g * cin, cout) + k, dt)
        b = randn(rng, (g * cout,), dt) if it % 3 != 2 else None
        ref = ref_conv_transpose(x, w, b, s, p, op, g)
        tol = tolerance(dt, reduction_length(g * cin, g, k))
        ys, gis = [], []
        for t in (1, 2):
            cconv.set_num_threads(t)
            y = cconv.convolution(x, w, b, s, p, (1,) * nsp, True, op, g, backend="gemm_transpose")
            assert rel_err(y, ref) <= tol, (n, g, cin, cout, size, k, p, op, dt)
            ys.append(y)
            if p == (0,) * nsp and op == (0,) * nsp:
                # the plain layer y -> x of these shapes: its grad_input
                gi = cconv.convolution_backward(x, y, w, None, s, p, (1,) * nsp, False,
                                                (0,) * nsp, g, (True, False, False),
                                                backend="gemm")[0]
                gref = ref_conv_grad_input(x, w, y.shape, s, p, groups=g)
                assert rel_err(gi, gref) <= tol, (n, g, cin, cout, size, k, dt)
                gis.append(gi)
        assert np.array_equal(ys[0], ys[1]), (n, g, cin, cout, size, k, dt)
        if gis:
            assert np.array_equal(gis[0], gis[1]), (n, g, cin, cout, size, k, dt)


@pytest.mark.parametrize("seed", range(6))
def test_nonfinite_weight_depthwise_gives_torch_pattern(seed):
    """A NaN or infinite depthwise weight: NaN and +-inf exactly where
    PyTorch's products put them, padding products (0 * inf = NaN) included.
    The depthwise kernels skipped output rows lying wholly in the padding
    (0 where PyTorch has NaN) and their adjoint spread NaN to outputs that
    no product of the bad tap reaches (a fuzz against torch); such weights
    now run on the GEMM backends.  Plain, transposed and grad_input, 1-3-D,
    channels-last 2-D, every backend that applies."""
    from reference import ref_conv_grad_input
    rng = np.random.default_rng(1300 + seed)
    for it in range(12):
        nsp = int(rng.integers(1, 4))
        c = int(rng.integers(2, 5))
        m = int(rng.integers(1, 3))
        k = tuple(int(v) for v in rng.integers(1, 4, nsp))
        size = tuple(int(v) for v in rng.integers(1, 7, nsp))
        s = tuple(int(v) for v in rng.choice([1, 2], nsp))
        d = tuple(int(v) for v in rng.choice([1, 2], nsp))
        p = tuple(int(rng.integers(0, 3)) for _ in range(nsp))
        dt = np.float64 if it % 2 else np.float32
        transposed = bool(it % 3 == 2)
        x = rng.standard_normal((2, c) + size).astype(dt)
        # (transposed: the plain layer's input has c channels, so multiplier 1)
        w = rng.standard_normal(((c, 1) if transposed else (c * m, 1)) + k).astype(dt)
        w.reshape(-1)[rng.integers(0, w.size)] = rng.choice([np.nan, np.inf, -np.inf])
        with np.errstate(invalid="ignore", over="ignore"):
            if transposed:
                out = [(size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1 for i in range(nsp)]
                if min(out) < 1:
                    continue
                r = ref_conv_transpose(x.astype(np.float64), w.astype(np.float64), None, s, p, 0,
                                       c, d)
            else:
                if any(size[i] + 2 * p[i] < d[i] * (k[i] - 1) + 1 for i in range(nsp)):
                    continue
                r = ref_conv(x.astype(np.float64), w.astype(np.float64), None, s, p, dilation=d,
                             groups=c)
        xs = [x]
        if nsp == 2:
            xs.append(np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2))
        for backend in (None, "depthwise", "gemm_transpose" if transposed else "gemm"):
            for xv in xs:
                y = cconv.convolution(xv, w, None, s, p, d, transposed, (0,) * nsp, c,
                                      backend=backend)
                why = nonfinite_mismatch(y, r)
                assert why is None, (backend, why)
        if transposed:
            continue
        # grad_input: the adjoint of the plain layer
        gy = rng.standard_normal(r.shape).astype(dt)
        with np.errstate(invalid="ignore", over="ignore"):
            rg = ref_conv_grad_input(gy.astype(np.float64), w.astype(np.float64), x.shape, s, p,
                                     dilation=d, groups=c)
        for backend in (None, "depthwise", "gemm"):
            gi, _, _ = cconv.convolution_backward(gy, x, w, None, s, p, d, False, (0,) * nsp, c,
                                                  (True, False, False), backend=backend)
            why = nonfinite_mismatch(gi, rg)
            assert why is None, ("grad_input", backend, why)


def _sprinkle_nonfinite(rng, a, n):
    """n random elements of complex ``a`` get inf, -inf or NaN in the real
    part, the imaginary part or both."""
    f = a.reshape(-1)
    for _ in range(n):
        i = int(rng.integers(f.size))
        v = float(rng.choice([np.inf, -np.inf, np.nan]))
        part = int(rng.integers(3))
        f[i] = complex(v if part != 1 else f[i].real, v if part != 0 else f[i].imag)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_nonfinite_pattern_is_torchs(dtype):
    """Complex results with infinite or NaN inputs, weights or biases have
    PyTorch's NaN/inf pattern, quietly (no NumPy RuntimeWarning from the
    Gauss trick's inf - inf).  PyTorch forms (t1 - t2) + i * (t3 - t1 - t2)
    in complex arithmetic, so a result is NaN + NaNj wherever its imaginary
    part is not finite or its channel's real bias is not (a fuzz against
    torch: conv1d([[[1+1j, inf, 2-1j]]], [[[1+2j, 0.5-1j]]]) gave
    [inf-infj, inf+nanj], torch [nan+nanj, nan+nanj]).  The expected
    pattern is built from the reference's three real convolutions (and
    checked against torch where it is installed); plain and transposed,
    1-D to 3-D, with and without bias."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        torch = None
    rng = np.random.default_rng(11 if dtype == np.complex64 else 12)
    rdt = np.float32 if dtype == np.complex64 else np.float64
    for t in range(60):
        nsp = int(rng.integers(1, 4))
        tr = t % 3 == 2
        cin, cout = (int(v) for v in rng.integers(1, 4, 2))
        k = tuple(int(v) for v in rng.integers(1, 4, nsp))
        size = tuple(int(v) for v in rng.integers(3, 7, nsp))
        pad = 1 if min(k) >= 2 else 0
        x = (rng.standard_normal((2, cin) + size) + 1j * rng.standard_normal((2, cin) + size)).astype(dtype)
        ws = ((cin, cout) if tr else (cout, cin)) + k
        w = (rng.standard_normal(ws) + 1j * rng.standard_normal(ws)).astype(dtype)
        b = (rng.standard_normal(cout) + 1j * rng.standard_normal(cout)).astype(dtype) if t % 2 else None
        target = [x, w, b if b is not None else x][t % 3]
        _sprinkle_nonfinite(rng, target, 2 if target is x else 1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if tr:
                y = cconv.convolution(x, w, b, 1, pad, 1, True, 0, 1)
            else:
                y = cconv.convolution(x, w, b, 1, pad, 1, False, 0, 1)
        x64, w64 = x.astype(np.complex128), w.astype(np.complex128)

        def ref(a, c):
            if tr:
                return ref_conv_transpose(a, c, None, 1, pad, 0, 1, 1)
            return ref_conv(a, c, None, 1, pad)
        with np.errstate(invalid="ignore", over="ignore"):
            t1 = ref(x64.real, w64.real)
            t2 = ref(x64.imag, w64.imag)
            t3 = ref(x64.real + x64.imag, w64.real + w64.imag)
            re, im = t1 - t2, t3 - t1 - t2
            bad = ~np.isfinite(im)
            if b is not None:
                bshape = (1, -1) + (1,) * nsp
                re = re + b.real.astype(np.float64).reshape(bshape)
                im = im + b.imag.astype(np.float64).reshape(bshape)
                bad = ~np.isfinite(im) | ~np.isfinite(b.real.astype(np.float64)).reshape(bshape)
        re[bad] = np.nan
        im[bad] = np.nan
        for part, got, want in (("real", y.real, re), ("imag", y.imag, im)):
            why = nonfinite_mismatch(got, want)
            assert why is None, (t, part, tr, x.shape, w.shape, b is not None, why)
        # (float32: where a non-finite weight meets zero padding, torch's
        # real convolution gives NaN or 0 by its oneDNN implementation)
        if torch is not None and not (target is w and dtype == np.complex64 and pad):
            tb = None if b is None else torch.from_numpy(b)
            tf = getattr(F, f"conv_transpose{nsp}d" if tr else f"conv{nsp}d")
            r = tf(torch.from_numpy(x), torch.from_numpy(w), tb, padding=pad).numpy()
            for part, got, want in (("real", y.real, r.real), ("imag", y.imag, r.imag)):
                why = nonfinite_mismatch(got, want)
                assert why is None, ("torch", t, part, tr, x.shape, w.shape, b is not None, why)


def test_float16_overflow_is_inf_without_a_warning():
    """Results past float16's range are inf, as in PyTorch, with no NumPy
    overflow warning from the float32 -> float16 cast."""
    x = np.full((1, 1, 4), 60000, np.float16)
    w = np.full((1, 1, 1), 2, np.float16)
    xc = np.ascontiguousarray(np.full((1, 4, 4, 3), 60000, np.float16)).transpose(0, 3, 1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isposinf(cconv.conv1d(x, w)).all()
        assert np.isposinf(cconv.conv2d(xc, np.full((2, 3, 1, 1), 2, np.float16))).all()
        out = np.empty((1, 1, 4), np.float16)
        assert np.isposinf(cconv.conv1d(x, w, out=out)).all()
        grads = cconv.convolution_backward(x, x, w, None, 1, 0, 1, False, 0, 1, (True, True, True))
        assert all(np.isposinf(g).all() for g in grads)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    # (x shape, w shape, padding, dilation): stride 1, where the adjoint may
    # run as a forward over a zero-padded input
    ((1, 1, 2), (1, 1, 2), 2, 3),
    ((2, 8, 20, 20), (8, 6, 3, 3), 1, 1),
    ((1, 16, 30, 31), (16, 12, 3, 3), 0, 2),
    ((1, 4, 5, 6, 7), (4, 3, 3, 3, 3), 1, 1),
])
def test_nonfinite_weight_gives_the_direct_pattern(case, dtype):
    """An infinite or NaN weight: NaN only where a real product meets it.
    The forward form of the adjoint multiplied the weight by its zero
    padding (inf * 0 = NaN): a fuzz against torch found
    conv_transpose1d(ones((1, 1, 2)), [[[1, inf]]], padding=2, dilation=3)
    = [[[nan]]], torch [[[0.]]]."""
    xs, ws, pad, dil = case
    rng = np.random.default_rng(len(xs) * 10 + pad)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    if len(xs) == 3:
        x[...] = 1
        w[...] = np.array([1.0, np.inf], dtype).reshape(ws)
    else:
        w.reshape(-1)[rng.integers(0, w.size, 2)] = [np.inf, -np.inf]
        w.reshape(-1)[rng.integers(0, w.size)] = np.nan
    f = {3: cconv.conv_transpose1d, 4: cconv.conv_transpose2d, 5: cconv.conv_transpose3d}[len(xs)]
    y = f(x, w, None, padding=pad, dilation=dil)
    with np.errstate(invalid="ignore", over="ignore"):
        r = ref_conv_transpose(x.astype(np.float64), w.astype(np.float64), None, 1, pad, 0, 1, dil)
    why = nonfinite_mismatch(y, r)
    assert why is None, why
