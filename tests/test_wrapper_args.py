"""The array arguments of the kernel wrappers (cconv._kernels, _depthwise,
_winograd, _nhwc; read through NumPy's C API by cconv/_arrays.pxd).

Every wrapper takes C-contiguous float32/float64 arrays of the sizes its
geometry gives; anything else is a TypeError (not an array, another dtype)
or a ValueError naming the argument (size, layout, read-only output), and
never reaches the C kernels.  A correct call still computes the convolution
(checked against a float64 NumPy loop)."""
from __future__ import annotations

import numpy as np
import pytest

from cconv import _depthwise, _kernels, _nhwc, _winograd
from cconv._config import workspace
from cconv._params import make_params


def _geom(x_shape, w_shape, groups=1, stride=1, padding=1):
    return make_params(x_shape, w_shape, None, stride, padding, 1, False, 0, groups, "t").geom()


def _ref(x, w, b, groups, padding):
    """float64 2-D cross-correlation, stride 1."""
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh, ow = h + 2 * padding - kh + 1, wd + 2 * padding - kw + 1
    y = np.zeros((n, co, oh, ow))
    cog = co // groups
    for o in range(co):
        gi = o // cog
        for ci in range(cig):
            for i in range(kh):
                for j in range(kw):
                    y[:, o] += w[o, ci, i, j] * xp[:, gi * cig + ci, i:i + oh, j:j + ow]
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def _problem(dtype, x_shape, w_shape, groups, seed):
    """x, w, b (random), y (the stride-1, padding-1 output, unset) and the
    geometry of a 2-D convolution."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype)
    y = np.empty((x_shape[0], w_shape[0]) + tuple(x_shape[2:]), dtype)
    return x, w, b, y, _geom(x_shape, w_shape, groups=groups)


def _bad_variants(a):
    """(label, replacement, error type, message part) for one array argument."""
    return [
        ("list", a.tolist(), TypeError, "numpy.ndarray"),
        ("dtype", a.astype(np.float16), TypeError, "float16"),
        ("short", a[:-1].copy(), ValueError, "expected"),
        ("strided", np.repeat(a, 2)[::2], ValueError, "C-contiguous"),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_depthwise_wrappers_check_every_array(dtype):
    x, w, b, y, g = _problem(dtype, (2, 3, 6, 5), (3, 1, 3, 3), 3, seed=0)
    _depthwise.fwd("rows", g, x.reshape(-1), w.reshape(-1), b, y.reshape(-1), 1)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, _ref(x, w, b, 3, 1), rtol=tol, atol=tol)
    # any C-contiguous shape of the right size is read as the flat array
    y2 = np.empty_like(y)
    _depthwise.fwd("rows", g, x, w, b, y2, 1)
    assert np.array_equal(y, y2)

    args = {"x": x.reshape(-1), "w": w.reshape(-1), "b": b, "y": y.reshape(-1)}
    for name in args:
        for label, bad, err, msg in _bad_variants(args[name]):
            if name == "x" and err is TypeError:
                msg = "float32 or float64" if label == "dtype" else msg  # x sets the dtype
            a = dict(args, **{name: bad})
            with pytest.raises(err, match=msg):
                _depthwise.fwd("rows", g, a["x"], a["w"], a["b"], a["y"], 1)
    # mixed dtypes name the argument that differs from x
    other = np.float64 if dtype == np.float32 else np.float32
    with pytest.raises(TypeError, match="w: expected"):
        _depthwise.fwd("rows", g, x.reshape(-1), w.reshape(-1).astype(other), b, y.reshape(-1), 1)
    # a read-only output
    ro = y.reshape(-1).copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="y: the array is read-only"):
        _depthwise.fwd("rows", g, x.reshape(-1), w.reshape(-1), b, ro, 1)
    # a required array missing
    with pytest.raises(ValueError, match="w: an array is required"):
        _depthwise.fwd("rows", g, x.reshape(-1), None, b, y.reshape(-1), 1)
    # adj and wgrad check theirs too
    with pytest.raises(ValueError, match="x: expected"):
        _depthwise.adj(g, y.reshape(-1), w.reshape(-1), None, x.reshape(-1)[:-1].copy(), 1)
    with pytest.raises(ValueError, match="gw: the array is read-only"):
        gw = np.zeros(27, dtype)
        gw.flags.writeable = False
        _depthwise.wgrad(g, x.reshape(-1), y.reshape(-1), gw, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_wrappers_check_every_array(dtype):
    x, w, b, y, g = _problem(dtype, (2, 4, 5, 5), (6, 2, 3, 3), 2, seed=1)
    ws = workspace(_kernels.workspace_bytes("fwd", "im2col", g, 1, np.dtype(dtype).itemsize))
    _kernels.conv_fwd("im2col", g, x.reshape(-1), w.reshape(-1), b, y.reshape(-1), ws, 1)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, _ref(x, w, b, 2, 1), rtol=tol, atol=tol)

    args = {"x": x.reshape(-1), "w": w.reshape(-1), "b": b, "y": y.reshape(-1)}
    for name in args:
        for label, bad, err, msg in _bad_variants(args[name]):
            if name == "x" and label == "dtype":
                msg = "float32 or float64"
            a = dict(args, **{name: bad})
            with pytest.raises(err, match=msg):
                _kernels.conv_fwd("im2col", g, a["x"], a["w"], a["b"], a["y"], ws, 1)
    with pytest.raises(TypeError, match="ws: expected"):
        _kernels.conv_fwd("im2col", g, x.reshape(-1), w.reshape(-1), b, y.reshape(-1), np.zeros(8), 1)
    # the adjoint reads y-sized and writes x-sized arrays, bias over c_in
    gx = np.empty(x.size, dtype)
    wsa = workspace(_kernels.workspace_bytes("adj", "im2col", g, 1, np.dtype(dtype).itemsize))
    with pytest.raises(ValueError, match="b: expected 4"):
        _kernels.conv_adj("im2col", g, y.reshape(-1), w.reshape(-1), b, gx, wsa, 1)
    with pytest.raises(ValueError, match="x: expected"):
        _kernels.conv_adj("im2col", g, y.reshape(-1), w.reshape(-1), None, gx[:-1].copy(), wsa, 1)
    wsw = workspace(_kernels.workspace_bytes("wgrad", "im2col", g, 1, np.dtype(dtype).itemsize))
    with pytest.raises(ValueError, match="gw: expected"):
        _kernels.conv_wgrad("im2col", g, x.reshape(-1), y.reshape(-1), np.zeros(w.size + 1, dtype), wsw, 1)
    gb = np.empty(6, dtype)
    _kernels.bias_grad(2, 6, 25, y.reshape(-1), gb, 1)
    np.testing.assert_allclose(gb, y.astype(np.float64).sum(axis=(0, 2, 3)), rtol=tol * 10)
    with pytest.raises(ValueError, match="gy: expected"):
        _kernels.bias_grad(2, 6, 24, y.reshape(-1), gb, 1)
    with pytest.raises(ValueError, match="negative"):
        _kernels.bias_grad(-2, 6, 25, y.reshape(-1), gb, 1)


def test_winograd_and_nhwc_wrappers_check_their_arrays():
    x = np.zeros(50, np.float32)
    w = np.zeros(18, np.float32)
    g = _geom((1, 2, 5, 5), (2, 1, 3, 3), groups=2)
    y = np.zeros(50, np.float32)
    with pytest.raises(TypeError, match="x: expected a float32"):
        _winograd.fwd(g, x.astype(np.float64), w, None, y, 1)
    with pytest.raises(ValueError, match="C-contiguous"):
        _winograd.fwd(g, x, w, None, np.zeros(100, np.float32)[::2], 1)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        _winograd.filter_transform(list(range(9)), np.zeros(16, np.float32))

    xc = np.zeros(1 * 5 * 5 * 4, np.float32)      # channels-last (1, 5, 5, 4)
    w2 = np.ones(6 * 4 * 9, np.float32)
    g2 = _geom((1, 4, 5, 5), (6, 4, 3, 3))
    y2 = np.zeros(6 * 25, np.float32)
    ws = workspace(_nhwc.fwd_workspace_bytes(g2, 1, 4))
    _nhwc.fwd(g2, xc, w2, None, y2, 0, ws, 1)
    with pytest.raises(ValueError, match="w: expected"):
        _nhwc.fwd(g2, xc, w2[:-1].copy(), None, y2, 0, ws, 1)
    with pytest.raises(TypeError, match="y: expected"):
        _nhwc.fwd(g2, xc, w2, None, y2.astype(np.float64), 0, ws, 1)


def _unaligned(shape, dtype, rng):
    """A C-contiguous array whose data sits one byte past an aligned address."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.zeros(n + 1, np.uint8)
    a = np.frombuffer(buf[1:].data, dtype=dtype).reshape(shape)
    a[...] = rng.standard_normal(shape)
    assert not a.flags.aligned
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["plain", "depthwise", "transposed", "channels_last", "unbatched"])
def test_unaligned_arrays_are_copied_not_rejected(dtype, layout):
    """An array whose data is not aligned to its dtype (np.frombuffer at an
    odd offset) is valid NumPy: the public API copies it before any kernel
    reads it, and an unaligned ``out=`` receives the result."""
    import cconv

    rng = np.random.default_rng(7)
    groups = 3 if layout == "depthwise" else 1
    xs = (2, 3, 7, 6)
    ws = {"depthwise": (3, 1, 3, 3), "transposed": (3, 4, 3, 3)}.get(layout, (4, 3, 3, 3))
    if layout == "channels_last":
        x = _unaligned((2, 7, 6, 3), dtype, rng).transpose(0, 3, 1, 2)
    elif layout == "unbatched":
        x = _unaligned(xs[1:], dtype, rng)
    else:
        x = _unaligned(xs, dtype, rng)
    w = _unaligned(ws, dtype, rng)
    b = _unaligned((4 if layout != "depthwise" else 3,), dtype, rng)
    f = cconv.conv_transpose2d if layout == "transposed" else cconv.conv2d
    kw = dict(padding=1) if layout == "transposed" else dict(padding=1, groups=groups)
    want = f(np.array(x), np.array(w), np.array(b), **kw)   # aligned copies
    got = f(x, w, b, **kw)
    np.testing.assert_array_equal(got, want)
    assert got.strides == want.strides  # a channels-last input keeps a channels-last result
    out = _unaligned(want.shape, dtype, rng)
    assert f(x, w, b, out=out, **kw) is out
    np.testing.assert_array_equal(out, want)
    if layout in ("plain", "depthwise"):
        gy = _unaligned(want.shape, dtype, rng)
        g1 = cconv.convolution_backward(gy, x, w, [b.size], 1, 1, 1, False, 0, groups,
                                        (True, True, True))
        g2 = cconv.convolution_backward(np.array(gy), np.array(x), np.array(w), [b.size], 1, 1, 1,
                                        False, 0, groups, (True, True, True))
        for a, c in zip(g1, g2):
            np.testing.assert_array_equal(a, c)
