"""Hints in the errors for the common porting mistakes: mixed dtypes, a
channels-last input, a weight in HWIO order; and DLPack-only inputs."""
import numpy as np
import pytest

import cconv


def test_mixed_dtypes_say_how_to_cast():
    x = np.zeros((1, 3, 8, 8), np.float32)
    w = np.zeros((4, 3, 3, 3), np.float64)
    with pytest.raises(TypeError, match=r"cast with weight\.astype\(input\.dtype\)"):
        cconv.conv2d(x, w)
    with pytest.raises(TypeError, match=r"bias\.astype\(input\.dtype\)"):
        cconv.conv2d(x, w.astype(np.float32), np.zeros(4))


def test_channels_last_input_hint():
    x = np.zeros((2, 32, 32, 3), np.float32)        # NHWC
    w = np.zeros((16, 3, 3, 3), np.float32)
    with pytest.raises(ValueError, match=r"looks channels-last.*x\.transpose\(0, 3, 1, 2\)"):
        cconv.conv2d(x, w)
    x3 = np.zeros((1, 4, 6, 6, 5), np.float32)      # NDHWC
    with pytest.raises(ValueError, match=r"x\.transpose\(0, 4, 1, 2, 3\)"):
        cconv.conv3d(x3, np.zeros((2, 5, 1, 1, 1), np.float32))


def test_hwio_weight_hint():
    x = np.zeros((2, 64, 16, 16), np.float32)
    w = np.zeros((3, 3, 64, 128), np.float32)       # HWIO
    with pytest.raises(ValueError, match=r"HWIO.*w\.transpose\(3, 2, 0, 1\)"):
        cconv.conv2d(x, w)
    # the suggested transpose is the fix
    assert cconv.conv2d(x, w.transpose(3, 2, 0, 1)).shape == (2, 128, 14, 14)


def test_no_hint_when_neither_reading_fits():
    x = np.zeros((2, 5, 16, 16), np.float32)
    w = np.zeros((8, 3, 3, 3), np.float32)
    with pytest.raises(ValueError) as e:
        cconv.conv2d(x, w)
    assert "looks" not in str(e.value)


class _DLPackOnly:
    """An array that speaks only DLPack (as some libraries' tensors)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_only_inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    y = cconv.conv2d(_DLPackOnly(x), _DLPackOnly(w), _DLPackOnly(b), padding=1)
    np.testing.assert_array_equal(y, cconv.conv2d(x, w, b, padding=1))
    gy = rng.standard_normal(y.shape).astype(np.float32)
    gi, gw, gb = cconv.convolution_backward(_DLPackOnly(gy), _DLPackOnly(x), _DLPackOnly(w), [4],
                                            1, 1, 1, False, 0, 1, (True, True, True))
    ref = cconv.convolution_backward(gy, x, w, [4], 1, 1, 1, False, 0, 1, (True, True, True))
    for a, r in zip((gi, gw, gb), ref):
        np.testing.assert_array_equal(a, r)


def test_dlpack_failure_is_a_type_error():
    class Broken:
        def __dlpack__(self, **kw):
            raise BufferError("not on the CPU")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(TypeError, match="DLPack"):
        cconv.conv2d(Broken(), np.zeros((1, 1, 1, 1)))
