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
from typing import Any, Literal, Sequence, TypeVar, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _autotune, _dask, _depthwise, _dispatch, _docs, _outbuf, _padding_mode
from ._args import (
    REAL, as_array, base_ndarray, check_dtypes, check_out, compute_dtype, forward_plan, ready,
)
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
#: ``padding`` of the forward functions: an int, one int per spatial
#: dimension, or one of the two strings PyTorch takes
Padding = Union[int, Sequence[int], Literal["same", "valid"]]
#: ``padding_mode`` (``torch.nn.Conv*d``'s)
PaddingMode = Literal["zeros", "reflect", "replicate", "circular"]
#: ``backend=``: a :class:`Backend`, its name or value, or None (the default choice)
BackendArg = Union[Backend, str, None]
#: the dtypes cconv computes in: an array of one of them gives an array of the same
_F = TypeVar("_F", np.float16, np.float32, np.float64, np.complex64, np.complex128)


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
        if _dask.any_dask(input, weight, bias, out):
            return _dask.forward(fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed,
                                 output_padding, out, backend)
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
@overload
def conv1d(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None = None,
         stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
         groups: int = 1, *, out: NDArray[_F] | None = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> NDArray[_F]: ...
@overload
def conv1d(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
         stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
         groups: int = 1, *, out: NDArray[Any] | None = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> NDArray[Any]: ...
@_docs.per_dim("conv", 1)
def conv1d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1, padding: Padding = 0,
         dilation: IntOrTuple = 1, groups: int = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> Any:
    if padding_mode != "zeros":
        return _padding_mode.conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups,
                                  _padding_mode.check_mode("conv1d", padding_mode, False), out, backend,
                                  _entry("conv1d", 1))
    return _conv_entry("conv1d", 1, input, weight, bias, stride, padding, dilation, groups, False, 0, out, backend)

@overload
def conv2d(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None = None,
         stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
         groups: int = 1, *, out: NDArray[_F] | None = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> NDArray[_F]: ...
@overload
def conv2d(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
         stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
         groups: int = 1, *, out: NDArray[Any] | None = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> NDArray[Any]: ...
@_docs.per_dim("conv", 2)
def conv2d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1, padding: Padding = 0,
         dilation: IntOrTuple = 1, groups: int = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> Any:
    if padding_mode != "zeros":
        return _padding_mode.conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups,
                                  _padding_mode.check_mode("conv2d", padding_mode, False), out, backend,
                                  _entry("conv2d", 2))
    return _conv_entry("conv2d", 2, input, weight, bias, stride, padding, dilation, groups, False, 0, out, backend)

@overload
def conv3d(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None = None,
         stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
         groups: int = 1, *, out: NDArray[_F] | None = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> NDArray[_F]: ...
@overload
def conv3d(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
         stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
         groups: int = 1, *, out: NDArray[Any] | None = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> NDArray[Any]: ...
@_docs.per_dim("conv", 3)
def conv3d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1, padding: Padding = 0,
         dilation: IntOrTuple = 1, groups: int = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> Any:
    if padding_mode != "zeros":
        return _padding_mode.conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups,
                                  _padding_mode.check_mode("conv3d", padding_mode, False), out, backend,
                                  _entry("conv3d", 3))
    return _conv_entry("conv3d", 3, input, weight, bias, stride, padding, dilation, groups, False, 0, out, backend)

@overload
def conv_transpose1d(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None = None,
         stride: IntOrTuple = 1, padding: IntOrTuple = 0, output_padding: IntOrTuple = 0,
         groups: int = 1, dilation: IntOrTuple = 1, *, out: NDArray[_F] | None = None,
         backend: BackendArg = None, padding_mode: Literal["zeros"] = "zeros") -> NDArray[_F]: ...
@overload
def conv_transpose1d(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
         stride: IntOrTuple = 1, padding: IntOrTuple = 0, output_padding: IntOrTuple = 0,
         groups: int = 1, dilation: IntOrTuple = 1, *, out: NDArray[Any] | None = None,
         backend: BackendArg = None, padding_mode: Literal["zeros"] = "zeros") -> NDArray[Any]: ...
@_docs.per_dim("conv_transpose", 1)
def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
         padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
         dilation: IntOrTuple = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: Literal["zeros"] = "zeros") -> Any:
    if padding_mode != "zeros":
        _padding_mode.check_mode("conv_transpose1d", padding_mode, True)
    return _conv_entry("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding, out, backend)

@overload
def conv_transpose2d(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None = None,
         stride: IntOrTuple = 1, padding: IntOrTuple = 0, output_padding: IntOrTuple = 0,
         groups: int = 1, dilation: IntOrTuple = 1, *, out: NDArray[_F] | None = None,
         backend: BackendArg = None, padding_mode: Literal["zeros"] = "zeros") -> NDArray[_F]: ...
@overload
def conv_transpose2d(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
         stride: IntOrTuple = 1, padding: IntOrTuple = 0, output_padding: IntOrTuple = 0,
         groups: int = 1, dilation: IntOrTuple = 1, *, out: NDArray[Any] | None = None,
         backend: BackendArg = None, padding_mode: Literal["zeros"] = "zeros") -> NDArray[Any]: ...
@_docs.per_dim("conv_transpose", 2)
def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
         padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
         dilation: IntOrTuple = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: Literal["zeros"] = "zeros") -> Any:
    if padding_mode != "zeros":
        _padding_mode.check_mode("conv_transpose2d", padding_mode, True)
    return _conv_entry("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding, out, backend)

@overload
def conv_transpose3d(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None = None,
         stride: IntOrTuple = 1, padding: IntOrTuple = 0, output_padding: IntOrTuple = 0,
         groups: int = 1, dilation: IntOrTuple = 1, *, out: NDArray[_F] | None = None,
         backend: BackendArg = None, padding_mode: Literal["zeros"] = "zeros") -> NDArray[_F]: ...
@overload
def conv_transpose3d(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None = None,
         stride: IntOrTuple = 1, padding: IntOrTuple = 0, output_padding: IntOrTuple = 0,
         groups: int = 1, dilation: IntOrTuple = 1, *, out: NDArray[Any] | None = None,
         backend: BackendArg = None, padding_mode: Literal["zeros"] = "zeros") -> NDArray[Any]: ...
@_docs.per_dim("conv_transpose", 3)
def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
         padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
         dilation: IntOrTuple = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: Literal["zeros"] = "zeros") -> Any:
    if padding_mode != "zeros":
        _padding_mode.check_mode("conv_transpose3d", padding_mode, True)
    return _conv_entry("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups, True,
                       output_padding, out, backend)


def _entry(fn: str, nsp: int | None, transposed: bool = False, output_padding: Any = 0) -> Any:
    """``_conv_entry`` for ``fn`` with the arguments ``_padding_mode.conv`` passes."""
    def run(input, weight, bias, stride, padding, dilation, groups, out, backend):
        return _conv_entry(fn, nsp, input, weight, bias, stride, padding, dilation, groups,
                           transposed, output_padding, out, backend)
    return run


@overload
def convolution(input: NDArray[_F], weight: NDArray[_F], bias: NDArray[_F] | None,
                stride: IntOrTuple, padding: Padding, dilation: IntOrTuple, transposed: bool,
                output_padding: IntOrTuple, groups: int, *, out: NDArray[_F] | None = None,
                backend: BackendArg = None, padding_mode: PaddingMode = "zeros") -> NDArray[_F]: ...
@overload
def convolution(input: ArrayLike, weight: ArrayLike, bias: ArrayLike | None,
                stride: IntOrTuple, padding: Padding, dilation: IntOrTuple, transposed: bool,
                output_padding: IntOrTuple, groups: int, *, out: NDArray[Any] | None = None,
                backend: BackendArg = None, padding_mode: PaddingMode = "zeros") -> NDArray[Any]: ...
def convolution(input: Any, weight: Any, bias: Any, stride: IntOrTuple, padding: Padding,
                dilation: IntOrTuple, transposed: bool, output_padding: IntOrTuple, groups: int,
                *, out: Any = None, backend: BackendArg = None,
                padding_mode: PaddingMode = "zeros") -> Any:
    """Any convolution, plain or transposed, 1-D to 3-D, as ``torch.convolution``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, *spatial)``
        Batched input with 1 to 3 spatial dimensions (unbatched input is
        not accepted here, as in PyTorch).
    weight : ndarray
        ``(C_out, C_in // groups, *kernel)``, or for a transposed
        convolution ``(C_in, C_out // groups, *kernel)``; of ``input``'s
        dtype.  Its number of dimensions sets the convolution's.
    bias : ndarray, shape ``(C_out,)``, or None
        Added to each output channel.
    stride, padding, dilation : int or tuple of ints
        As in :func:`conv2d` (``padding`` may be ``'same'`` or ``'valid'``
        for a plain convolution) and :func:`conv_transpose2d`.
    transposed : bool
        A transposed convolution (:func:`conv_transpose2d` and friends).
    output_padding : int or tuple of ints
        For a transposed convolution, as :func:`conv_transpose2d`; a plain
        convolution ignores a non-negative one.
    groups : int
        Number of channel groups.
    out : ndarray, optional
        Where to write the result (C-contiguous, the result's shape and
        dtype, not overlapping an input); returned.
    backend : Backend or str, optional
        Run this backend instead of :func:`select_backend`'s choice.
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, default 'zeros'
        As for :func:`conv2d`; a transposed convolution takes only 'zeros'.

    Returns
    -------
    ndarray, shape ``(N, C_out, *out_spatial)``
        Of ``input``'s dtype and array type (``out`` when given).

    Raises
    ------
    TypeError
        Not arrays, mixed or unsupported dtypes, wrongly typed parameters
        (e.g. ``transposed`` not a bool).
    ValueError
        Shapes that do not fit, out-of-range parameters, a bad ``out``, an
        unknown ``padding_mode``, a ``backend`` that cannot run the call.

    See Also
    --------
    conv2d, conv_transpose2d, convolution_backward

    Notes
    -----
    The same dtype rules and backends as :func:`conv2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 2, 5), dtype=np.float32)
    >>> w = np.ones((3, 2, 3), dtype=np.float32)
    >>> cconv.convolution(x, w, None, 1, 1, 1, False, 0, 1)
    array([[[4., 6., 6., 6., 4.],
            [4., 6., 6., 6., 4.],
            [4., 6., 6., 6., 4.]]], dtype=float32)
    >>> cconv.convolution(x, w.transpose(1, 0, 2), None, 2, 0, 1, True, 1, 1).shape
    (1, 3, 12)
    """
    tr = check_flag("convolution", "transposed", transposed)
    if padding_mode != "zeros":
        mode = _padding_mode.check_mode("convolution", padding_mode, tr)
        return _padding_mode.conv("convolution", None, input, weight, bias, stride, padding,
                                  dilation, groups, mode, out, backend,
                                  _entry("convolution", None, False, output_padding))
    return _conv_entry("convolution", None, input, weight, bias, stride, padding, dilation, groups,
                       tr, output_padding, out, backend)


def select_backend(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
                   padding: Padding = 0, dilation: IntOrTuple = 1, transposed: bool = False,
                   output_padding: IntOrTuple = 0, groups: int = 1, need_backward: bool = False,
                   op: str = "forward", explain: bool = False) -> Any:
    """The method (:class:`Backend`) a call with these arguments would run.

    Parameters
    ----------
    input : ndarray
        The input, batched ``(N, C_in, *spatial)`` or unbatched; its shape,
        dtype, array type and (for a forward) whether it is channels-last
        memory are read.
    weight : ndarray
        The weight, as for :func:`convolution`; where the chosen method's
        result depends on it, whether it holds a NaN or an infinity is read
        (as a call with these arrays would).
    bias : ndarray, optional
        The bias, ``(C_out,)``.
    stride, padding, dilation, transposed, output_padding, groups
        As for :func:`convolution` (defaults as :func:`conv2d`).
    need_backward : bool, default False
        A forward whose gradients will be taken (inference-only methods
        decline).
    op : {'forward', 'grad_input', 'grad_weight'}, default 'forward'
        Which operation: the forward, or what :func:`convolution_backward`
        runs for that gradient.
    explain : bool, default False
        Return a ``BackendChoice(backend, source)`` whose source says where
        the choice came from: 'default', 'benchmark', 'tuning' or 'cpu-kind'.

    Returns
    -------
    Backend or BackendChoice
        The method that would run (a measured winner of benchmark mode or
        the tuning file is what runs, so it is what this returns).

    Raises
    ------
    TypeError, ValueError
        As the call would raise for these arguments; an unknown ``op``.

    See Also
    --------
    Backend, conv2d

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.zeros((1, 32, 28, 28), np.float32)
    >>> b = cconv.select_backend(x, np.zeros((32, 1, 3, 3), np.float32), groups=32, padding=1)
    >>> b in cconv.Backend, b.value.startswith("depthwise")
    (True, True)
    >>> cconv.select_backend(x, np.zeros((64, 32, 3, 3), np.float32), op="grad_weight") in cconv.Backend
    True
    """
    fn = "select_backend"
    if op not in _dispatch.OPS:
        raise ValueError(f"{fn}: op must be one of {', '.join(map(repr, _dispatch.OPS))}, but got {op!r}")
    if _dask.any_dask(input, weight, bias):   # shapes and dtypes only: nothing computed
        input, weight, bias = _dask.stand_ins(input, weight, bias)
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
