"""Self-tests of tests/reference.py: hand-computed cases, numpy.convolve /
numpy.correlate, adjoint identities, finite differences and (optionally)
PyTorch.  None of these import cconv."""

import itertools

import numpy as np
import pytest

from reference import (
    ref_conv,
    ref_conv_grad_bias,
    ref_conv_grad_input,
    ref_conv_grad_weight,
    ref_conv_out_size,
    ref_conv_transpose,
    ref_conv_transpose_grad_input,
    ref_conv_transpose_grad_weight,
    ref_conv_transpose_out_size,
    reduction_length,
    rel_err,
    same_padding,
    tolerance,
)

# ------------------------------------------------------------ hand-computed


def test_hand_1d_valid():
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]])
    w = np.array([[[1.0, 0.0, -1.0]]])
    np.testing.assert_array_equal(ref_conv(x, w), [[[-2.0, -2.0]]])


def test_hand_1d_padding_bias():
    x = np.array([[[1.0, 2.0, 3.0]]])
    w = np.array([[[1.0, 10.0, 100.0]]])
    # padded: 0 1 2 3 0
    y = ref_conv(x, w, np.array([0.5]), pad_before=1)
    np.testing.assert_array_equal(y, [[[0 + 10 + 200 + 0.5, 1 + 20 + 300 + 0.5, 2 + 30 + 0 + 0.5]]])


def test_hand_1d_asymmetric_padding():
    x = np.array([[[1.0, 2.0, 3.0]]])
    w = np.array([[[1.0, 1.0]]])
    # 'same' for k=2: 0 before, 1 after -> 1 2 3 0
    assert same_padding((2,)) == ((0,), (1,))
    y = ref_conv(x, w, None, 1, *same_padding((2,)))
    np.testing.assert_array_equal(y, [[[3.0, 5.0, 3.0]]])


def test_hand_1d_stride_dilation():
    x = np.arange(10.0).reshape(1, 1, 10)
    w = np.array([[[1.0, -1.0]]])
    # dilation 3: x[i] - x[i+3] = -3, stride 2 over i = 0, 2, 4, 6
    y = ref_conv(x, w, stride=2, dilation=3)
    np.testing.assert_array_equal(y, [[[-3.0, -3.0, -3.0, -3.0]]])
    assert ref_conv_out_size((10,), (2,), 2, 0, 0, 3) == (4,)


def test_hand_2d_box_filter():
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    w = np.ones((1, 1, 2, 2))
    np.testing.assert_array_equal(ref_conv(x, w), [[[[8.0, 12.0], [20.0, 24.0]]]])


def test_hand_2d_orientation():
    # cross-correlation, not convolution: the kernel is not flipped
    x = np.zeros((1, 1, 3, 3))
    x[0, 0, 1, 1] = 1.0
    w = np.arange(1.0, 10.0).reshape(1, 1, 3, 3)
    y = ref_conv(x, w, pad_before=1)
    np.testing.assert_array_equal(y[0, 0], w[0, 0, ::-1, ::-1])


def test_hand_channels_and_groups():
    x = np.array([[[1.0, 2.0], [10.0, 20.0]]])  # N=1, C=2, L=2
    w = np.array([[[1.0]], [[2.0]]])  # groups=2: O=2, C/g=1, k=1
    np.testing.assert_array_equal(ref_conv(x, w, groups=2), [[[1.0, 2.0], [20.0, 40.0]]])
    w1 = np.array([[[1.0], [2.0]]])  # groups=1: sum over channels
    np.testing.assert_array_equal(ref_conv(x, w1), [[[21.0, 42.0]]])


def test_hand_depthwise_multiplier():
    x = np.array([[[1.0, 2.0], [3.0, 4.0]]])  # C=2
    w = np.array([[[1.0]], [[-1.0]], [[2.0]], [[0.5]]])  # groups=2, multiplier 2
    y = ref_conv(x, w, groups=2)
    np.testing.assert_array_equal(y, [[[1.0, 2.0], [-1.0, -2.0], [6.0, 8.0], [1.5, 2.0]]])


def test_hand_3d():
    x = np.arange(8.0).reshape(1, 1, 2, 2, 2)
    w = np.ones((1, 1, 2, 2, 2))
    np.testing.assert_array_equal(ref_conv(x, w), [[[[[28.0]]]]])
    w2 = np.zeros((1, 1, 1, 1, 2))
    w2[..., 1] = 1.0
    np.testing.assert_array_equal(ref_conv(x, w2), x[..., 1:])


def test_hand_transposed_stride():
    x = np.array([[[1.0, 2.0]]])
    w = np.array([[[1.0, 1.0, 1.0]]])
    np.testing.assert_array_equal(ref_conv_transpose(x, w, stride=2), [[[1, 1, 3, 2, 2]]])
    np.testing.assert_array_equal(ref_conv_transpose(x, w, stride=2, padding=1), [[[1, 3, 2]]])
    np.testing.assert_array_equal(
        ref_conv_transpose(x, w, stride=2, padding=1, output_padding=1), [[[1, 3, 2, 2]]])
    np.testing.assert_array_equal(
        ref_conv_transpose(x, w, stride=2, output_padding=1), [[[1, 1, 3, 2, 2, 0]]])
    assert ref_conv_transpose_out_size((2,), (3,), 2, 1, 1) == (4,)


def test_hand_transposed_dilation_output_padding():
    # output_padding may reach up to dilation-1 when stride is 1
    x = np.array([[[1.0, 2.0]]])
    w = np.array([[[1.0, 10.0]]])
    # dilation 3: taps at 0 and 3 -> full length (2-1)+3+1 = 5
    y = ref_conv_transpose(x, w, dilation=3)
    np.testing.assert_array_equal(y, [[[1, 2, 0, 10, 20]]])
    y = ref_conv_transpose(x, w, dilation=3, output_padding=2, padding=1)
    np.testing.assert_array_equal(y, [[[2, 0, 10, 20, 0]]])


def test_hand_transposed_groups_bias():
    x = np.array([[[1.0], [2.0]]])  # C_in=2, L=1
    w = np.array([[[1.0], [3.0]], [[5.0], [7.0]]])  # (C_in=2, C_out/g=2, k=1), groups=2 -> C_out=4
    y = ref_conv_transpose(x, w, np.array([0.0, 1.0, 2.0, 3.0]), groups=2)
    np.testing.assert_array_equal(y, [[[1.0], [4.0], [12.0], [17.0]]])


def test_same_padding_values():
    assert same_padding((3, 4), (1, 1)) == ((1, 1), (1, 2))
    assert same_padding((4,), 3) == ((4,), (5,))
    assert same_padding((1, 1, 1)) == ((0, 0, 0), (0, 0, 0))


def test_complex_forward_not_conjugated():
    x = np.array([[[1j, 2.0]]])
    w = np.array([[[1j]]])
    np.testing.assert_array_equal(ref_conv(x, w), [[[-1.0, 2j]]])
    np.testing.assert_array_equal(ref_conv_transpose(x, w), [[[-1.0, 2j]]])
    # gradients conjugate the *other* operand (autograd's convention)
    g = np.array([[[1.0, 1.0]]])
    np.testing.assert_array_equal(ref_conv_grad_input(g, w, x.shape), [[[-1j, -1j]]])
    np.testing.assert_array_equal(ref_conv_grad_weight(x, g, w.shape), [[[-1j + 2.0]]])
    np.testing.assert_array_equal(ref_conv_grad_bias(np.array([[[1j, 2.0]]])), [2.0 + 1j])


def test_reference_promotes_to_float64():
    x = np.ones((1, 1, 3), np.float32)
    w = np.ones((1, 1, 2), np.float16)
    assert ref_conv(x, w).dtype == np.float64
    assert ref_conv(x.astype(np.complex64), w).dtype == np.complex128
    assert ref_conv_transpose(x, w).dtype == np.float64


def test_reference_does_not_modify_inputs():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 5, 5))
    w = rng.standard_normal((4, 2, 3, 3))
    b = rng.standard_normal(4)
    xc, wc, bc = x.copy(), w.copy(), b.copy()
    ref_conv(x, w, b, 2, 1, 2, 1, 2)
    ref_conv_transpose(x, w, b[:4], 2, 1, 1, 2, 1)
    for a, c in ((x, xc), (w, wc), (b, bc)):
        np.testing.assert_array_equal(a, c)


def test_zero_sizes():
    assert ref_conv(np.zeros((0, 2, 5)), np.zeros((3, 2, 2))).shape == (0, 3, 4)
    assert ref_conv_transpose(np.zeros((0, 2, 5)), np.zeros((2, 3, 2))).shape == (0, 3, 6)
    y = ref_conv(np.ones((2, 0, 5)), np.zeros((3, 0, 2)), np.array([1.0, 2.0, 3.0]))
    assert y.shape == (2, 3, 4)
    np.testing.assert_array_equal(y[:, :, 0], [[1, 2, 3], [1, 2, 3]])


# ------------------------------------------------------------ helpers


def test_rel_err():
    assert rel_err(np.zeros(3), np.zeros(3)) == 0.0
    assert rel_err(np.ones(3), np.zeros(3)) == np.inf
    assert rel_err(np.array([3.0, 4.0]), np.array([3.0, 4.0])) == 0.0
    assert rel_err(np.array([3.0, 4.0 + 1e-3]), np.array([3.0, 4.0])) == pytest.approx(2e-4)
    assert rel_err(np.array([1j]), np.array([1.0])) == pytest.approx(np.sqrt(2))
    assert rel_err(np.array([np.nan]), np.array([1.0])) == np.inf
    with pytest.raises(AssertionError):
        rel_err(np.zeros(3), np.zeros(4))
    # float16 results are measured in float64, not float16
    assert rel_err(np.array([1.0], np.float16), np.array([1.0 + 2.0**-12])) == pytest.approx(2.0**-12 / (1 + 2.0**-12))


def test_tolerance():
    assert tolerance(np.float32) == 1e-5
    assert tolerance(np.float32, 2000) == 1e-5
    assert tolerance(np.float32, 2001) == 1e-4
    assert tolerance(np.complex64, 5000) == 1e-4
    assert tolerance(np.complex64) == 1e-5
    assert tolerance(np.float64, 10**6) == 1e-12
    assert tolerance(np.complex128) == 1e-12
    assert tolerance(np.float16) == 2e-3
    assert reduction_length(8, 2, (3, 3)) == 36
    with pytest.raises(ValueError):
        tolerance(np.int32)


# ------------------------------------------------ numpy.convolve / correlate


@pytest.mark.parametrize("seed", range(12))
def test_1d_against_numpy_correlate(seed):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 20))
    k = int(rng.integers(1, L + 1))
    cplx = seed % 3 == 0
    x = rng.standard_normal(L) + (1j * rng.standard_normal(L) if cplx else 0)
    w = rng.standard_normal(k) + (1j * rng.standard_normal(k) if cplx else 0)
    # numpy.correlate conjugates its second argument; conv does not
    valid = np.correlate(x, np.conj(w), "valid")
    np.testing.assert_allclose(ref_conv(x[None, None], w[None, None])[0, 0], valid, rtol=1e-13, atol=1e-13)
    full = np.correlate(x, np.conj(w), "full")
    np.testing.assert_allclose(ref_conv(x[None, None], w[None, None], pad_before=k - 1)[0, 0], full,
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(full, np.convolve(x, w[::-1]), rtol=1e-13, atol=1e-13)
    # 'same' (PyTorch: extra padding after) for odd kernels equals numpy's 'same'
    pb, pa = same_padding((k,))
    same = ref_conv(x[None, None], w[None, None], None, 1, pb, pa)[0, 0]
    assert same.shape == (L,)
    np.testing.assert_allclose(same, full[k - 1 - pb[0]: k - 1 - pb[0] + L], rtol=1e-13, atol=1e-13)
    if k % 2 == 1 and k <= L:
        np.testing.assert_allclose(same, np.correlate(x, np.conj(w), "same"), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("seed", range(12))
def test_1d_stride_dilation_channels_against_numpy(seed):
    rng = np.random.default_rng(100 + seed)
    N, C, O = int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    k, s, d, p = (int(v) for v in rng.integers(1, 4, 4))
    p -= 1
    L = d * (k - 1) + 1 + int(rng.integers(0, 10))
    x = rng.standard_normal((N, C, L))
    w = rng.standard_normal((O, C, k))
    b = rng.standard_normal(O)
    # dilation = a kernel with zeros inserted; stride = subsampling of the stride-1 result
    wd = np.zeros((O, C, d * (k - 1) + 1))
    wd[:, :, ::d] = w
    xp = np.pad(x, [(0, 0), (0, 0), (p, p)])
    expect = np.empty((N, O, (xp.shape[2] - wd.shape[2]) // s + 1))
    for n in range(N):
        for o in range(O):
            full = sum(np.correlate(xp[n, c], wd[o, c], "valid") for c in range(C))
            expect[n, o] = full[::s] + b[o]
    np.testing.assert_allclose(ref_conv(x, w, b, s, p, None, d), expect, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_1d_transposed_against_numpy_convolve(seed):
    rng = np.random.default_rng(200 + seed)
    L = int(rng.integers(1, 10))
    k, s, d = (int(v) for v in rng.integers(1, 4, 3))
    op = int(rng.integers(0, max(s, d)))
    full_len = (L - 1) * s + d * (k - 1) + 1
    p = int(rng.integers(0, (full_len + op) // 2 + 1))
    x = rng.standard_normal(L)
    w = rng.standard_normal(k)
    up = np.zeros((L - 1) * s + 1)
    up[::s] = x
    wd = np.zeros(d * (k - 1) + 1)
    wd[::d] = w
    full = np.concatenate([np.convolve(up, wd), np.zeros(op)])
    expect = full[p: len(full) - p]
    got = ref_conv_transpose(x[None, None], w[None, None], None, s, p, op, 1, d)[0, 0]
    assert got.shape == expect.shape == ref_conv_transpose_out_size((L,), (k,), s, p, op, d)
    np.testing.assert_allclose(got, expect, rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------ random problems


def _rand(rng, shape, cplx):
    a = rng.standard_normal(shape)
    if cplx:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _random_problem(rng, transposed, cplx=None, small=False):
    nsp = int(rng.integers(1, 4))
    g = int(rng.choice([1, 2, 3]))
    cg, og = (int(v) for v in rng.integers(1, 3, 2))
    N = int(rng.integers(1, 3))
    hi = 3 if small else 4
    k = tuple(int(v) for v in rng.integers(1, hi, nsp))
    s = tuple(int(v) for v in rng.integers(1, hi, nsp))
    d = tuple(int(v) for v in rng.integers(1, 3, nsp))
    if cplx is None:
        cplx = bool(rng.random() < 0.4)
    while True:
        L = tuple(int(v) for v in rng.integers(1, 5 if small else 7, nsp))
        if transposed:
            p = tuple(int(v) for v in rng.integers(0, 3, nsp))
            op = tuple(int(rng.integers(0, max(a, b))) for a, b in zip(s, d))
            out = ref_conv_transpose_out_size(L, k, s, p, op, d)
            if min(out) > 0:
                break
        else:
            pb = tuple(int(v) for v in rng.integers(0, 3, nsp))
            pa = tuple(int(v) for v in rng.integers(0, 3, nsp))
            out = ref_conv_out_size(L, k, s, pb, pa, d)
            if min(out) > 0:
                break
    if transposed:
        x = _rand(rng, (N, g * cg) + L, cplx)
        w = _rand(rng, (g * cg, og) + k, cplx)
        params = dict(stride=s, padding=p, output_padding=op, groups=g, dilation=d)
    else:
        x = _rand(rng, (N, g * cg) + L, cplx)
        w = _rand(rng, (g * og, cg) + k, cplx)
        params = dict(stride=s, pad_before=pb, pad_after=pa, dilation=d, groups=g)
    b = _rand(rng, (g * og,), cplx)
    return x, w, b, params


def _vdot(a, b):
    return np.vdot(np.asarray(a).ravel(), np.asarray(b).ravel())


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_adjoint_identities(seed, transposed):
    rng = np.random.default_rng(1000 + seed + 100 * transposed)
    x, w, b, prm = _random_problem(rng, transposed)
    if transposed:
        fwd, gin, gw = ref_conv_transpose, ref_conv_transpose_grad_input, ref_conv_transpose_grad_weight
    else:
        fwd, gin, gw = ref_conv, ref_conv_grad_input, ref_conv_grad_weight
    y = fwd(x, w, None, **prm)
    g = _rand(rng, y.shape, np.iscomplexobj(x))
    scale = np.linalg.norm(y) * np.linalg.norm(g)
    # <A x, g> == <x, A^H g>
    lhs = _vdot(y, g)
    rhs = _vdot(x, gin(g, w, x.shape, **prm))
    assert abs(lhs - rhs) <= 1e-12 * scale
    # linear in w: <B_x w, g> == <w, B_x^H g>
    rhs = _vdot(w, gw(x, g, w.shape, **prm))
    assert abs(lhs - rhs) <= 1e-12 * scale
    # bias: <1 b, g> == <b, sum g>
    yb = fwd(x, w, b, **prm) - y
    assert abs(_vdot(yb, g) - _vdot(b, ref_conv_grad_bias(g))) <= 1e-12 * np.linalg.norm(yb) * np.linalg.norm(g)
    assert ref_conv_grad_bias(g).shape == b.shape


def test_plain_and_transposed_are_adjoint():
    # conv_transpose(., w) is the x-adjoint of conv(., w) (real case)
    rng = np.random.default_rng(7)
    for nsp in (1, 2, 3):
        x = rng.standard_normal((2, 4) + (7,) * nsp)
        w = rng.standard_normal((6, 2) + (3,) * nsp)
        y = ref_conv(x, w, None, 2, 1, None, 2, 2)
        g = rng.standard_normal(y.shape)
        # conv_transpose with padding 1; output_padding fills what the stride skipped
        op = x.shape[2] - ref_conv_transpose_out_size(y.shape[2:], (3,) * nsp, 2, 1, 0, 2)[0]
        assert 0 <= op < 2
        t = ref_conv_transpose(g, w, None, 2, 1, op, 2, 2)
        np.testing.assert_allclose(t, ref_conv_grad_input(g, w, x.shape, 2, 1, None, 2, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_finite_differences(seed, transposed):
    rng = np.random.default_rng(3000 + seed + 50 * transposed)
    x, w, b, prm = _random_problem(rng, transposed, cplx=seed % 2 == 1, small=True)
    if transposed:
        fwd, gin, gw = ref_conv_transpose, ref_conv_transpose_grad_input, ref_conv_transpose_grad_weight
    else:
        fwd, gin, gw = ref_conv, ref_conv_grad_input, ref_conv_grad_weight
    cplx = np.iscomplexobj(x)
    y = fwd(x, w, b, **prm)
    g = _rand(rng, y.shape, cplx)

    def loss(xx, ww, bb):
        # real loss; autograd's gradient of it is dL/dRe + i dL/dIm
        return np.real(_vdot(g, fwd(xx, ww, bb, **prm)))

    h = 1e-6

    def fd(which):
        args = [x, w, b]
        base = args[which]
        grad = np.zeros(base.shape, dtype=base.dtype)
        parts = (1.0, 1j) if cplx else (1.0,)
        for idx in np.ndindex(base.shape):
            for unit in parts:
                plus = base.copy()
                minus = base.copy()
                plus[idx] += unit * h
                minus[idx] -= unit * h
                a = list(args)
                a[which] = plus
                lp = loss(*a)
                a[which] = minus
                lm = loss(*a)
                grad[idx] += unit * (lp - lm) / (2 * h)
        return grad

    tol = 1e-6
    assert rel_err(gin(g, w, x.shape, **prm), fd(0)) < tol
    assert rel_err(gw(x, g, w.shape, **prm), fd(1)) < tol
    assert rel_err(ref_conv_grad_bias(g), fd(2)) < tol


# ------------------------------------------------------------ vs PyTorch


@pytest.mark.parametrize("transposed", [False, True])
def test_reference_against_torch(transposed):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(4242 + transposed)
    for _ in range(60):
        x, w, b, prm = _random_problem(rng, transposed)
        nsp = x.ndim - 2
        xt = torch.tensor(x, requires_grad=True)
        wt = torch.tensor(w, requires_grad=True)
        bt = torch.tensor(b, requires_grad=True)
        if transposed:
            fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nsp - 1]
            yt = fn(xt, wt, bt, prm["stride"], prm["padding"], prm["output_padding"], prm["groups"], prm["dilation"])
            y = ref_conv_transpose(x, w, b, **prm)
            gin, gw = ref_conv_transpose_grad_input, ref_conv_transpose_grad_weight
        else:
            fn = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]
            # torch takes symmetric padding only: pad asymmetrically by hand
            pads = []
            for bef, aft in zip(reversed(prm["pad_before"]), reversed(prm["pad_after"])):
                pads += [bef, aft]
            yt = fn(F.pad(xt, pads), wt, bt, prm["stride"], 0, prm["dilation"], prm["groups"])
            y = ref_conv(x, w, b, **prm)
            gin, gw = ref_conv_grad_input, ref_conv_grad_weight
        assert rel_err(y, yt.detach().numpy()) < 1e-12
        g = _rand(rng, y.shape, np.iscomplexobj(x))
        yt.backward(torch.tensor(g))
        assert rel_err(gin(g, w, x.shape, **prm), xt.grad.numpy()) < 1e-12
        assert rel_err(gw(x, g, w.shape, **prm), wt.grad.numpy()) < 1e-12
        assert rel_err(ref_conv_grad_bias(g), bt.grad.numpy()) < 1e-12


def test_reference_same_padding_against_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(77)
    for nsp, k, d in itertools.product((1, 2, 3), (1, 2, 3, 4), (1, 2)):
        L = (int(rng.integers(1, 6)),) * nsp
        x = rng.standard_normal((2, 3) + L)
        w = rng.standard_normal((2, 3) + (k,) * nsp)
        fn = (F.conv1d, F.conv2d, F.conv3d)[nsp - 1]
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            yt = fn(torch.tensor(x), torch.tensor(w), None, 1, "same", d).numpy()
        pb, pa = same_padding(w.shape[2:], d)
        y = ref_conv(x, w, None, 1, pb, pa, d)
        assert y.shape == x.shape[:1] + (2,) + L
        assert rel_err(y, yt) < 1e-12


def test_transposed_flag_of_generic_gradients():
    rng = np.random.default_rng(31)
    x = rng.standard_normal((2, 4, 5, 4)) + 1j * rng.standard_normal((2, 4, 5, 4))
    w = rng.standard_normal((4, 3, 3, 2)) + 1j * rng.standard_normal((4, 3, 3, 2))
    prm = dict(stride=(2, 1), padding=1, output_padding=(1, 0), groups=2, dilation=(1, 2))
    g = rng.standard_normal(ref_conv_transpose(x, w, None, **prm).shape)
    gi = ref_conv_grad_input(g, w, x.shape, (2, 1), 1, None, (1, 2), 2, transposed=True, output_padding=(1, 0))
    np.testing.assert_array_equal(gi, ref_conv_transpose_grad_input(g, w, x.shape, **prm))
    gw = ref_conv_grad_weight(x, g, w.shape, (2, 1), 1, 1, (1, 2), 2, transposed=True, output_padding=(1, 0))
    np.testing.assert_array_equal(gw, ref_conv_transpose_grad_weight(x, g, w.shape, **prm))
    with pytest.raises(ValueError):
        ref_conv_grad_input(g, w, x.shape, 1, 1, 2, transposed=True)


def test_nonfinite_mismatch_names_the_class_that_differs():
    """The shared NaN/inf pattern check passes equal patterns (whatever the
    finite values) and names the class, the counts and a place otherwise."""
    from reference import nonfinite_mismatch

    ref = np.array([[1.0, np.nan], [np.inf, -np.inf]])
    assert nonfinite_mismatch(ref.copy(), ref) is None
    assert nonfinite_mismatch(ref + [[5.0, 0], [0, 0]], ref) is None  # finite values not compared
    got = ref.copy()
    got[0, 0] = np.nan
    why = nonfinite_mismatch(got, ref)
    assert why.startswith("NaN at 2 places, the reference at 1") and "[0, 0]" in why
    got = ref.copy()
    got[1, 1] = np.inf
    assert nonfinite_mismatch(got, ref).startswith("+inf at 2 places, the reference at 1")
    got = ref.copy()
    got[1, 0] = 0.0
    assert nonfinite_mismatch(got, ref).startswith("+inf at 0 places")
    assert nonfinite_mismatch(ref[:1], ref).startswith("shape mismatch")
