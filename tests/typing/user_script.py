"""A user's script, type-checked by mypy --strict and pyright (strict) in
tests/test_typing.py: cconv's hints must give precise array types."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

import cconv

if sys.version_info >= (3, 11):
    from typing import assert_type
else:  # pragma: no cover
    from typing_extensions import assert_type

rng = np.random.default_rng(0)
x32: NDArray[np.float32] = rng.standard_normal((2, 8, 16, 16), dtype=np.float32)
w32: NDArray[np.float32] = rng.standard_normal((16, 8, 3, 3), dtype=np.float32)
b32: NDArray[np.float32] = np.zeros(16, dtype=np.float32)
x64: NDArray[np.float64] = rng.standard_normal((2, 8, 16))
w64: NDArray[np.float64] = rng.standard_normal((4, 8, 3))

y = cconv.conv2d(x32, w32, b32, stride=1, padding="same", padding_mode="reflect")
assert_type(y, NDArray[np.float32])
y1 = cconv.conv1d(x64, w64, padding=1)
assert_type(y1, NDArray[np.float64])
y3 = cconv.conv3d(x32[:, :, None], w32[:, :, None], padding=(0, 1, 1))
assert_type(y3, NDArray[np.float32])
yt = cconv.conv_transpose2d(x32, w32.transpose(1, 0, 2, 3).copy(), stride=2, padding=1,
                            output_padding=1)
assert_type(yt, NDArray[np.float32])
yc = cconv.convolution(x32, w32, None, 1, 1, 1, False, 0, 1)
assert_type(yc, NDArray[np.float32])
xc: NDArray[np.complex64] = (x32 + 1j * x32).astype(np.complex64)
wc: NDArray[np.complex64] = w32.astype(np.complex64)
assert_type(cconv.conv2d(xc, wc), NDArray[np.complex64])

out = np.empty((2, 16, 16, 16), dtype=np.float32)
assert_type(cconv.conv2d(x32, w32, padding=1, out=out), NDArray[np.float32])

gx, gw, gb = cconv.convolution_backward(y, x32, w32, [16], 1, "same", 1, False, 0, 1,
                                        (True, True, True))
assert_type(gx, "NDArray[np.float32] | None")
if gx is not None and gw is not None and gb is not None:
    total: float = float(gx.sum() + gw.sum() + gb.sum())

gi = cconv.grad.conv2d_input(x32.shape, w32, y, padding="same")
assert_type(gi, NDArray[np.float32])
gwt = cconv.grad.conv1d_weight(x64, (4, 8, 3), y1, padding=1)
assert_type(gwt, NDArray[np.float64])

# lists and other array-likes are accepted, typed as arrays of unknown dtype
yl = cconv.conv1d([[[1.0, 2.0, 3.0]]], [[[1.0, 1.0]]])
assert_type(yl, NDArray[Any])

be: cconv.Backend = cconv.select_backend(x32, w32, padding=1)
name: str = be.value
cconv.set_num_threads(cconv.get_num_threads())
with cconv.benchmark(False):
    on: bool = cconv.get_benchmark()
cconv.empty_cache()
version: str = cconv.__version__
