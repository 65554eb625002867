"""The forward API: conv1d/2d/3d, conv_transpose1d/2d/3d, convolution and
select_backend.

A call's arguments are checked once per set of shapes, dtypes and
parameters (cconv/_args.py: the Plan), and the forward runs on the method
cconv/_dispatch.py chooses (cconv/_run.py).  The common call (NumPy,
C-contiguous float32/float64 arrays, no ``backend=``, no benchmark mode)
goes straight from the Plan to the chosen method's module.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

import numpy as np

from . import _autotune, _depthwise, _dispatch, _outbuf
from ._args import REAL, as_array, base_ndarray, check_dtypes, check_out, compute_dtype, forward_plan, ready
from ._array import get_xp
from ._config import get_num_threads
from ._dispatch import Backend, Problem, nonfinite_rule, select
from ._params import check_flag, make_params
from ._run import forward_any

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "convolution",
    "select_backend",
]

IntOrTuple = Union[int, Sequence[int]]
Padding = Union[int, Sequence[int], str]


def _fast(plan, x, w, b):
    """The common call's result, or None where it is not one: NumPy,
    C-contiguous aligned float32/float64 arrays of one dtype (checked by the
    caller: exact ndarrays, no backend=, no out=), benchmark mode off.
    Straight to the module the dispatcher chose, which the Plan keeps per
    thread count and generation of the tables of measured winners (a small convolution's time is mostly
    this Python layer)."""
    dt = x.dtype
    if (dt not in REAL or w.dtype != dt or (b is not None and b.dtype != dt)
            or not (ready(x) and ready(w) and (b is None or ready(b)))
            or _autotune.get_benchmark()):
        return None
    p = plan.p
    nt = get_num_threads()
    if plan.threads != nt or plan.generation != _dispatch.GENERATION[0]:
        q = Problem(p, np)
        mod = select(q)[1]
        plan.check_w = nonfinite_rule(mod, q) == "weight"
        plan.method, plan.threads, plan.generation = mod, nt, _dispatch.GENERATION[0]
        if plan.small_out is None:
            plan.small_out = math.prod(p.output_shape) * dt.itemsize < _outbuf.MIN_BYTES
    if plan.check_w and not _depthwise.all_finite(w):
        return None
    # (np.empty for a result too small for the block cache: it skips the
    # cache's size test, 0.3 us of a 10 us call)
    y = (np.empty if plan.small_out else _outbuf.empty_pooled)(p.output_shape, dtype=dt)
    if plan.method.forward(p, x, w, b, y):
        return None  # the kernel met a NaN or an infinity: the general path
    return y


def _conv_entry(fn: str, nsp: int | None, input, weight, bias, stride, padding, dilation, groups,
                transposed: bool, output_padding, out, backend):
    nd = np.ndarray
    if type(input) is nd and type(weight) is nd and (bias is None or type(bias) is nd):
        xp = np if out is None or type(out) is nd else get_xp(input=input, weight=weight, bias=bias, out=out)
    else:
        xp = get_xp(input=input, weight=weight, bias=bias, out=out)
        input = as_array(xp, "input", input, fn)
        weight = as_array(xp, "weight", weight, fn)
        bias = as_array(xp, "bias", bias, fn)
        if input is None or weight is None:
            raise TypeError(f"{fn}: input and weight must be arrays")
    plan = forward_plan(fn, nsp, xp, input, weight, bias, stride, padding, dilation, groups, transposed,
                        output_padding)
    p, unbatched = plan.p, plan.unbatched
    if unbatched:
        input = input[None]
    if out is None and backend is None and xp is np:
        y = _fast(plan, input, weight, bias)
        if y is not None:
            return y[0] if unbatched else y
    if out is not None and xp is np and type(out) is not np.ndarray and isinstance(out, np.ndarray):
        # an ndarray subclass: written through its base view, returned as given
        check_out(xp, base_ndarray("out", out, fn), p.output_shape[1:] if unbatched else p.output_shape,
                  p.dtype, fn, {"input": input, "weight": weight, "bias": bias})
        _conv_entry(fn, nsp, input[0] if unbatched else input, weight, bias, stride, padding,
                    dilation, groups, transposed, output_padding, out.view(np.ndarray), backend)
        return out
    if out is not None:
        res_shape = p.output_shape[1:] if unbatched else p.output_shape
        check_out(xp, out, res_shape, p.dtype, fn, {"input": input, "weight": weight, "bias": bias})
        if xp is np and not out.flags.aligned:
            # the kernels write aligned arrays only: compute, then copy
            y = forward_any(p, xp, input, weight, bias, None, backend)
            out[...] = y[0] if unbatched else y
            return out
        forward_any(p, xp, input, weight, bias, out[None] if unbatched else out, backend)
        return out
    y = forward_any(p, xp, input, weight, bias, None, backend)
    return y[0] if unbatched else y


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------
def conv1d(input, weight, bias=None, stride: IntOrTuple = 1, padding: Padding = 0,
           dilation: IntOrTuple = 1, groups: int = 1, *, out=None, backend=None):
    """1-D convolution (cross-correlation), as ``torch.nn.functional.conv1d``.

    input ``(N, C_in, L)`` or unbatched ``(C_in, L)``; weight
    ``(C_out, C_in // groups, kL)``; bias ``(C_out,)`` or None.  Returns
    ``(N, C_out, L_out)`` (unbatched: ``(C_out, L_out)``) of the input's dtype
    and array type.  ``padding`` is an int, a 1-tuple, ``'valid'`` or ``'same'``.
    """
    return _conv_entry("conv1d", 1, input, weight, bias, stride, padding, dilation, groups, False, 0, out, backend)


def conv2d(input, weight, bias=None, stride: IntOrTuple = 1, padding: Padding = 0,
           dilation: IntOrTuple = 1, groups: int = 1, *, out=None, backend=None):
    """2-D convolution, as ``torch.nn.functional.conv2d``.

    input ``(N, C_in, H, W)`` or ``(C_in, H, W)``; weight
    ``(C_out, C_in // groups, kH, kW)``; bias ``(C_out,)`` or None.  Returns
    ``(N, C_out, H_out, W_out)`` (unbatched without N)."""
    return _conv_entry("conv2d", 2, input, weight, bias, stride, padding, dilation, groups, False, 0, out, backend)


def conv3d(input, weight, bias=None, stride: IntOrTuple = 1, padding: Padding = 0,
           dilation: IntOrTuple = 1, groups: int = 1, *, out=None, backend=None):
    """3-D convolution, as ``torch.nn.functional.conv3d``.

    input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``; weight
    ``(C_out, C_in // groups, kD, kH, kW)``.  Returns ``(N, C_out, D_out,
    H_out, W_out)`` (unbatched without N)."""
    return _conv_entry("conv3d", 3, input, weight, bias, stride, padding, dilation, groups, False, 0, out, backend)


def conv_transpose1d(input, weight, bias=None, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1, dilation: IntOrTuple = 1,
                     *, out=None, backend=None):
    """1-D transposed convolution, as ``torch.nn.functional.conv_transpose1d``.

    input ``(N, C_in, L)`` or ``(C_in, L)``; weight ``(C_in, C_out // groups,
    kL)``.  ``L_out = (L - 1)*stride - 2*padding + dilation*(kL - 1) +
    output_padding + 1``."""
    return _conv_entry("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding, out, backend)


def conv_transpose2d(input, weight, bias=None, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1, dilation: IntOrTuple = 1,
                     *, out=None, backend=None):
    """2-D transposed convolution, as ``torch.nn.functional.conv_transpose2d``.

    input ``(N, C_in, H, W)`` or ``(C_in, H, W)``; weight ``(C_in, C_out //
    groups, kH, kW)``; returns ``(N, C_out, H_out, W_out)``."""
    return _conv_entry("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding, out, backend)


def conv_transpose3d(input, weight, bias=None, stride: IntOrTuple = 1, padding: IntOrTuple = 0,
                     output_padding: IntOrTuple = 0, groups: int = 1, dilation: IntOrTuple = 1,
                     *, out=None, backend=None):
    """3-D transposed convolution, as ``torch.nn.functional.conv_transpose3d``.

    input ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``; weight ``(C_in,
    C_out // groups, kD, kH, kW)``; returns ``(N, C_out, D_out, H_out, W_out)``."""
    return _conv_entry("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding, out, backend)


def convolution(input, weight, bias, stride: IntOrTuple, padding: IntOrTuple, dilation: IntOrTuple,
                transposed: bool, output_padding: IntOrTuple, groups: int, *, out=None, backend=None):
    """Any convolution, as ``torch.convolution`` (batched input only).

    input ``(N, C_in, *spatial)`` with 1 to 3 spatial dims; weight as for
    the plain or transposed function; a non-transposed convolution ignores a
    non-negative ``output_padding``."""
    return _conv_entry("convolution", None, input, weight, bias, stride, padding, dilation, groups,
                       check_flag("convolution", "transposed", transposed), output_padding, out,
                       backend)


def select_backend(input, weight, bias=None, stride: IntOrTuple = 1, padding: Padding = 0,
                   dilation: IntOrTuple = 1, transposed: bool = False, output_padding: IntOrTuple = 0,
                   groups: int = 1, need_backward: bool = False, op: str = "forward",
                   explain: bool = False):
    """The method (Backend) a call with these arguments would run.

    ``op`` is 'forward' (the default), 'grad_input' or 'grad_weight' (what
    ``convolution_backward`` runs for that gradient).  ``input`` may be
    batched or unbatched; arrays may also be shape tuples' worth of real
    arrays.  Besides shapes and dtypes it reads, for a forward, whether the
    input is in channels-last memory and, where the chosen method's
    result depends on it, whether the weight holds a NaN or an infinity
    (as a call with these arrays would); ``need_backward`` asks for a
    forward whose gradients will be taken (inference-only methods decline).
    A measured winner (benchmark mode, the tuning file) is what runs, so it
    is what this returns; with ``explain=True`` the result is a
    ``BackendChoice(backend, source)`` whose source says where the choice
    came from: 'default', 'benchmark' or 'tuning'."""
    fn = "select_backend"
    if op not in _dispatch.OPS:
        raise ValueError(f"{fn}: op must be one of {', '.join(map(repr, _dispatch.OPS))}, but got {op!r}")
    xp = get_xp(input=input, weight=weight, bias=bias)
    input = as_array(xp, "input", input, fn)
    weight = as_array(xp, "weight", weight, fn)
    bias = as_array(xp, "bias", bias, fn)
    dt = check_dtypes(fn, input=input, weight=weight, bias=bias)
    shape = tuple(input.shape)
    batched = len(shape) != weight.ndim - 1
    if not batched:
        shape = (1,) + shape
    p = make_params(shape, weight.shape, None if bias is None else bias.shape, stride, padding, dilation,
                    check_flag(fn, "transposed", transposed), output_padding, groups, fn,
                    compute_dtype(dt), dt)
    from ._layout import is_channels_last

    cl = (op == "forward" and xp is np and dt.kind != "c" and hasattr(input, "strides")
          and is_channels_last(input if batched else input[None]))
    q = Problem(p, xp, op, cl, bool(need_backward) and op == "forward")
    b, mod, source = _dispatch.select_why(q)
    if (op != "grad_weight" and nonfinite_rule(mod, q) == "weight" and xp is np
            and not np.isfinite(weight).all()):
        b, _, source = _dispatch.select_why(q._replace(finite_weight=False))
    return _dispatch.BackendChoice(b, source) if explain else b
