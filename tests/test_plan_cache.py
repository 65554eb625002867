"""The per-call caches of the Python entry (cconv/_args._plans, the
method choice in cconv/_dispatch.select): a cached call must behave exactly
as an uncached one, for every spelling of an argument, and errors are never
cached."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import cconv
from cconv import _args, _autotune, _dispatch

from reference import ref_conv


@pytest.fixture(autouse=True)
def fresh_caches():
    # benchmark-mode winners from earlier tests would take the plan's
    # short path away (tuned choices win over the cached select())
    _autotune.clear()
    _args._plans.clear()
    _dispatch._choice.clear()
    yield
    _args._plans.clear()
    _dispatch._choice.clear()


def arrays(dtype=np.float64, shape=(2, 4, 9, 8), wshape=(6, 4, 3, 3)):
    rng = np.random.default_rng(0)
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(wshape).astype(dtype)


@pytest.mark.parametrize("spelling", [1, (1, 1), [1, 1], np.int64(1), (np.int32(1), 1), [1]])
def test_spellings_agree_after_caching(spelling):
    x, w = arrays()
    ref = ref_conv(x, w, None, stride=1, pad_before=1)
    for _ in range(2):  # the second call may come from the cache
        np.testing.assert_allclose(cconv.conv2d(x, w, stride=1, padding=1), ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cconv.conv2d(x, w, stride=spelling, padding=spelling), ref,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [True, (True, 1), 1.0, (1.0, 1), "1"])
def test_bad_spelling_raises_after_good_call_is_cached(bad):
    x, w = arrays()
    cconv.conv2d(x, w, stride=1)
    cconv.conv2d(x, w, stride=1)
    with pytest.raises(TypeError, match="stride"):
        cconv.conv2d(x, w, stride=bad)


def test_errors_are_not_cached():
    x, w = arrays()
    for _ in range(3):
        with pytest.raises(ValueError, match="channels"):
            cconv.conv2d(x, w[:, :3])
    assert not _args._plans


def test_dtype_shape_bias_and_backend_are_part_of_the_key():
    x, w = arrays()
    b = np.ones(6)
    y0 = cconv.conv2d(x, w)
    yb = cconv.conv2d(x, w, b)
    np.testing.assert_allclose(yb, y0 + 1, rtol=1e-12, atol=1e-12)
    y32 = cconv.conv2d(x.astype(np.float32), w.astype(np.float32))
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32, y0, rtol=1e-5, atol=1e-5)
    y2 = cconv.conv2d(x[:1], w)
    assert y2.shape == (1,) + y0.shape[1:]
    yu = cconv.conv2d(x[0], w)  # unbatched: same arrays' shapes differ
    assert yu.shape == y0.shape[1:]
    np.testing.assert_allclose(yu, y0[0], rtol=1e-12, atol=1e-12)
    # a forced backend that cannot run the problem still raises when cached
    cconv.conv2d(x, w, backend="gemm")
    with pytest.raises(ValueError, match="DEPTHWISE|depthwise"):
        cconv.conv2d(x, w, backend="depthwise")
    with pytest.raises(ValueError, match="DEPTHWISE|depthwise"):
        cconv.conv2d(x, w, backend="depthwise")


def test_mixed_types_still_rejected_after_caching():
    x, w = arrays()
    cconv.conv2d(x, w)
    with pytest.raises(TypeError):
        cconv.conv2d(x, w.astype(np.float32))
    with pytest.raises(TypeError):
        cconv.conv2d(x.tolist(), w, bias=np.ones(6, np.float32))


def test_cache_is_bounded():
    x, w = arrays(shape=(1, 4, 9, 8))
    for n in range(_args._PLANS_MAX + 10):
        cconv.conv1d(np.zeros((1, 1, 3 + n)), np.ones((1, 1, 3)))
    assert len(_args._plans) <= _args._PLANS_MAX


# ---- the backward's plan cache (cconv/_backward._plans) ----------------------

def _bwd(gy, x, w, bias_sizes=(6,), stride=1, padding=1, transposed=False, groups=1):
    return cconv.convolution_backward(gy, x, w, bias_sizes, stride, padding, 1, transposed, 0,
                                      groups, (True, True, True))


def test_backward_spellings_agree_after_caching():
    from cconv import _backward

    _backward._plans.clear()
    x, w = arrays()
    gy = np.random.default_rng(1).standard_normal((2, 6, 9, 8))
    ref = _bwd(gy, x, w)
    spellings = [dict(bias_sizes=[6]), dict(bias_sizes=None), dict(stride=(1, 1)),
                 dict(padding=[1, 1]), dict(padding=np.int64(1)), dict(transposed=0),
                 dict(transposed=np.bool_(False))]
    for kw in spellings:
        for _ in range(2):
            got = _bwd(gy, x, w, **kw)
            for a, b in zip(got, ref):
                np.testing.assert_array_equal(a, b)
    assert _backward._plans  # exact-int spellings were cached


@pytest.mark.parametrize("bad, err, msg", [
    (dict(transposed=2), TypeError, "transposed"),
    (dict(transposed="no"), TypeError, "transposed"),
    (dict(bias_sizes=[7]), ValueError, "bias_sizes"),
    (dict(bias_sizes=[True]), TypeError, "bias_sizes"),
    (dict(stride=True), TypeError, "stride"),
    (dict(padding=2), ValueError, "grad_output"),
])
def test_backward_bad_arguments_raise_after_a_good_call_is_cached(bad, err, msg):
    from cconv import _backward

    x, w = arrays()
    gy = np.ones((2, 6, 9, 8))
    _bwd(gy, x, w)
    _bwd(gy, x, w)
    n = len(_backward._plans)
    for _ in range(2):
        with pytest.raises(err, match=msg):
            _bwd(gy, x, w, **bad)
    assert len(_backward._plans) == n  # errors are never cached
    with pytest.raises(ValueError, match="grad_output"):  # another grad_output shape
        _bwd(np.ones((2, 6, 9, 7)), x, w)


def test_cached_params_stay_picklable():
    """The Plan keeps the chosen method; its ConvParams stays a plain value
    that survives pickling and copying (derived values recomputed)."""
    import copy
    import pickle

    x, w = arrays(np.float32)
    cconv.conv2d(x, w, padding=1)
    cconv.conv2d(x, w, padding=1)
    plan, = _args._plans.values()
    assert plan.method is not None and not plan.unbatched
    p = plan.p
    q = pickle.loads(pickle.dumps(p))
    assert q == p and hash(q) == hash(p) and q.geom() == p.geom()
    assert copy.deepcopy(p) == p
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.batch = 3
