"""What a block task runs: one local convolution problem through cconv's
own public functions (so every dtype rule, check and backend choice is the
NumPy path's), then the local result placed into the block.

These functions run on the workers (cconv must be installed there); their
static arguments are small picklable tuples.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._graph import Cut, assemble

__all__ = ["Local", "Place", "forward_block", "grad_input_block", "grad_weight_part", "grad_bias_part",
           "finish"]


class Local(NamedTuple):
    """A local problem: cconv.convolution's arguments but the arrays, and
    which rows (and, for a grad_input of a part of a group, columns) of the
    weight and bias it takes.  ``in_shape``: the local input's shape where
    the call needs it without reading it (input gradients); ``w_shape``:
    the local weight's shape (weight gradients)."""

    transposed: bool
    stride: tuple
    padding: Any
    dilation: tuple
    output_padding: tuple
    groups: int
    backend: Any
    wrows: slice
    wcols: slice | None
    brows: slice
    in_shape: tuple | None = None
    w_shape: tuple | None = None


class Place(NamedTuple):
    """Where a local result goes in its block: ``shape`` of the block,
    ``src``/``dst`` slices of the local result and of the block; the rest
    of the block gets nothing from any output (zeros, or the bias alone for
    a forward).  None: the local result is the block."""

    shape: tuple
    src: tuple
    dst: tuple


def _dummy(shape, dtype):
    """A read-only array of ``shape`` using no memory, for an argument a
    gradient call checks but does not read."""
    return np.broadcast_to(np.zeros((), dtype=dtype), shape)


def _up(a):
    """float16 -> float32 (exact), so partial sums keep float32 until the end."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _bias_only(b, nsp: int, dtype):
    """(1, C, 1, ...) values of outputs no input reaches: the bias as cconv
    makes it (dtype rules included), from a 1x1 convolution of zeros."""
    from .._functional import convolution

    c = b.shape[0]
    z = np.zeros((1, 1) + (1,) * nsp, dtype=dtype)
    return convolution(z, np.zeros((c, 1) + (1,) * nsp, dtype=dtype), b, 1, 0, 1, False, 0, 1)


def _placed(y, place: Place | None, dtype, fill_bias=None, nsp: int = 0):
    if place is None:
        return y
    if fill_bias is not None:
        out = np.empty(place.shape, dtype=dtype)
        out[...] = _bias_only(fill_bias, nsp, dtype)
    else:
        out = np.zeros(place.shape, dtype=dtype)
    if y is not None:
        out[place.dst] = y[place.src]
    return out


def forward_block(loc: Local, place: Place | None, w, b, xparts, xcut: Cut | None):
    """A block of a forward: the local convolution of the window ``xcut``
    (None: no input reaches the block, which holds the bias alone)."""
    from .._functional import convolution

    bl = None if b is None else b[loc.brows]
    y = None
    dtype = w.dtype.newbyteorder("=")
    if xcut is not None:
        x = assemble(xparts, xcut)
        y = convolution(x, w[loc.wrows], bl, loc.stride, loc.padding, loc.dilation, loc.transposed,
                        loc.output_padding, loc.groups, backend=loc.backend)
        dtype = y.dtype
    nsp = len(loc.stride)
    if bl is None:
        return _placed(y, place, dtype)
    return _placed(y, place, dtype, fill_bias=bl, nsp=nsp)


def grad_input_block(loc: Local, place: Place | None, w, gparts, gcut: Cut | None):
    """A block of grad_input: the local input gradient for the grad_output
    window ``gcut`` (None: no output reaches the block, zeros)."""
    from .. import grad
    from .._backward import convolution_backward

    if gcut is None:
        return np.zeros(place.shape, dtype=w.dtype.newbyteorder("="))
    gy = assemble(gparts, gcut)
    wl = w[loc.wrows] if loc.wcols is None else w[loc.wrows, loc.wcols]
    if loc.transposed:
        gi = convolution_backward(gy, _dummy(loc.in_shape, gy.dtype), wl, None, loc.stride, loc.padding,
                                  loc.dilation, True, loc.output_padding, loc.groups,
                                  (True, False, False), backend=loc.backend)[0]
    else:
        f = getattr(grad, f"conv{len(loc.stride)}d_input")
        gi = f(loc.in_shape, wl, gy, loc.stride, loc.padding, loc.dilation, loc.groups, backend=loc.backend)
    return _placed(gi, place, gi.dtype)


def grad_weight_part(loc: Local, gparts, gcut: Cut, xparts, xcut: Cut):
    """The weight gradient of one block of outputs (float16 in float32)."""
    from .._backward import convolution_backward

    gy = _up(assemble(gparts, gcut))
    x = _up(assemble(xparts, xcut))
    return convolution_backward(gy, x, _dummy(loc.w_shape, gy.dtype), None, loc.stride, loc.padding,
                                loc.dilation, loc.transposed, loc.output_padding, loc.groups,
                                (False, True, False), backend=loc.backend)[1]


def grad_bias_part(gy):
    """The bias gradient of one grad_output block (float16 in float32), by
    cconv's own bias reduction (a 1x1 problem whose input and weight are
    not read)."""
    from .._backward import convolution_backward

    gy = _up(gy)
    nsp = gy.ndim - 2
    n, c = gy.shape[:2]
    return convolution_backward(gy, _dummy((n, 1) + gy.shape[2:], gy.dtype),
                                _dummy((c, 1) + (1,) * nsp, gy.dtype), None, 1, 0, 1, False, 0, 1,
                                (False, False, True))[2]


def finish(dtype, *pieces):
    """The pieces of a gradient (one per chunk of groups) joined along
    axis 0, in the user's dtype (float16 narrowed once, as the NumPy
    path: values past its range become inf)."""
    a = pieces[0] if len(pieces) == 1 else np.concatenate(pieces, axis=0)
    if a.dtype != dtype:
        with np.errstate(over="ignore"):
            a = a.astype(dtype)
    return a
