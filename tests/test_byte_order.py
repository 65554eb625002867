"""Arrays in non-native byte order (big-endian data read from a file, say)
are accepted like any other layout: the result is native and equals the
result for the same values in native order, on every entry point."""
import numpy as np
import pytest

import cconv
import cconv.grad

DTYPES = [np.float32, np.float64, np.float16, np.complex64, np.complex128]


def _swapped(a):
    return a.astype(a.dtype.newbyteorder("S"))


def _arrays(dt, rng):
    def r(*shape):
        a = rng.standard_normal(shape)
        if np.dtype(dt).kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        return a.astype(dt)
    return r(2, 4, 7, 8), r(6, 2, 3, 3), r(6), r(2, 6, 7, 8)


def _same(a, b):
    assert a.dtype == b.dtype and a.dtype.isnative
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("which", ["input", "weight", "bias", "all"])
def test_forward(dt, which):
    rng = np.random.default_rng(3)
    x, w, b, _ = _arrays(dt, rng)
    ref = cconv.conv2d(x, w, b, padding=1, groups=2)
    args = {"input": x, "weight": w, "bias": b}
    for k in args:
        if which in (k, "all"):
            args[k] = _swapped(args[k])
    _same(cconv.conv2d(args["input"], args["weight"], args["bias"], padding=1, groups=2), ref)
    # a second call takes the cached plan
    _same(cconv.conv2d(args["input"], args["weight"], args["bias"], padding=1, groups=2), ref)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_transposed_channels_last_and_backend(dt):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4, 5, 6)).astype(dt)
    wt = rng.standard_normal((4, 3, 3, 3)).astype(dt)
    _same(cconv.conv_transpose2d(_swapped(x), _swapped(wt), stride=2),
          cconv.conv_transpose2d(x, wt, stride=2))
    xcl = rng.standard_normal((2, 5, 6, 16)).astype(dt).transpose(0, 3, 1, 2)
    wd = rng.standard_normal((16, 1, 3, 3)).astype(dt)
    ref = cconv.conv2d(xcl, wd, padding=1, groups=16)
    _same(cconv.conv2d(_swapped(xcl), wd, padding=1, groups=16), ref)
    ran = 0
    backends = [cconv.Backend.GEMM, cconv.Backend.DEPTHWISE]
    if dt == np.float32:  # Winograd computes in float32 only
        backends.append(cconv.Backend.WINOGRAD_DEPTHWISE_3X3)
    for be in backends:
        _same(cconv.conv2d(_swapped(xcl), _swapped(wd), padding=1, groups=16, backend=be),
              cconv.conv2d(xcl, wd, padding=1, groups=16, backend=be))
        ran += 1
    be = cconv.Backend.GEMM_TRANSPOSE
    _same(cconv.conv_transpose2d(_swapped(x), _swapped(wt), stride=2, backend=be),
          cconv.conv_transpose2d(x, wt, stride=2, backend=be))
    assert ran == len(backends)


def test_out_must_be_native():
    x = np.ones((1, 2, 5, 5), np.float32)
    w = np.ones((3, 2, 3, 3), np.float32)
    out = np.empty((1, 3, 3, 3), np.float32)
    assert cconv.conv2d(_swapped(x), w, out=out) is out
    with pytest.raises(ValueError, match="out has dtype"):
        cconv.conv2d(x, w, out=_swapped(out))


@pytest.mark.parametrize("dt", DTYPES)
def test_backward_and_helpers(dt):
    rng = np.random.default_rng(5)
    x, w, b, go = _arrays(dt, rng)
    conf = ((1, 1), (1, 1), (1, 1), False, (0, 0), 2)
    ref = cconv.convolution_backward(go, x, w, [6], *conf, (True, True, True))
    got = cconv.convolution_backward(_swapped(go), _swapped(x), _swapped(w), [6], *conf,
                                     (True, True, True))
    for a, b_ in zip(got, ref):
        _same(a, b_)
    _same(cconv.grad.conv2d_input(x.shape, _swapped(w), _swapped(go), padding=1, groups=2), ref[0])
    _same(cconv.grad.conv2d_weight(_swapped(x), w.shape, _swapped(go), padding=1, groups=2), ref[1])


def test_double_backward():
    rng = np.random.default_rng(6)
    x, w, b, go = _arrays(np.float64, rng)
    ggi, ggw, ggb = rng.standard_normal(x.shape), rng.standard_normal(w.shape), rng.standard_normal(6)
    conf = ((1, 1), (1, 1), (1, 1), False, (0, 0), 2, (True, True, True))
    ref = cconv.convolution_double_backward(ggi, ggw, ggb, go, w, x, *conf)
    got = cconv.convolution_double_backward(*map(_swapped, (ggi, ggw, ggb, go, w, x)), *conf)
    for a, b_ in zip(got, ref):
        _same(a, b_)
