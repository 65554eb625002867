"""cconv.grad (torch.nn.grad's conv{1,2,3}d_input / conv{1,2,3}d_weight)
against the float64 reference, torch.nn.grad when importable, and
convolution_backward; the input_size that disambiguates strided shapes;
argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import cconv
from cconv import grad
from reference import ref_conv_grad_input, ref_conv_grad_weight, rel_err, tolerance
from test_backward import randn

INPUT = {1: grad.conv1d_input, 2: grad.conv2d_input, 3: grad.conv3d_input}
WEIGHT = {1: grad.conv1d_weight, 2: grad.conv2d_weight, 3: grad.conv3d_weight}
DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]


def _case(rng, nsp):
    g = int(rng.choice([1, 2]))
    cin, cout = g * int(rng.integers(1, 4)), g * int(rng.integers(1, 4))
    k = tuple(int(v) for v in rng.integers(1, 4, nsp))
    s = tuple(int(v) for v in rng.integers(1, 4, nsp))
    d = tuple(int(v) for v in rng.integers(1, 3, nsp))
    p = tuple(int(v) for v in rng.integers(0, 2, nsp))
    size = tuple(max(dd * (kk - 1) + 1, int(rng.integers(1, 9 - 2 * nsp))) + int(rng.integers(0, 3))
                 for dd, kk in zip(d, k))
    n = int(rng.integers(1, 3))
    out = tuple((L + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for L, pp, dd, kk, ss in zip(size, p, d, k, s))
    return dict(x=(n, cin) + size, w=(cout, cin // g) + k, y=(n, cout) + out,
                kw=dict(stride=s, padding=p, dilation=d, groups=g))


def _ref_kw(kw):
    return dict(stride=kw["stride"], pad_before=kw["padding"], dilation=kw["dilation"], groups=kw["groups"])


@pytest.mark.parametrize("seed", range(45))
def test_against_reference(seed):
    nsp = 1 + seed % 3
    dtype = DTYPES[seed % len(DTYPES)]
    rng = np.random.default_rng(90000 + seed)
    c = _case(rng, nsp)
    x, w, gy = randn(rng, c["x"], dtype), randn(rng, c["w"], dtype), randn(rng, c["y"], dtype)
    gi = INPUT[nsp](x.shape, w, gy, **c["kw"])
    gw = WEIGHT[nsp](x, w.shape, gy, **c["kw"])
    up = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    ri = ref_conv_grad_input(gy.astype(up), w.astype(up), x.shape, **_ref_kw(c["kw"]))
    rw = ref_conv_grad_weight(x.astype(up), gy.astype(up), w.shape, **_ref_kw(c["kw"]))
    assert gi.dtype == gw.dtype == np.dtype(dtype)
    assert gi.shape == x.shape and gw.shape == w.shape
    assert rel_err(gi, ri) <= tolerance(dtype)
    assert rel_err(gw, rw) <= tolerance(dtype, gy.size // gy.shape[1])
    # the same as convolution_backward with one output masked in
    bi, bw, _ = cconv.convolution_backward(gy, x, w, None, c["kw"]["stride"], c["kw"]["padding"],
                                           c["kw"]["dilation"], False, 0, c["kw"]["groups"], [True, True, False])
    np.testing.assert_array_equal(gi, bi)
    np.testing.assert_array_equal(gw, bw)


@pytest.mark.parametrize("seed", range(24))
def test_against_torch_nn_grad(seed):
    torch = pytest.importorskip("torch")
    import torch.nn.grad as tg

    nsp = 1 + seed % 3
    rng = np.random.default_rng(91000 + seed)
    c = _case(rng, nsp)
    x, w, gy = (randn(rng, c[k], np.float64) for k in ("x", "w", "y"))
    tkw = {k: (list(v) if isinstance(v, tuple) else v) for k, v in c["kw"].items()}
    ti = getattr(tg, f"conv{nsp}d_input")(torch.Size(x.shape), torch.from_numpy(w), torch.from_numpy(gy), **tkw)
    tw = getattr(tg, f"conv{nsp}d_weight")(torch.from_numpy(x), torch.Size(w.shape), torch.from_numpy(gy), **tkw)
    assert rel_err(INPUT[nsp](torch.Size(x.shape), w, gy, **c["kw"]), ti.numpy()) <= 1e-12
    assert rel_err(WEIGHT[nsp](x, torch.Size(w.shape), gy, **c["kw"]), tw.numpy()) <= 1e-12


@pytest.mark.parametrize("L", [9, 10])
def test_input_size_disambiguates_strided_shapes(L):
    """kernel 3, stride 2: inputs of 9 and 10 both give 4 outputs; input_size
    says which gradient is wanted (the last column of 10 gets none)."""
    rng = np.random.default_rng(L)
    w = randn(rng, (2, 3, 3, 3), np.float64)
    gy = randn(rng, (2, 2, 4, 4), np.float64)
    gi = grad.conv2d_input((2, 3, L, L), w, gy, stride=2)
    assert gi.shape == (2, 3, L, L)
    ref = ref_conv_grad_input(gy, w, (2, 3, L, L), stride=2)
    assert rel_err(gi, ref) <= 1e-12
    if L == 10:
        assert not gi[..., -1].any() and not gi[..., -1, :].any()


@pytest.mark.parametrize("spelling", [tuple, list, np.array])
def test_size_spellings(spelling):
    rng = np.random.default_rng(0)
    w = randn(rng, (4, 3, 3), np.float32)
    gy = randn(rng, (2, 4, 8), np.float32)
    x = randn(rng, (2, 3, 10), np.float32)
    a = grad.conv1d_input(spelling([2, 3, 10]), w, gy)
    b = grad.conv1d_weight(x, spelling([4, 3, 3]), gy)
    assert a.shape == (2, 3, 10) and b.shape == (4, 3, 3)


def test_spatial_only_input_size_rejected():
    """PyTorch 2.13 passes input_size to convolution_backward as is, so a
    size without batch and channels is an error there too."""
    rng = np.random.default_rng(0)
    w = randn(rng, (4, 3, 3, 3), np.float64)
    gy = randn(rng, (2, 4, 6, 6), np.float64)
    with pytest.raises(ValueError, match="input_size"):
        grad.conv2d_input((8, 8), w, gy)
    with pytest.raises(ValueError, match="input_size"):
        grad.conv2d_input((3, 8, 8), w, gy)


@pytest.mark.parametrize("bad, exc", [((2, 3, 8), ValueError), ((2, 3, 8, 8, 8), ValueError),
                                      ((2, 3, -8, 8), ValueError), ((2, 3, 8.0, 8), TypeError),
                                      (8, TypeError), ("2388", TypeError)])
def test_bad_input_size(bad, exc):
    rng = np.random.default_rng(0)
    w = randn(rng, (4, 3, 3, 3), np.float64)
    gy = randn(rng, (2, 4, 6, 6), np.float64)
    with pytest.raises(exc, match="input_size"):
        grad.conv2d_input(bad, w, gy)


@pytest.mark.parametrize("bad", [(4, 3, 3), (4, 3, 3, 3, 3), (4, 2, 3, 3)])
def test_bad_weight_size(bad):
    rng = np.random.default_rng(0)
    x = randn(rng, (2, 3, 8, 8), np.float64)
    gy = randn(rng, (2, 4, 6, 6), np.float64)
    with pytest.raises(ValueError, match="weight"):
        grad.conv2d_weight(x, bad, gy)
    if len(bad) != 4:  # the message describes a weight's size, not an input's
        with pytest.raises(ValueError, match=r"C_out, C_in // groups, \*kernel"):
            grad.conv2d_weight(x, bad, gy)


def test_wrong_grad_output():
    rng = np.random.default_rng(0)
    x = randn(rng, (2, 3, 8, 8), np.float64)
    w = randn(rng, (4, 3, 3, 3), np.float64)
    with pytest.raises(ValueError, match="grad_output"):
        grad.conv2d_input(x.shape, w, np.zeros((2, 4, 5, 6)))
    with pytest.raises(ValueError, match="grad_output"):
        grad.conv2d_weight(x, w.shape, np.zeros((2, 4, 6, 6, 1)))
    with pytest.raises(TypeError, match="grad_output"):
        grad.conv2d_weight(x, w.shape, np.zeros((2, 4, 6, 6), np.float32))


def test_unbatched_rejected():
    rng = np.random.default_rng(0)
    x = randn(rng, (3, 8, 8), np.float64)
    gy = randn(rng, (4, 6, 6), np.float64)
    with pytest.raises(ValueError):
        grad.conv2d_weight(x, (4, 3, 3, 3), gy)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_padding_strings_extension(padding):
    rng = np.random.default_rng(1)
    x = randn(rng, (2, 3, 7, 6), np.float64)
    w = randn(rng, (4, 3, 2, 3), np.float64)
    y = cconv.conv2d(x, w, padding=padding)
    gy = randn(rng, y.shape, np.float64)
    gi = grad.conv2d_input(x.shape, w, gy, padding=padding)
    gw = grad.conv2d_weight(x, w.shape, gy, padding=padding)
    pb, pa = ((0, 1), (1, 1)) if padding == "same" else ((0, 0), (0, 0))
    assert rel_err(gi, ref_conv_grad_input(gy, w, x.shape, pad_before=pb, pad_after=pa)) <= 1e-12
    assert rel_err(gw, ref_conv_grad_weight(x, gy, w.shape, pad_before=pb, pad_after=pa)) <= 1e-12


def test_backend_keyword():
    rng = np.random.default_rng(2)
    x = randn(rng, (2, 3, 8), np.float32)
    w = randn(rng, (4, 3, 3), np.float32)
    gy = randn(rng, (2, 4, 6), np.float32)
    a = grad.conv1d_input(x.shape, w, gy, backend="gemm")
    np.testing.assert_array_equal(a, grad.conv1d_input(x.shape, w, gy))
    with pytest.raises(ValueError, match="backend"):
        grad.conv1d_weight(x, w.shape, gy, backend=cconv.Backend.GEMM_TRANSPOSE)


def test_exports():
    assert cconv.grad is grad
    for name in ("convolution_backward", "convolution_double_backward", "grad"):
        assert name in cconv.__all__ and hasattr(cconv, name)
    assert sorted(grad.__all__) == sorted(f"conv{n}d_{k}" for n in (1, 2, 3) for k in ("input", "weight"))
