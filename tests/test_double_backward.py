"""cconv.convolution_double_backward against a float64 reference composed
from tests/reference.py, central finite differences of
cconv.convolution_backward, and (when importable) torch.autograd's double
backward: random shapes, every combination of ggI/ggW/ggb given or None,
every dtype, forced backends, zero sizes and argument checks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import cconv
from cconv import Backend
from reference import fd_grad, rel_err, tolerance
from test_backward import (  # noqa: F401  (one_thread is a fixture)
    Case,
    one_thread,
    arrays,
    random_case,
    randn,
    reference_forward,
    reference_grads,
)

DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]
PRESENT = list(itertools.product([False, True], repeat=3))   # ggI, ggW, ggb given?


def double_backward(case, ggI, ggW, ggb, gO, w, x, mask=(True, True, True), backend=None):
    return cconv.convolution_double_backward(ggI, ggW, ggb, gO, w, x, *case.args(), list(mask),
                                             backend=backend)


def reference_double(case, ggI, ggW, ggb, gO, w, x):
    """(ggO, gI, gW) from the reference's forward and gradients; None where
    an output cannot be computed."""
    up = lambda a: None if a is None else np.asarray(a).astype(  # noqa: E731
        np.complex128 if np.iscomplexobj(a) else np.float64)
    ggI, ggW, ggb, gO, w, x = map(up, (ggI, ggW, ggb, gO, w, x))
    ggO = None
    if ggI is not None:
        ggO = reference_forward(case, ggI, w)
    if ggW is not None:
        t = reference_forward(case, x, ggW)
        ggO = t if ggO is None else ggO + t
    if ggb is not None:
        t = np.broadcast_to(ggb.reshape((1, -1) + (1,) * case.nsp), case.output_shape())
        ggO = t.copy() if ggO is None else ggO + t
    gI = None if ggW is None else reference_grads(case, x, ggW, gO)[0]
    gW = None if ggI is None else reference_grads(case, ggI, w, gO)[1]
    return ggO, gI, gW


def make(case, rng, dtype, present):
    x, w, gO = arrays(case, rng, dtype)
    ggI = randn(rng, x.shape, dtype) if present[0] else None
    ggW = randn(rng, w.shape, dtype) if present[1] else None
    ggb = randn(rng, (case.c_out,), dtype) if present[2] else None
    return ggI, ggW, ggb, gO, w, x


REF_DOUBLE: dict = {}


def check(case, got, ref, dtype, what=""):
    reds = (case.red_len_input() * 2, case.red_len_input(), case.red_len_weight())
    for name, g, r, red in zip(("ggO", "gI", "gW"), got, ref, reds):
        if r is None:
            assert g is None, f"{what} {name} should be None"
            continue
        assert g is not None, f"{what} {name} is None but can be computed"
        assert g.dtype == np.dtype(dtype) and g.shape == r.shape, f"{what} {name}: {g.dtype} {g.shape}"
        err = rel_err(g, r)
        # ggO sums up to two convolutions: a looser reduction length
        tol = tolerance(dtype, max(red, math.prod(case.kernel) * case.c_in))
        assert err <= tol, f"{what} {name}: relative error {err:.3e} > {tol:.0e} ({case})"
        key = (np.dtype(dtype).name, name)
        REF_DOUBLE[key] = max(REF_DOUBLE.get(key, 0.0), err)


@pytest.mark.parametrize("seed", range(120))
def test_random_against_reference(seed):
    rng = np.random.default_rng(60000 + seed)
    case = random_case(rng)
    dtype = DTYPES[seed % len(DTYPES)]
    present = PRESENT[seed % len(PRESENT)]
    args = make(case, rng, dtype, present)
    ref = reference_double(case, *args)
    check(case, double_backward(case, *args), ref, dtype, what=f"present={present}")
    b = Backend.GEMM_TRANSPOSE if case.transposed else Backend.GEMM
    check(case, double_backward(case, *args, backend=b), ref, dtype, what=f"backend={b}")


@pytest.mark.parametrize("present", PRESENT)
@pytest.mark.parametrize("transposed", [False, True])
def test_none_rules(transposed, present):
    """None only when an output cannot be computed: a gradient of the
    double backward is None exactly when none of the grad-grads it depends
    on is given (as aten::convolution_backward's double backward)."""
    rng = np.random.default_rng(1)
    case = random_case(rng, nsp=2, transposed=transposed)
    ggO, gI, gW = double_backward(case, *make(case, rng, np.float64, present))
    assert (ggO is None) == (not any(present))
    assert (gI is None) == (not present[1])
    assert (gW is None) == (not present[0])


@pytest.mark.parametrize("mask", list(itertools.product([False, True], repeat=3)))
def test_output_mask_drops_nothing(mask):
    """As ATen's _convolution_double_backward: output_mask is checked, not
    used to drop outputs."""
    rng = np.random.default_rng(2)
    case = random_case(rng, nsp=1)
    args = make(case, rng, np.float64, (True, True, True))
    full = double_backward(case, *args)
    got = double_backward(case, *args, mask=mask)
    for g, f in zip(got, full):
        np.testing.assert_array_equal(g, f)


# ------------------------------------------------------------------ finite differences


def _fd_case(rng, nsp, transposed):
    while True:
        c = random_case(rng, nsp=nsp, transposed=transposed)
        if math.prod(c.input_shape()) <= 48 and math.prod(c.weight_shape()) <= 32 \
                and math.prod(c.output_shape()) <= 60:
            return c


FD_DOUBLE: dict = {}


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nsp", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_finite_differences_of_the_backward(seed, nsp, transposed, dtype, one_thread):
    """S(gO, x, w) = Re<ggI, gI> + Re<ggW, gW> + Re<ggb, gb> with (gI, gW, gb)
    = convolution_backward(gO, x, w): ggO = dS/dgO, gI = dS/dx, gW = dS/dw."""
    rng = np.random.default_rng(70000 + 100 * seed + 10 * nsp + transposed)
    case = _fd_case(rng, nsp, transposed)
    ggI, ggW, ggb, gO, w, x = make(case, rng, dtype, (True, True, True))

    def S():
        gi, gw, gb = cconv.convolution_backward(gO, x, w, None, *case.args(), [True, True, True])
        return float(np.real(np.vdot(ggI, gi) + np.vdot(ggW, gw) + np.vdot(ggb, gb)))

    got = double_backward(case, ggI, ggW, ggb, gO, w, x)
    for name, g, a in (("ggO", got[0], gO), ("gI", got[1], x), ("gW", got[2], w)):
        fd = fd_grad(S, a)
        err = rel_err(g, fd)
        key = (np.dtype(dtype).name, name)
        FD_DOUBLE[key] = max(FD_DOUBLE.get(key, 0.0), err)
        assert err < 1e-9, f"{name}: finite-difference relative error {err:.2e} ({case})"


# ------------------------------------------------------------------ torch


def _torch_forward(torch, case, X, W, B):
    F = torch.nn.functional
    stride, padding, dilation, transposed, output_padding, groups = case.args()
    if transposed:
        f = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[case.nsp]
        return f(X, W, B, stride, padding, output_padding, groups, dilation)
    f = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[case.nsp]
    return f(X, W, B, stride, padding, dilation, groups)


@pytest.mark.parametrize("seed", range(60))
def test_against_torch_autograd_double_backward(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(80000 + seed)
    case = random_case(rng)
    dtype = [np.float64, np.complex128, np.float32][seed % 3]
    present = PRESENT[1 + seed % 7]   # at least one given
    ggI, ggW, ggb, gO, w, x = make(case, rng, dtype, present)
    b = randn(rng, (case.c_out,), dtype)
    X, W, B, G = (torch.tensor(a, requires_grad=True) for a in (x, w, b, gO))
    Y = _torch_forward(torch, case, X, W, B)
    gx, gw, gb = torch.autograd.grad(Y, (X, W, B), G, create_graph=True)
    outs, gouts = [], []
    for o, g in zip((gx, gw, gb), (ggI, ggW, ggb)):
        if g is not None:
            outs.append(o)
            gouts.append(torch.tensor(g))
    t = torch.autograd.grad(outs, (G, X, W), gouts, allow_unused=True, materialize_grads=True)
    got = double_backward(case, ggI, ggW, ggb, gO, w, x)
    tol = 1e-12 if np.dtype(dtype) in (np.float64, np.complex128) else 1e-5
    for name, g, r in zip(("ggO", "gI", "gW"), got, t):
        if g is None:   # torch materialises zeros where cconv cannot compute
            assert not r.numpy().any(), name
            continue
        assert rel_err(g, r.detach().numpy()) <= tol * 10, name


# ------------------------------------------------------------------ zero sizes, dtypes


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("transposed", [False, True])
def test_zero_batch_gives_zeros(transposed, dtype):
    rng = np.random.default_rng(3)
    case = random_case(rng, nsp=2, transposed=transposed)
    case = Case(**{**case.__dict__, "batch": 0})
    ggI, ggW, ggb, gO, w, x = make(case, rng, dtype, (True, True, True))
    for backend in (None, Backend.EMPTY, Backend.GEMM_TRANSPOSE if transposed else Backend.GEMM):
        ggO, gI, gW = double_backward(case, ggI, ggW, ggb, gO, w, x, backend=backend)
        assert ggO.shape == gO.shape and gI.shape == x.shape and gW.shape == w.shape
        assert not gW.any() and ggO.dtype == gI.dtype == gW.dtype == np.dtype(dtype)


def test_zero_input_channels():
    x = np.zeros((2, 0, 6, 6))
    w = np.zeros((4, 0, 3, 3))
    gO = np.zeros((2, 0, 4, 4))
    ggO, gI, gW = cconv.convolution_double_backward(np.zeros_like(x), np.zeros_like(w), np.ones(4), gO, w, x,
                                                    1, 0, 1, False, 0, 1, [True] * 3)
    assert ggO.shape == gO.shape and gI.shape == x.shape and gW.shape == w.shape


def test_only_ggb():
    rng = np.random.default_rng(4)
    case = random_case(rng, nsp=3)
    ggI, ggW, ggb, gO, w, x = make(case, rng, np.float32, (False, False, True))
    ggO, gI, gW = double_backward(case, None, None, ggb, gO, w, x)
    np.testing.assert_array_equal(ggO, np.broadcast_to(ggb.reshape((1, -1, 1, 1, 1)), gO.shape))
    assert gI is None and gW is None


# ------------------------------------------------------------------ errors


def _std():
    rng = np.random.default_rng(0)
    x = randn(rng, (2, 3, 8, 8), np.float32)
    w = randn(rng, (4, 3, 3, 3), np.float32)
    gO = randn(rng, (2, 4, 6, 6), np.float32)
    return dict(ggI=np.ones_like(x), ggW=np.ones_like(w), ggb=np.ones(4, np.float32), gO=gO, weight=w, input=x)


def _call(a, output_padding=0, mask=(True, True, True)):
    return cconv.convolution_double_backward(a["ggI"], a["ggW"], a["ggb"], a["gO"], a["weight"], a["input"],
                                             1, 0, 1, False, output_padding, 1, mask)


@pytest.mark.parametrize("name, shape", [
    ("ggI", (2, 3, 8, 7)), ("ggI", (1, 3, 8, 8)), ("ggW", (4, 3, 3, 2)), ("ggW", (4, 3, 3)),
    ("ggb", (5,)), ("ggb", (4, 1)), ("gO", (2, 4, 6, 5)), ("gO", (2, 5, 6, 6)),
])
def test_wrong_shapes(name, shape):
    a = _std()
    a[name] = np.zeros(shape, np.float32)
    with pytest.raises(ValueError, match=name if name != "gO" else "grad_output"):
        _call(a)


@pytest.mark.parametrize("name", ["ggI", "ggW", "ggb", "gO", "weight", "input"])
def test_mismatched_dtypes(name):
    a = _std()
    a[name] = a[name].astype(np.float64)
    with pytest.raises(TypeError, match=name):
        _call(a)


def test_output_mask_checked():
    with pytest.raises(ValueError, match="output_mask"):
        _call(_std(), mask=(True, True))
    with pytest.raises(TypeError, match="output_mask"):
        _call(_std(), mask=(True, "yes", True))


def test_output_padding_on_non_transposed_rejected():
    with pytest.raises(ValueError, match="output_padding"):
        _call(_std(), output_padding=1)


def test_required_arrays():
    a = _std()
    for name in ("gO", "weight", "input"):
        b = dict(a)
        b[name] = None
        with pytest.raises(TypeError, match=name):
            _call(b)


# ------------------------------------------------------------------ determinism, layouts


@pytest.mark.parametrize("transposed", [False, True])
def test_bit_identical_repeats_at_1_and_2_threads(transposed):
    rng = np.random.default_rng(5)
    if transposed:
        case = Case(2, True, 4, 12, 8, 1, (9, 11), (3, 3), (2, 2), (1, 1), (1, 1), (1, 0))
    else:
        case = Case(2, False, 4, 8, 12, 1, (21, 19), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0))
    args = make(case, rng, np.float32, (True, True, True))
    old = cconv.get_num_threads()
    try:
        for nt in (1, 2):
            cconv.set_num_threads(nt)
            first = double_backward(case, *args)
            for _ in range(3):
                for a, b in zip(first, double_backward(case, *args)):
                    assert a.tobytes() == b.tobytes(), f"not bit-identical at {nt} threads"
    finally:
        cconv.set_num_threads(old)


def test_read_only_and_strided_inputs():
    rng = np.random.default_rng(6)
    case = random_case(rng, nsp=2, transposed=False)
    args = make(case, rng, np.float64, (True, True, True))
    base = double_backward(case, *args)
    views = []
    for a in args:
        b = a[..., ::-1].copy()[..., ::-1]
        b.flags.writeable = False
        views.append(b)
    for g, r in zip(double_backward(case, *views), base):
        np.testing.assert_array_equal(g, r)


def test_zz_report(capsys):
    with capsys.disabled():
        if REF_DOUBLE:
            print("\ndouble backward: largest relative error vs the float64 reference:")
            for (d, k), v in sorted(REF_DOUBLE.items()):
                print(f"  {d:10s} {k:4s} {v:.3e}")
        if FD_DOUBLE:
            print("\ndouble backward vs central finite differences of the backward:")
            for (d, k), v in sorted(FD_DOUBLE.items()):
                print(f"  {d:10s} {k:4s} {v:.3e}")
