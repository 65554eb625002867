"""ndarray subclasses and empty results: a subclass works as its base array
(np.matrix, np.memmap, a user subclass) or, for a masked array, raises a
TypeError naming the type, never a NumPy error from inside cconv; every
empty-result case returns the empty array as PyTorch does, and a result
NumPy cannot represent is a ValueError naming its shape."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

import cconv
from cconv import _params

from reference import ref_conv


class Tagged(np.ndarray):
    """A user subclass with an arithmetic rule of its own."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "t")

    def __add__(self, other):  # pragma: no cover - must never be reached
        raise RuntimeError("cconv used the subclass's arithmetic")


def _masked_channels_last():
    a = np.moveaxis(np.ones((1, 4, 4, 4), np.float32), 1, -1)
    return np.ma.masked_array(a).transpose(0, 3, 1, 2)


MASKED_CALLS = {
    "conv2d": lambda m: cconv.conv2d(m, np.ones((4, 4, 1, 1), np.float32)),
    "conv_transpose1d_weight": lambda m: cconv.conv_transpose1d(np.ones((1, 4, 5), np.float32),
                                                                m[0, :, :, :1].reshape(4, 4, 1)),
    "backward": lambda m: cconv.convolution_backward(np.ones((1, 4, 4, 4), np.float32), m,
                                                     np.ones((4, 4, 1, 1), np.float32), None, 1, 0, 1,
                                                     False, 0, 1, [True, True, True]),
    "double_backward": lambda m: cconv.convolution_double_backward(
        m, None, None, np.ones((1, 4, 4, 4), np.float32), np.ones((4, 4, 1, 1), np.float32),
        np.ones((1, 4, 4, 4), np.float32), 1, 0, 1, False, 0, 1, [True, True, True]),
    "grad_weight": lambda m: cconv.grad.conv2d_weight(m, (4, 4, 1, 1), np.ones((1, 4, 4, 4), np.float32)),
    "out": lambda m: cconv.conv2d(np.ones((1, 4, 4, 4), np.float32), np.ones((4, 4, 1, 1), np.float32),
                                  out=np.ma.masked_array(np.zeros((1, 4, 4, 4), np.float32))),
    "select_backend": lambda m: cconv.select_backend(m, np.ones((4, 4, 1, 1), np.float32)),
}


@pytest.mark.parametrize("name", sorted(MASKED_CALLS))
def test_masked_arrays_are_a_type_error_naming_them(name):
    with pytest.raises(TypeError, match="MaskedArray"):
        MASKED_CALLS[name](_masked_channels_last())


def test_matrix_big_endian_works_as_its_base_array():
    # conv1d of an np.asmatrix big-endian array was "could not broadcast
    # input array from shape (1,2,6) into shape (2,6,48)"
    m = np.asmatrix(np.arange(16, dtype=">f8").reshape(2, 8))
    w = np.arange(18, dtype=">f8").reshape(3, 2, 3)
    y = cconv.conv1d(m, w)
    assert type(y) is np.ndarray and y.dtype == np.float64 and y.dtype.isnative
    ref = ref_conv(np.asarray(m, np.float64)[None], np.asarray(w, np.float64), None)[0]
    np.testing.assert_allclose(y, ref, rtol=1e-12)


def test_subclasses_as_inputs_outputs_and_gradients(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 9))
    w = rng.standard_normal((4, 3, 3, 3))
    ref = cconv.conv2d(x, w, padding=1)
    mm = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=x.shape)
    mm[...] = x
    for xs in (mm, x.view(Tagged)):
        y = cconv.conv2d(xs, w.view(Tagged), padding=1)
        assert type(y) is np.ndarray and np.array_equal(y, ref)
        gy = np.ones_like(ref).view(Tagged)
        gi, gw, gb = cconv.convolution_backward(gy, xs, w.view(Tagged), [4], 1, 1, 1, False, 0, 1,
                                                [True, True, True])
        gi2, gw2, gb2 = cconv.convolution_backward(np.ones_like(ref), x, w, [4], 1, 1, 1, False, 0, 1,
                                                   [True, True, True])
        assert np.array_equal(gi, gi2) and np.array_equal(gw, gw2) and np.array_equal(gb, gb2)
    out = np.zeros_like(ref).view(Tagged)
    got = cconv.conv2d(x, w, padding=1, out=out)
    assert got is out and np.array_equal(np.asarray(out), ref)
    outm = np.asmatrix(np.zeros((4, 7)))
    got = cconv.conv1d(x[0, :, 0], w[:, :, 0], out=outm)
    assert got is outm and np.array_equal(np.asarray(outm), cconv.conv1d(x[0, :, 0], w[:, :, 0]))


def test_matrix_gradients():
    # the gradient helpers and the backward take matrices as their base arrays
    w = np.ones((3, 2, 3))
    gy = np.ones((1, 3, 6))
    gi = cconv.grad.conv1d_input((1, 2, 8), w, gy)
    m = np.asmatrix(np.ones((2, 8)))
    gw = cconv.grad.conv1d_weight(np.asarray(m)[None], (3, 2, 3), gy)
    assert np.array_equal(gw, np.full((3, 2, 3), 6.0))
    # an unbatched forward of a matrix, then its weight gradient from the
    # matrices themselves (2-D: a (C, L) input is unbatched)
    y = cconv.conv1d(m, w)
    assert y.shape == (3, 6) and np.array_equal(y, np.full((3, 6), 6.0))
    assert gi.shape == (1, 2, 8)


# --------------------------------------------------------------------------
# empty results
# --------------------------------------------------------------------------
DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_zero_transposed_returns_the_empty_array(dtype):
    # ATen's Empty backend: no output-padding check, the sizes as computed
    x = np.zeros((0, 1, 2), dtype)
    w = np.ones((1, 1, 3), dtype)
    y = cconv.conv_transpose1d(x, w, output_padding=1)  # output_padding >= stride and dilation
    assert y.shape == (0, 1, 5) and y.dtype == dtype
    gi, gw, gb = cconv.convolution_backward(np.zeros((0, 1, 5), dtype), x, w, [1], 1, 0, 1, True, 1, 1,
                                            [True, True, True])
    assert gi.shape == x.shape and gw.shape == w.shape and gb.shape == (1,)
    assert not gw.any() and not gb.any()
    x3 = np.zeros((0, 2, 1, 2, 3), dtype)
    w3 = np.ones((2, 3, 2, 1, 2), dtype)
    assert cconv.conv_transpose3d(x3, w3, padding=(1, 0, 2), groups=2).shape == (0, 6, 0, 2, 0)


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_float16_empty_transposed_result_follows_the_cpus_rule(nsp):
    # PyTorch runs float16 on mkldnn (no size check: the empty array) on CPUs
    # with AVX512-FP16, and checks the size elsewhere
    x = np.ones((1, 2) + (2,) * nsp, np.float16)
    w = np.ones((2, 3) + (3,) * nsp, np.float16)
    call = lambda: {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d,  # noqa: E731
                    3: cconv.conv_transpose3d}[nsp](x, w, padding=(2,) + (1,) * (nsp - 1))
    if _params.half_on_mkldnn():
        assert call().shape == (1, 3, 0) + (2,) * (nsp - 1)  # (2 - 1) - 2 + 3
    else:
        with pytest.raises(ValueError, match="output size"):
            call()


def test_empty_result_numpy_cannot_hold_is_a_value_error():
    # torch returns a (0, 3, 4.6e18) tensor; NumPy cannot make that array
    x = np.ones((0, 2, 2**40), np.float32)
    w = np.broadcast_to(np.float32(1), (2, 3, 2**20))
    with pytest.raises(ValueError, match="cannot be a NumPy array"):
        cconv.conv_transpose1d(x, w, stride=2**22)
    assert cconv.conv_transpose1d(x, w, stride=2**18).shape == (0, 3, (2**40 - 1) * 2**18 + 2**20)


def test_empty_cases_match_torch():
    torch = pytest.importorskip("torch")
    import warnings

    F = torch.nn.functional
    tdt = {np.float16: torch.float16, np.float32: torch.float32, np.float64: torch.float64,
           np.complex64: torch.complex64, np.complex128: torch.complex128}
    ft = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
    fc = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    ct = {1: cconv.conv_transpose1d, 2: cconv.conv_transpose2d, 3: cconv.conv_transpose3d}
    cc = {1: cconv.conv1d, 2: cconv.conv2d, 3: cconv.conv3d}
    rng = np.random.default_rng(3)
    checked = mismatched = 0
    bad = []
    for _ in range(600):
        nsp = int(rng.integers(1, 4))
        dt = DTYPES[int(rng.integers(0, 5))]
        tr = bool(rng.integers(0, 2))
        g = int(rng.choice([1, 2]))
        b = int(rng.choice([0, 1, 2]))
        cin = g * int(rng.choice([0, 1, 2])) if not tr else g * int(rng.choice([1, 2]))
        cpg = int(rng.choice([1, 2]))
        sp = tuple(int(rng.choice([0, 1, 2, 3])) for _ in range(nsp))
        k = tuple(int(rng.choice([1, 2, 3])) for _ in range(nsp))
        st = tuple(int(rng.choice([1, 2])) for _ in range(nsp))
        pd = tuple(int(rng.choice([0, 1, 2])) for _ in range(nsp))
        dl = tuple(int(rng.choice([1, 2])) for _ in range(nsp))
        op = tuple(int(rng.choice([0, 1])) for _ in range(nsp)) if tr else (0,) * nsp
        ws = (cin, cpg) + k if tr else (cpg * g, cin // g) + k
        x = np.zeros((b, cin) + sp, dt)
        w = np.ones(ws, dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tx, tw = torch.zeros(x.shape, dtype=tdt[dt]), torch.ones(ws, dtype=tdt[dt])
                r = ft[nsp](tx, tw, None, st, pd, op, g, dl) if tr else fc[nsp](tx, tw, None, st, pd, dl, g)
                want = tuple(r.shape)
            except NotImplementedError:
                continue  # (complex layers PyTorch's CPU backends lack)
            except Exception:
                want = "error"
        try:
            got = (ct[nsp](x, w, None, st, pd, op, g, dl) if tr else cc[nsp](x, w, None, st, pd, dl, g)).shape
        except (ValueError, TypeError):
            got = "error"
        checked += 1
        if got != want:
            mismatched += 1
            bad.append((dt.__name__, x.shape, ws, st, pd, dl, op, g, tr, want, got))
    assert checked > 400
    assert bad == [], bad[:5]
