"""``padding_mode``: the padding modes of ``torch.nn.Conv1d/2d/3d``.

``torch.nn.ConvNd(..., padding_mode=m)`` with ``m`` other than ``'zeros'``
pads its input with ``torch.nn.functional.pad(input,
_reversed_padding_repeated_twice, mode=m)`` and then convolves with no
padding.  cconv's forward functions take the same ``padding_mode`` keyword
(an extension of the functional API) and do the same: :func:`conv` pads
the input by the mode (NumPy's ``np.pad`` modes ``'reflect'``, ``'edge'``
and ``'wrap'`` are PyTorch's ``'reflect'``, ``'replicate'`` and
``'circular'``), then runs the plain convolution with ``padding=0``.
:func:`backward` is the matching ``convolution_backward``: the gradients
of the padded convolution, with the input gradient folded back through the
padding (:func:`pad_adjoint`: each padded position's gradient is added to
the input position it was copied from).

PyTorch's rules, followed here: the mode is one of the four (ValueError);
transposed convolutions accept only ``'zeros'`` (ValueError); ``'same'``
pads ``d * (k - 1)`` in total per dimension, the odd one after, and is
rejected with a stride; ``'reflect'`` needs each pad smaller than its
dimension and ``'circular'`` no larger than it (PyTorch's RuntimeError is a
ValueError here); a negative padding crops the input, as ``F.pad`` does.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._params import normalize_int_tuple

__all__ = ["MODES", "check_mode", "resolve", "pad", "pad_adjoint", "conv", "backward"]

MODES = ("zeros", "reflect", "replicate", "circular")
_NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def check_mode(fn: str, mode: Any, transposed: bool) -> str:
    """``mode`` checked: one of :data:`MODES`, and ``'zeros'`` for a
    transposed convolution (as ``torch.nn.ConvTranspose*d``)."""
    if not isinstance(mode, str):
        raise TypeError(f"{fn}: padding_mode must be a str, but got {type(mode).__name__} ({mode!r})")
    if mode not in MODES:
        raise ValueError(
            f"{fn}: padding_mode must be one of {set(MODES)}, but got padding_mode={mode!r}")
    if transposed and mode != "zeros":
        raise ValueError(
            f"{fn}: only 'zeros' padding_mode is supported for a transposed convolution "
            f"(as torch.nn.ConvTranspose{{1,2,3}}d), but got padding_mode={mode!r}")
    return mode


def resolve(fn: str, nsp: int, kernel: tuple, padding: Any, stride: Any,
            dilation: Any) -> list[tuple[int, int]]:
    """The (before, after) pad of each spatial dimension, first to last, as
    ``torch.nn.ConvNd``'s ``_reversed_padding_repeated_twice`` read back to
    front: an int or tuple pads both sides alike; ``'valid'`` pads nothing;
    ``'same'`` pads ``d * (k - 1)`` with ``total // 2`` before."""
    dil = normalize_int_tuple("dilation", dilation, nsp, fn)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * nsp
        if padding != "same":
            raise ValueError(
                f"{fn}: Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        st = normalize_int_tuple("stride", stride, nsp, fn)
        if any(s != 1 for s in st):
            raise ValueError(
                f"{fn}: padding='same' is not supported for strided convolutions (stride={list(st)})")
        out = []
        for d, k in zip(dil, kernel):
            total = d * (int(k) - 1)
            out.append((total // 2, total - total // 2))
        return out
    # (a negative padding crops, as torch.nn.functional.pad does for these
    # modes; torch.nn.ConvNd passes it there unchecked)
    pads = normalize_int_tuple("padding", padding, nsp, fn)
    return [(p, p) for p in pads]


def _check_sizes(fn: str, mode: str, shape: tuple, pads: list[tuple[int, int]]) -> None:
    nsp = len(pads)
    sizes = shape[len(shape) - nsp:]
    for i, (n, (a, b)) in enumerate(zip(sizes, pads)):
        dim = len(shape) - nsp + i
        crop = max(-a, 0) + max(-b, 0)
        if crop and n - crop < 1:
            raise ValueError(
                f"{fn}: the negative padding ({a}, {b}) crops all of dimension {dim} of input "
                f"{list(shape)}")
        n -= crop
        a, b = max(a, 0), max(b, 0)
        if mode == "reflect" and (a >= n or b >= n):
            raise ValueError(
                f"{fn}: padding_mode='reflect' needs each padding smaller than its input "
                f"dimension, but got padding ({a}, {b}) at dimension {dim} of input "
                f"{list(shape)}")
        if mode == "circular" and (a > n or b > n):
            raise ValueError(
                f"{fn}: padding_mode='circular' needs each padding no larger than its input "
                f"dimension (it would wrap around more than once), but got padding ({a}, {b}) "
                f"at dimension {dim} of input {list(shape)}")
        if mode == "replicate" and n == 0 and (a or b):
            raise ValueError(
                f"{fn}: padding_mode='replicate' needs a non-empty input dimension to repeat, "
                f"but dimension {dim} of input {list(shape)} is empty")


def pad(xp, x, pads: list[tuple[int, int]], mode: str, fn: str = "pad"):
    """``x`` padded on its last ``len(pads)`` dimensions by ``mode``
    ('reflect', 'replicate' or 'circular'), as ``torch.nn.functional.pad``."""
    _check_sizes(fn, mode, tuple(x.shape), pads)
    lead = x.ndim - len(pads)
    if any(a < 0 or b < 0 for a, b in pads):   # crop first
        x = x[(slice(None),) * lead + tuple(
            slice(max(-a, 0), n - max(-b, 0)) for n, (a, b) in zip(x.shape[lead:], pads))]
    width = [(0, 0)] * lead + [(max(a, 0), max(b, 0)) for a, b in pads]
    if not any(a or b for a, b in width):
        return x
    return xp.pad(x, width, mode=_NP_MODE[mode])


def _source(mode: str, n: int, i: int) -> int:
    """The input index (0..n-1) that padded offset ``i`` (< 0 before the
    input, >= n after it) copies under ``mode``."""
    if mode == "replicate":
        return min(max(i, 0), n - 1)
    if mode == "circular":
        return i % n
    return -i if i < 0 else 2 * (n - 1) - i   # reflect (no edge repeat)


def pad_adjoint(xp, g, pads: list[tuple[int, int]], mode: str):
    """The gradient of :func:`pad` with respect to its input: ``g`` has the
    padded shape; each padded position's value is added to the input
    position it was copied from.  Dimensions are folded last to first (the
    padding is separable, so any order gives the same sum)."""
    nsp = len(pads)
    lead = g.ndim - nsp
    for ax in range(g.ndim - 1, lead - 1, -1):
        a0, b0 = pads[ax - lead]
        a, b = max(a0, 0), max(b0, 0)
        if a or b:
            g = _fold(g, ax, a, b, mode)
        if a0 < 0 or b0 < 0:   # the crop's adjoint: zeros where it cut
            width = [(0, 0)] * g.ndim
            width[ax] = (max(-a0, 0), max(-b0, 0))
            g = xp.pad(g, width)
    return g


def _fold(g, ax: int, a: int, b: int, mode: str):
    """One axis of :func:`pad_adjoint`: ``a`` and ``b`` (> 0) padded
    positions folded onto the input positions they copy."""
    n = g.shape[ax] - a - b

    def sl(i, j=None):
        idx = [slice(None)] * g.ndim
        idx[ax] = slice(i, i + 1) if j is None else slice(i, j)
        return tuple(idx)

    r = g[sl(a, a + n)].copy()
    for j in list(range(a)) + list(range(a + n, a + n + b)):
        r[sl(_source(mode, n, j - a))] += g[sl(j)]
    return r


def _module(**arrays: Any) -> Any:
    """The array module that pads: dask.array when an argument is a dask
    array (the padded input stays lazy), else the arrays' own."""
    from . import _dask
    from ._array import get_xp

    if _dask.any_dask(*arrays.values()):
        import dask.array as da
        return da
    return get_xp(**arrays)


def conv(fn: str, nsp: int | None, input, weight, bias, stride, padding, dilation, groups,
         mode: str, out, backend, entry: Callable):
    """The forward of a convolution with ``padding_mode=mode`` (not
    'zeros'): ``entry`` (``_functional._conv_entry`` bound to the plain
    problem) on the input padded by the mode, with ``padding=0``."""
    from ._functional import as_array, check_dtypes

    xp = _module(input=input, weight=weight, bias=bias, out=out)
    input = as_array(xp, "input", input, fn)
    weight = as_array(xp, "weight", weight, fn)
    bias = as_array(xp, "bias", bias, fn)
    if input is None or weight is None:
        raise TypeError(f"{fn}: input and weight must be arrays")
    check_dtypes(fn, input=input, weight=weight, bias=bias)
    k = weight.ndim - 2 if nsp is None else nsp
    if k < 1 or weight.ndim != k + 2 or input.ndim not in ((k + 2,) if nsp is None else (k + 1, k + 2)):
        # the plain call raises the dimension error, with its message
        return entry(input, weight, bias, stride, 0, dilation, groups, out, backend)
    pads = resolve(fn, k, tuple(weight.shape[2:]), padding, stride, dilation)
    xpad = pad(xp, input, pads, mode, fn)
    return entry(xpad, weight, bias, stride, 0, dilation, groups, out, backend)


def backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, output_padding,
             groups, output_mask, mode: str, backend, core: Callable):
    """``convolution_backward`` of a non-transposed convolution with
    ``padding_mode=mode``: ``core`` (the plain convolution_backward) on the
    padded input with ``padding=0``, the input gradient folded back by
    :func:`pad_adjoint`."""
    from ._functional import as_array

    fn = "convolution_backward"
    xp = _module(grad_output=grad_output, input=input, weight=weight)
    input = as_array(xp, "input", input, fn)
    weight = as_array(xp, "weight", weight, fn)
    if input is None or weight is None:
        raise TypeError(f"{fn}: input and weight must be arrays, not None")
    k = weight.ndim - 2
    if k < 1 or k > 3 or input.ndim != k + 2:
        return core(grad_output, input, weight, bias_sizes, stride, padding, dilation, False,
                    output_padding, groups, output_mask, backend=backend)
    pads = resolve(fn, k, tuple(weight.shape[2:]), padding, stride, dilation)
    xpad = pad(xp, input, pads, mode, fn)
    gi, gw, gb = core(grad_output, xpad, weight, bias_sizes, stride, 0, dilation, False,
                      output_padding, groups, output_mask, backend=backend)
    if gi is not None:
        gi = pad_adjoint(xp, gi, pads, mode)
    return gi, gw, gb
