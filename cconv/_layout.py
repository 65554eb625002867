"""Channels-last memory: detection, empty arrays and the copies between
layouts.

A channels-last array is the NCHW view of an NHWC C-contiguous buffer
(``x_nhwc.transpose(0, 3, 1, 2)``; NLC and NDHWC likewise, unbatched too
once batchified).  PyTorch keeps that memory format through a convolution;
so does cconv: for such an input the result is channels last as well (the
NCHW-shaped view of an NHWC buffer).  Which method runs such an input is
the dispatcher's choice (cconv/_dispatch.py: the problem's
``channels_last``); the methods that read channels-last memory in place are
NHWC and DEPTHWISE_NHWC, the others run on the channels-first copy these
functions make (cconv/_run.py).
"""
from __future__ import annotations

import numpy as np

from . import _nhwc
from ._config import get_num_threads, result_empty

__all__ = ["is_channels_last", "empty_channels_last", "to_channels_first", "to_channels_last"]


def _to_last(nd: int) -> tuple:
    return (0,) + tuple(range(2, nd)) + (1,)


def _to_first(nd: int) -> tuple:
    return (0, nd - 1) + tuple(range(1, nd - 1))


def is_channels_last(a) -> bool:
    """True for a batched (N, C, *spatial) array whose memory is
    (N, *spatial, C) C-contiguous and not also plain C-contiguous (size-1
    axes make some arrays both: those count as channels first)."""
    return (
        a.ndim >= 3
        and not a.flags.c_contiguous
        and a.transpose(_to_last(a.ndim)).flags.c_contiguous
    )


def empty_channels_last(shape, dtype) -> np.ndarray:
    """An uninitialised array of NCHW ``shape`` with channels-last memory."""
    nd = len(shape)
    phys = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    return result_empty(np, phys, dtype).transpose(_to_first(nd))


def _dims(shape) -> tuple:
    n, c = shape[0], shape[1]
    s = 1
    for v in shape[2:]:
        s *= v
    return n, c, s


def to_channels_first(x, out=None) -> np.ndarray:
    """A C-contiguous (channels-first) copy of channels-last ``x``, or
    written into C-contiguous ``out`` of its shape and dtype: the tiled SIMD
    transpose (src/transpose/transpose.c), 4-6x faster than NumPy's strided copy (2
    threads, AVX2: 1x56x56x144 float32 0.09 against 0.42 ms, 8x56x56x64 0.46
    against 2.3 ms); for fewer than 8 channels NumPy's copy."""
    n, c, s = _dims(x.shape)
    if c < 8 or s < 8:
        if out is None:
            return np.ascontiguousarray(x)
        np.copyto(out, x)
        return out
    y = result_empty(np, x.shape, x.dtype) if out is None else out
    src = x.transpose(_to_last(x.ndim)).reshape(-1).view(np.uint8)
    _nhwc.transpose(n, s, c, x.dtype.itemsize, src, y.reshape(-1).view(np.uint8),
                    get_num_threads())
    return y


def to_channels_last(yc, out=None) -> np.ndarray:
    """A channels-last copy of C-contiguous ``yc`` (same shape and values),
    or written into channels-last ``out``, by the same tiled transpose the
    other way (rows = channels); NumPy's strided copy for fewer than 8
    channels."""
    n, c, s = _dims(yc.shape)
    y = empty_channels_last(yc.shape, yc.dtype) if out is None else out
    if c < 8 or s < 8 or not yc.flags.c_contiguous:
        np.copyto(y, yc)
        return y
    dst = y.transpose(_to_last(y.ndim)).reshape(-1).view(np.uint8)
    _nhwc.transpose(n, c, s, yc.dtype.itemsize, yc.reshape(-1).view(np.uint8), dst,
                    get_num_threads())
    return y
