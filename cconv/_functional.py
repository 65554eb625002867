"""The forward API: conv1d/2d/3d, conv_transpose1d/2d/3d and convolution.

A call is normalised here (array module, array-likes, dtypes, unbatched
input), checked by ``_params.make_params``, and run on the backend that
``_dispatch.select`` picks.  float16 is computed in float32; complex uses the
Gauss trick (three real convolutions).  Backends only ever see real
float32/float64 C-contiguous batched arrays.
"""
from __future__ import annotations

import math
from typing import Any, Literal, Sequence, TypeVar, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _autotune, _layout, _outbuf, _padding_mode
from ._array import get_xp, narrow, narrow_into
from ._config import result_empty
from ._dispatch import Backend, _tuned_any, select
from ._params import ConvParams, check_flag, make_params

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

_REAL = (np.dtype(np.float32), np.dtype(np.float64))
_ALLOWED = {np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128)}


# --------------------------------------------------------------------------
# argument normalisation shared with the backward API
# --------------------------------------------------------------------------
def as_array(xp, name: str, a: Any, fn: str):
    """``a`` as an array of module ``xp`` (array-likes through asarray)."""
    if a is None:
        if name in ("input", "weight", "grad_output"):
            raise TypeError(f"{fn}: {name} must be an array, not None")
        return None
    if xp is np and not isinstance(a, np.ndarray):
        if _dlpack_only(a):
            # (e.g. a JAX array or another library's tensor that offers
            # only the DLPack protocol: a zero-copy view when it is on the CPU)
            try:
                return np.from_dlpack(a)
            except Exception as e:
                raise TypeError(
                    f"{fn}: {name} ({type(a).__name__}) could not be read through DLPack "
                    f"(numpy.from_dlpack: {e}); a CPU array is needed") from None
        try:
            a = np.asarray(a)
        except Exception as e:
            raise TypeError(f"{fn}: {name} could not be converted to an array ({e})") from None
    return a


def _dlpack_only(a: Any) -> bool:
    """True for an object that speaks DLPack but none of NumPy's array
    protocols (np.asarray would make a 0-d object array of it)."""
    t = type(a)
    return (hasattr(t, "__dlpack__") and not hasattr(t, "__array__")
            and not hasattr(t, "__array_interface__") and not hasattr(t, "__array_struct__"))


def check_dtypes(fn: str, **arrays) -> np.dtype:
    """The shared dtype of the named arrays; TypeError when they differ or
    are not float16/32/64 or complex64/128."""
    dt = None
    first = None
    for name, a in arrays.items():
        if a is None:
            continue
        # a non-native byte order (e.g. big-endian data read from a file) is
        # a layout, like strides: the kernels get a native copy (native())
        d = np.dtype(a.dtype).newbyteorder("=")
        if d not in _ALLOWED:
            raise TypeError(
                f"{fn}: {name} has dtype {d}, which is not supported; expected float16, float32, "
                f"float64, complex64 or complex128"
            )
        if dt is None:
            dt, first = d, name
        elif d != dt:
            raise TypeError(
                f"{fn}: {first} dtype ({dt}) and {name} dtype ({d}) should be the same; "
                f"cast with {name}.astype({first}.dtype) (cconv does not promote dtypes, as "
                f"PyTorch does not)"
            )
    return dt


def compute_dtype(dt: np.dtype) -> np.dtype:
    """The real dtype the kernels run in for user dtype ``dt``."""
    if dt == np.float16:
        return np.dtype(np.float32)
    if dt.kind == "c":
        return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)
    return dt


def real_contig(xp, a, dtype):
    """C-contiguous, aligned copy-or-view of a real array in ``dtype`` (the
    kernels take read-only inputs; an array whose data is not aligned to its
    dtype, e.g. from ``np.frombuffer`` at an odd offset, is copied)."""
    if a is None:
        return None
    a = xp.ascontiguousarray(a, dtype=dtype)
    if xp is np and not a.flags.aligned:
        a = a.copy()
    return a


def check_out(xp, out, shape: tuple, dtype, fn: str, inputs: dict) -> None:
    """``out=`` must be a C-contiguous writable array of the result's shape
    and dtype that does not overlap an input."""
    if xp is np and not isinstance(out, np.ndarray):
        raise TypeError(f"{fn}: out must be a numpy.ndarray, but got {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{fn}: out has shape {tuple(out.shape)}, but the result has shape {tuple(shape)}")
    if np.dtype(out.dtype) != np.dtype(dtype):
        raise ValueError(f"{fn}: out has dtype {out.dtype}, but the result has dtype {np.dtype(dtype)}")
    if not out.flags.c_contiguous:
        raise ValueError(f"{fn}: out must be C-contiguous (strides {out.strides} for shape {tuple(out.shape)})")
    if xp is np and not out.flags.writeable:
        raise ValueError(f"{fn}: out is read-only")
    for name, a in inputs.items():
        if a is not None and xp.may_share_memory(out, a):
            raise ValueError(f"{fn}: out overlaps {name}; it must be a separate array")


# --------------------------------------------------------------------------
# running a real convolution on a backend
# --------------------------------------------------------------------------
def run_real(op: str, p: ConvParams, xp, a, w, b_or_none, out, backend=None, need_backward=False):
    """Run ``op`` ('forward', 'grad_input', 'grad_weight') of ``p`` in
    ``p.dtype`` (float32/float64) on C-contiguous arrays, into ``out``."""
    def run(mod):
        if op == "forward":
            mod.forward(p, a, w, b_or_none, out)
        elif op == "grad_input":
            mod.grad_input(p, a, w, out)
        else:
            mod.grad_weight(p, a, w, out)

    if backend is None and _autotune.get_benchmark() and _autotune.lookup(p, xp, need_backward, op) is None:
        _autotune.tune(p, xp, need_backward, op, run)
        return out
    _, mod = select(p, xp, backend, need_backward, op)
    run(mod)
    return out


def forward_any(p: ConvParams, xp, x, w, b, out=None, backend=None, need_backward=False):
    """The forward of ``p`` for any supported dtype (batched arrays).

    ``x``, ``w``, ``b`` are arrays of the user's dtype ``dt`` (any strides),
    which is ``p.dtype`` when it is float32 or float64;
    the result has ``p.output_shape`` and dtype ``dt``; ``out`` (C-contiguous,
    checked) is written when given."""
    if (backend is None and xp is np and not need_backward and not _tuned_any[0]
            and x.dtype in _REAL and _ready(x) and _ready(w) and (b is None or _ready(b))
            and w.dtype == x.dtype and (b is None or b.dtype == x.dtype)
            and not _autotune.get_benchmark()):
        # the common call, C-contiguous aligned float32/float64 arrays and
        # the default backend choice: straight to the backend select()
        # chose, which the ConvParams keeps (a small convolution's time is
        # mostly this Python layer)
        # (the chosen backend's module itself: looking it up by its Backend
        # member hashed the enum in Python, 0.4 us)
        mod = p.__dict__.get("_np_forward")
        if mod is None:
            mod = p.__dict__["_np_forward"] = select(p, np)[1]
        if out is None:
            # (np.empty for a result too small for the block cache: it
            # skips the cache's size test, 0.3 us of a 10 us call)
            small = p.__dict__.get("_np_small_out")
            if small is None:
                small = p.__dict__["_np_small_out"] = (
                    math.prod(p.output_shape) * x.dtype.itemsize < _outbuf.MIN_BYTES)
            y = (np.empty if small else _outbuf.empty_pooled)(p.output_shape, dtype=x.dtype)
        else:
            y = out
        mod.forward(p, x, w, b, y)
        return y
    if xp is np:
        x, w, b = native(x), native(w), native(b)
    if xp is np and not x.flags.aligned:  # an aligned copy, same memory layout
        x = x.copy(order="K")
    if xp is np and x.ndim >= 3 and not x.flags.c_contiguous:
        # channels-last input: NHWC kernel or channels-last result
        y = _layout.forward(p, x, w, b, out, backend, need_backward,
                            lambda xc: forward_any(p, xp, xc, w, b, out, backend, need_backward))
        if y is not None:
            return y
    dt = np.dtype(x.dtype)
    cdt = compute_dtype(dt)
    pr = p.with_dtype(cdt)
    shape = p.output_shape
    if dt in _REAL:
        y = out if out is not None else result_empty(xp, shape, dt)
        return run_real(
            "forward", pr, xp, real_contig(xp, x, cdt), real_contig(xp, w, cdt),
            real_contig(xp, b, cdt), y, backend, need_backward,
        )
    if dt.kind == "f":  # float16: computed in float32
        y32 = result_empty(xp, shape, cdt)
        run_real(
            "forward", pr, xp, real_contig(xp, x, cdt), real_contig(xp, w, cdt),
            real_contig(xp, b, cdt), y32, backend, need_backward,
        )
        if out is None:
            return narrow(y32, dt)
        narrow_into(out, y32)
        return out
    # complex: Gauss trick, (a + ib)(c + id) from three real convolutions
    xr, xi = real_contig(xp, x.real, cdt), real_contig(xp, x.imag, cdt)
    wr, wi = real_contig(xp, w.real, cdt), real_contig(xp, w.imag, cdt)
    t1 = result_empty(xp, shape, cdt)
    t2 = result_empty(xp, shape, cdt)
    t3 = result_empty(xp, shape, cdt)
    run_real("forward", pr, xp, xr, wr, None, t1, backend, need_backward)
    run_real("forward", pr, xp, xi, wi, None, t2, backend, need_backward)
    xs, ws = _quiet_add(xr, xi), _quiet_add(wr, wi)
    run_real("forward", pr, xp, xs, ws, None, t3, backend, need_backward)
    del xs, ws
    y = out if out is not None else result_empty(xp, shape, dt)
    bshape = (1, -1) + (1,) * p.nsp
    # real = t1 - t2, imag = t3 - t1 - t2, in place (no fourth temporary);
    # inf - inf is NaN here as in PyTorch, without NumPy's warning
    with np.errstate(invalid="ignore", over="ignore"):
        t3 -= t1
        t3 -= t2
        t1 -= t2
        del t2
        if b is not None and t1.size:
            t1 += b.real.astype(cdt).reshape(bshape)
            t3 += b.imag.astype(cdt).reshape(bshape)
    _complex_nonfinite_as_torch(xp, t1, t3, None if b is None else b.real.reshape(bshape))
    y.real = t1
    y.imag = t3
    return y


def _quiet_add(a, b):
    """a + b with inf + -inf = NaN and no NumPy warning."""
    with np.errstate(invalid="ignore", over="ignore"):
        return a + b


def _complex_nonfinite_as_torch(xp, re, im, bias_re) -> None:
    """PyTorch adds the parts of a complex convolution as (t1 - t2) +
    i * (t3 - t1 - t2) in complex arithmetic: i * r has a NaN real part
    where r is infinite, and the sum then makes both parts NaN.  So a result
    is NaN + NaNj wherever its imaginary part is not finite, or the real
    part of its channel's bias (inside t1 and t3 there) is not; elsewhere
    the parts are as computed.  ``re`` and ``im`` (the real arrays of the
    result's parts) are set in place; ``bias_re`` broadcasts against them."""
    if not im.size:
        return
    bad = ~xp.isfinite(im)
    if bias_re is not None:
        bad |= ~xp.isfinite(bias_re)
    if bad.any():
        re[bad] = np.nan
        im[bad] = np.nan


def native(a):
    """``a`` in native byte order (a copy when it is not)."""
    if a is None or a.dtype.isnative:
        return a
    return a.astype(a.dtype.newbyteorder("="))


def _ready(a) -> bool:
    """A NumPy array the kernels can read as it is: C-contiguous, aligned."""
    f = a.flags
    return f.c_contiguous and f.aligned


class _NoKey(Exception):
    pass


def _hk(v):
    """``v`` itself when it is an exact int, str or tuple of exact ints (so a
    cache key cannot confuse True with 1 or a list with a tuple)."""
    t = type(v)
    if t is int or t is str:
        return v
    if t is tuple:
        for e in v:
            if type(e) is not int:
                raise _NoKey
        return v
    raise _NoKey


# The checked parameters of recent calls: (fn, shapes, dtypes, arguments) ->
# (ConvParams, unbatched).  make_params is a pure function of the key, so a
# hit skips only work whose outcome is known; calls that raise never enter.
_plans: dict[tuple, tuple] = {}
_PLANS_MAX = 1024


def remember(cache: dict, key, make):
    """``make()``, kept in the bounded dict ``cache`` under ``key`` (None or
    an unhashable key: computed, not kept).  ``make`` must be a pure function
    of the key; a call that raises leaves nothing behind."""
    try:
        v = None if key is None else cache.get(key)
    except TypeError:
        key, v = None, None
    if v is None:
        v = make()
        if key is not None:
            if len(cache) >= _PLANS_MAX:
                cache.clear()
            cache[key] = v
    return v


def _plan(fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed, output_padding):
    """(ConvParams of the batched problem, unbatched) after every check."""
    dt = check_dtypes(fn, input=input, weight=weight, bias=bias)
    unbatched = False
    if nsp is not None:
        if weight.ndim != nsp + 2:
            raise ValueError(
                f"{fn}: expected a {nsp + 2}-dimensional weight (out_channels, in_channels/groups, "
                f"*kernel_size), but got weight of size {list(weight.shape)}"
            )
        if input.ndim == nsp + 1:
            unbatched = True
        elif input.ndim != nsp + 2:
            raise ValueError(
                f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to {fn}, but got "
                f"input of size: {list(input.shape)}"
            )
    shape = (1,) + tuple(input.shape) if unbatched else input.shape
    p = make_params(
        shape, weight.shape, None if bias is None else bias.shape,
        stride, padding, dilation, transposed, output_padding, groups, fn, dt,
    )
    return p, unbatched


def _conv_entry(
    fn: str,
    nsp: int | None,
    input,
    weight,
    bias,
    stride,
    padding,
    dilation,
    groups,
    transposed: bool,
    output_padding,
    out,
    backend,
):
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
    try:
        # (ints, the common arguments, inline: a call to _hk each is 0.1 us)
        key = (fn, xp, input.shape, input.dtype, weight.shape, weight.dtype,
               None if bias is None else (bias.shape, bias.dtype),
               stride if type(stride) is int else _hk(stride),
               padding if type(padding) is int else _hk(padding),
               dilation if type(dilation) is int else _hk(dilation),
               groups if type(groups) is int else _hk(groups), transposed,
               output_padding if type(output_padding) is int else _hk(output_padding))
        plan = _plans.get(key)
    except (_NoKey, TypeError):
        key, plan = None, None
    if plan is None:  # (the hit above stays inline: this is every call's path)
        plan = remember(_plans, key, lambda: _plan(
            fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed,
            output_padding))
    p, unbatched = plan
    if unbatched:
        input = input[None]
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
def conv1d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1, padding: Padding = 0,
         dilation: IntOrTuple = 1, groups: int = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> Any:
    """1-D convolution (cross-correlation), as ``torch.nn.functional.conv1d``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, L)`` or ``(C_in, L)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_out, C_in // groups, kL)``
        The filters, of ``input``'s dtype.
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of 1 ints, default 1
        Step of the kernel over each spatial dimension (>= 1).
    padding : int, tuple of 1 ints, 'valid' or 'same', default 0
        Implicit padding added on both sides of each spatial dimension (>= 0).
        ``'valid'`` is no padding; ``'same'`` pads ``dilation * (k - 1)`` in
        total per dimension, the odd one after (as PyTorch), so that the output
        has the input's size; it needs ``stride=1``.
    dilation : int or tuple of 1 ints, default 1
        Spacing between kernel taps (>= 1).
    groups : int, default 1
        Split the channels into ``groups`` independent convolutions: ``C_in``
        and ``C_out`` must both be multiples of it.  ``groups == C_in`` with
        ``weight`` of shape ``(C_in * m, 1, ...)`` is a depthwise convolution.
    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why.
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, default 'zeros'
        How the padding is filled, as ``torch.nn.Conv1d``'s ``padding_mode``
        (an extension of the functional API): other than ``'zeros'``, the input
        is padded by the mode (``torch.nn.functional.pad``: ``'reflect'`` needs
        each pad smaller than its dimension, ``'circular'`` no larger) and then
        convolved with no padding.  The gradients are
        :func:`convolution_backward`'s with the same ``padding_mode``.

    Returns
    -------
    ndarray, shape ``(N, C_out, L_out)`` or ``(C_out, L_out)``
        Of ``input``'s dtype and array type (``out`` when given); unbatched
        for an unbatched input.  Each output size is ``(size + pad_before +
        pad_after - dilation * (k - 1) - 1) // stride + 1``.

    Raises
    ------
    TypeError
        An argument is not an array and cannot be made one; the arrays'
        dtypes differ (the message says how to cast) or are not supported
        (integer, bool, bfloat16 and object arrays are not); a parameter has
        the wrong type (e.g. a float stride).
    ValueError
        The shapes do not fit: wrong number of dimensions, channels that do
        not match ``weight`` and ``groups`` (the message hints at a
        channels-last input or weight), a kernel larger than the padded input;
        a non-positive stride, dilation or groups, a negative padding,
        ``'same'`` with a stride; an ``out`` of the wrong shape, dtype or
        layout; an unknown ``padding_mode``; a ``backend`` that cannot run the
        call.

    See Also
    --------
    conv_transpose1d : the transposed convolution (the gradient of this one
        with respect to its input).
    convolution_backward : the gradients of this convolution.
    select_backend : which backend a call runs.

    Notes
    -----
    Dtypes: float32 and float64 run natively; float16 is computed in float32
    and rounded once; complex64/complex128 are three real convolutions (not
    conjugated, as PyTorch).  ``input``, ``weight`` and ``bias`` must share
    one dtype.  The arrays may have any strides (views, channels-last,
    Fortran order, read-only, big-endian); array-likes are converted with
    ``numpy.asarray`` and objects that offer only DLPack with
    ``numpy.from_dlpack``.  CuPy arrays run on the GPU (with CuPy
    installed) and give CuPy arrays.

    Backends: a depthwise convolution (``groups == C_in``) runs the direct
    SIMD depthwise kernels (3x3 stride-1 float32 ones may use a Winograd
    variant); other problems run the implicit GEMM on SIMD micro-kernels
    (Winograd F(2x2, 3x3) for suitable 3x3 stride-1 layers), 1x1 and
    backward-friendly cases OpenBLAS GEMM; channels-last inputs take NHWC
    kernels where there are some.  Every backend gives PyTorch's results to
    rounding; :func:`select_backend` tells which one runs.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.arange(6, dtype=np.float32).reshape(1, 1, 6)     # (N, C_in, L)
    >>> w = np.array([[[1, 0, -1]]], dtype=np.float32)           # (C_out, C_in, kL)
    >>> cconv.conv1d(x, w)
    array([[[-2., -2., -2., -2.]]], dtype=float32)
    >>> cconv.conv1d(x, w, padding="same", padding_mode="replicate")
    array([[[-1., -2., -2., -2., -2., -1.]]], dtype=float32)
    """
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
def conv2d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1, padding: Padding = 0,
         dilation: IntOrTuple = 1, groups: int = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> Any:
    """2-D convolution (cross-correlation), as ``torch.nn.functional.conv2d``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, H, W)`` or ``(C_in, H, W)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_out, C_in // groups, kH, kW)``
        The filters, of ``input``'s dtype.
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of 2 ints, default 1
        Step of the kernel over each spatial dimension (>= 1).
    padding : int, tuple of 2 ints, 'valid' or 'same', default 0
        Implicit padding added on both sides of each spatial dimension (>= 0).
        ``'valid'`` is no padding; ``'same'`` pads ``dilation * (k - 1)`` in
        total per dimension, the odd one after (as PyTorch), so that the output
        has the input's size; it needs ``stride=1``.
    dilation : int or tuple of 2 ints, default 1
        Spacing between kernel taps (>= 1).
    groups : int, default 1
        Split the channels into ``groups`` independent convolutions: ``C_in``
        and ``C_out`` must both be multiples of it.  ``groups == C_in`` with
        ``weight`` of shape ``(C_in * m, 1, ...)`` is a depthwise convolution.
    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why.
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, default 'zeros'
        How the padding is filled, as ``torch.nn.Conv2d``'s ``padding_mode``
        (an extension of the functional API): other than ``'zeros'``, the input
        is padded by the mode (``torch.nn.functional.pad``: ``'reflect'`` needs
        each pad smaller than its dimension, ``'circular'`` no larger) and then
        convolved with no padding.  The gradients are
        :func:`convolution_backward`'s with the same ``padding_mode``.

    Returns
    -------
    ndarray, shape ``(N, C_out, H_out, W_out)`` or ``(C_out, H_out, W_out)``
        Of ``input``'s dtype and array type (``out`` when given); unbatched
        for an unbatched input.  Each output size is ``(size + pad_before +
        pad_after - dilation * (k - 1) - 1) // stride + 1``.

    Raises
    ------
    TypeError
        An argument is not an array and cannot be made one; the arrays'
        dtypes differ (the message says how to cast) or are not supported
        (integer, bool, bfloat16 and object arrays are not); a parameter has
        the wrong type (e.g. a float stride).
    ValueError
        The shapes do not fit: wrong number of dimensions, channels that do
        not match ``weight`` and ``groups`` (the message hints at a
        channels-last input or weight), a kernel larger than the padded input;
        a non-positive stride, dilation or groups, a negative padding,
        ``'same'`` with a stride; an ``out`` of the wrong shape, dtype or
        layout; an unknown ``padding_mode``; a ``backend`` that cannot run the
        call.

    See Also
    --------
    conv_transpose2d : the transposed convolution (the gradient of this one
        with respect to its input).
    convolution_backward : the gradients of this convolution.
    select_backend : which backend a call runs.

    Notes
    -----
    Dtypes: float32 and float64 run natively; float16 is computed in float32
    and rounded once; complex64/complex128 are three real convolutions (not
    conjugated, as PyTorch).  ``input``, ``weight`` and ``bias`` must share
    one dtype.  The arrays may have any strides (views, channels-last,
    Fortran order, read-only, big-endian); array-likes are converted with
    ``numpy.asarray`` and objects that offer only DLPack with
    ``numpy.from_dlpack``.  CuPy arrays run on the GPU (with CuPy
    installed) and give CuPy arrays.

    Backends: a depthwise convolution (``groups == C_in``) runs the direct
    SIMD depthwise kernels (3x3 stride-1 float32 ones may use a Winograd
    variant); other problems run the implicit GEMM on SIMD micro-kernels
    (Winograd F(2x2, 3x3) for suitable 3x3 stride-1 layers), 1x1 and
    backward-friendly cases OpenBLAS GEMM; channels-last inputs take NHWC
    kernels where there are some.  Every backend gives PyTorch's results to
    rounding; :func:`select_backend` tells which one runs.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 1, 4, 4), dtype=np.float32)   # (N, C_in, H, W)
    >>> w = np.ones((1, 1, 3, 3), dtype=np.float32)   # (C_out, C_in // groups, kH, kW)
    >>> cconv.conv2d(x, w, padding=1)
    array([[[[4., 6., 6., 4.],
             [6., 9., 9., 6.],
             [6., 9., 9., 6.],
             [4., 6., 6., 4.]]]], dtype=float32)
    >>> cconv.conv2d(x, w, padding=1, padding_mode="reflect")[0, 0, 0]
    array([9., 9., 9., 9.], dtype=float32)
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    >>> w = rng.standard_normal((128, 64, 3, 3), dtype=np.float32)
    >>> cconv.conv2d(x, w, stride=2, padding=1).shape
    (8, 128, 28, 28)
    >>> wd = rng.standard_normal((64, 1, 3, 3), dtype=np.float32)   # depthwise
    >>> cconv.conv2d(x, wd, groups=64, padding="same").shape
    (8, 64, 56, 56)
    """
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
def conv3d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1, padding: Padding = 0,
         dilation: IntOrTuple = 1, groups: int = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: PaddingMode = "zeros") -> Any:
    """3-D convolution (cross-correlation), as ``torch.nn.functional.conv3d``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_out, C_in // groups, kD, kH, kW)``
        The filters, of ``input``'s dtype.
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of 3 ints, default 1
        Step of the kernel over each spatial dimension (>= 1).
    padding : int, tuple of 3 ints, 'valid' or 'same', default 0
        Implicit padding added on both sides of each spatial dimension (>= 0).
        ``'valid'`` is no padding; ``'same'`` pads ``dilation * (k - 1)`` in
        total per dimension, the odd one after (as PyTorch), so that the output
        has the input's size; it needs ``stride=1``.
    dilation : int or tuple of 3 ints, default 1
        Spacing between kernel taps (>= 1).
    groups : int, default 1
        Split the channels into ``groups`` independent convolutions: ``C_in``
        and ``C_out`` must both be multiples of it.  ``groups == C_in`` with
        ``weight`` of shape ``(C_in * m, 1, ...)`` is a depthwise convolution.
    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why.
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, default 'zeros'
        How the padding is filled, as ``torch.nn.Conv3d``'s ``padding_mode``
        (an extension of the functional API): other than ``'zeros'``, the input
        is padded by the mode (``torch.nn.functional.pad``: ``'reflect'`` needs
        each pad smaller than its dimension, ``'circular'`` no larger) and then
        convolved with no padding.  The gradients are
        :func:`convolution_backward`'s with the same ``padding_mode``.

    Returns
    -------
    ndarray, shape ``(N, C_out, D_out, H_out, W_out)`` or ``(C_out, D_out, H_out, W_out)``
        Of ``input``'s dtype and array type (``out`` when given); unbatched
        for an unbatched input.  Each output size is ``(size + pad_before +
        pad_after - dilation * (k - 1) - 1) // stride + 1``.

    Raises
    ------
    TypeError
        An argument is not an array and cannot be made one; the arrays'
        dtypes differ (the message says how to cast) or are not supported
        (integer, bool, bfloat16 and object arrays are not); a parameter has
        the wrong type (e.g. a float stride).
    ValueError
        The shapes do not fit: wrong number of dimensions, channels that do
        not match ``weight`` and ``groups`` (the message hints at a
        channels-last input or weight), a kernel larger than the padded input;
        a non-positive stride, dilation or groups, a negative padding,
        ``'same'`` with a stride; an ``out`` of the wrong shape, dtype or
        layout; an unknown ``padding_mode``; a ``backend`` that cannot run the
        call.

    See Also
    --------
    conv_transpose3d : the transposed convolution (the gradient of this one
        with respect to its input).
    convolution_backward : the gradients of this convolution.
    select_backend : which backend a call runs.

    Notes
    -----
    Dtypes: float32 and float64 run natively; float16 is computed in float32
    and rounded once; complex64/complex128 are three real convolutions (not
    conjugated, as PyTorch).  ``input``, ``weight`` and ``bias`` must share
    one dtype.  The arrays may have any strides (views, channels-last,
    Fortran order, read-only, big-endian); array-likes are converted with
    ``numpy.asarray`` and objects that offer only DLPack with
    ``numpy.from_dlpack``.  CuPy arrays run on the GPU (with CuPy
    installed) and give CuPy arrays.

    Backends: a depthwise convolution (``groups == C_in``) runs the direct
    SIMD depthwise kernels (3x3 stride-1 float32 ones may use a Winograd
    variant); other problems run the implicit GEMM on SIMD micro-kernels
    (Winograd F(2x2, 3x3) for suitable 3x3 stride-1 layers), 1x1 and
    backward-friendly cases OpenBLAS GEMM; channels-last inputs take NHWC
    kernels where there are some.  Every backend gives PyTorch's results to
    rounding; :func:`select_backend` tells which one runs.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((2, 3, 4, 5, 6))             # (N, C_in, D, H, W), float64
    >>> w = np.ones((8, 3, 3, 3, 3))             # (C_out, C_in, kD, kH, kW)
    >>> y = cconv.conv3d(x, w, stride=(1, 2, 2), padding=1)
    >>> y.shape, y.dtype
    ((2, 8, 4, 3, 3), dtype('float64'))
    >>> float(y[0, 0, 1, 1, 1])
    81.0
    """
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
def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
         padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
         dilation: IntOrTuple = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: Literal["zeros"] = "zeros") -> Any:
    """1-D transposed convolution, as ``torch.nn.functional.conv_transpose1d``.

    The gradient of :func:`conv1d` with respect to its input, used as an
    up-sampling layer (sometimes called a deconvolution).

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, L)`` or ``(C_in, L)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_in, C_out // groups, kL)``
        The filters, of ``input``'s dtype (note: input channels first, as
        PyTorch's transposed weights).
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of 1 ints, default 1
        Up-sampling factor of each spatial dimension (>= 1).
    padding : int or tuple of 1 ints, default 0
        ``dilation * (k - 1) - padding`` zeros are implicitly added to each
        side (>= 0; strings are not accepted, as in PyTorch).
    output_padding : int or tuple of 1 ints, default 0
        Extra size added on one side of each output dimension, to pick among
        the output sizes a strided convolution maps to the same input size;
        smaller than ``stride`` or ``dilation``.
    groups : int, default 1
        ``C_in`` and ``C_out`` must both be multiples of it.
    dilation : int or tuple of 1 ints, default 1
        Spacing between kernel taps (>= 1).
    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why.
    padding_mode : {'zeros'}, default 'zeros'
        Only ``'zeros'``, as ``torch.nn.ConvTranspose1d`` (another mode is a
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``(N, C_out, L_out)`` or ``(C_out, L_out)``
        Of ``input``'s dtype and array type (``out`` when given).  Each output
        size is ``(size - 1) * stride - 2 * padding + dilation * (k - 1) +
        output_padding + 1``.

    Raises
    ------
    TypeError
        An argument is not an array and cannot be made one; the arrays'
        dtypes differ (the message says how to cast) or are not supported
        (integer, bool, bfloat16 and object arrays are not); a parameter has
        the wrong type (e.g. a float stride).
    ValueError
        The shapes do not fit: wrong number of dimensions, channels that do
        not match ``weight`` and ``groups`` (the message hints at a
        channels-last input or weight), a kernel larger than the padded input;
        a non-positive stride, dilation or groups, a negative padding,
        ``'same'`` with a stride; an ``out`` of the wrong shape, dtype or
        layout; an unknown ``padding_mode``; a ``backend`` that cannot run the
        call.

    See Also
    --------
    conv1d : the convolution this one is the input gradient of.
    convolution_backward : the gradients (``transposed=True``).

    Notes
    -----
    Dtypes: float32 and float64 run natively; float16 is computed in float32
    and rounded once; complex64/complex128 are three real convolutions (not
    conjugated, as PyTorch).  ``input``, ``weight`` and ``bias`` must share
    one dtype.  The arrays may have any strides (views, channels-last,
    Fortran order, read-only, big-endian); array-likes are converted with
    ``numpy.asarray`` and objects that offer only DLPack with
    ``numpy.from_dlpack``.  CuPy arrays run on the GPU (with CuPy
    installed) and give CuPy arrays.

    Backends: the GEMM backend's transposed form (OpenBLAS GEMM and col2im),
    or the depthwise kernels for a depthwise problem.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.array([[[1.0, 2.0, 3.0]]])           # (N, C_in, L)
    >>> w = np.array([[[1.0, 1.0]]])                # (C_in, C_out // groups, kL)
    >>> cconv.conv_transpose1d(x, w, stride=2)
    array([[[1., 1., 2., 2., 3., 3.]]])
    """
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
def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
         padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
         dilation: IntOrTuple = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: Literal["zeros"] = "zeros") -> Any:
    """2-D transposed convolution, as ``torch.nn.functional.conv_transpose2d``.

    The gradient of :func:`conv2d` with respect to its input, used as an
    up-sampling layer (sometimes called a deconvolution).

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, H, W)`` or ``(C_in, H, W)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_in, C_out // groups, kH, kW)``
        The filters, of ``input``'s dtype (note: input channels first, as
        PyTorch's transposed weights).
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of 2 ints, default 1
        Up-sampling factor of each spatial dimension (>= 1).
    padding : int or tuple of 2 ints, default 0
        ``dilation * (k - 1) - padding`` zeros are implicitly added to each
        side (>= 0; strings are not accepted, as in PyTorch).
    output_padding : int or tuple of 2 ints, default 0
        Extra size added on one side of each output dimension, to pick among
        the output sizes a strided convolution maps to the same input size;
        smaller than ``stride`` or ``dilation``.
    groups : int, default 1
        ``C_in`` and ``C_out`` must both be multiples of it.
    dilation : int or tuple of 2 ints, default 1
        Spacing between kernel taps (>= 1).
    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why.
    padding_mode : {'zeros'}, default 'zeros'
        Only ``'zeros'``, as ``torch.nn.ConvTranspose2d`` (another mode is a
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``(N, C_out, H_out, W_out)`` or ``(C_out, H_out, W_out)``
        Of ``input``'s dtype and array type (``out`` when given).  Each output
        size is ``(size - 1) * stride - 2 * padding + dilation * (k - 1) +
        output_padding + 1``.

    Raises
    ------
    TypeError
        An argument is not an array and cannot be made one; the arrays'
        dtypes differ (the message says how to cast) or are not supported
        (integer, bool, bfloat16 and object arrays are not); a parameter has
        the wrong type (e.g. a float stride).
    ValueError
        The shapes do not fit: wrong number of dimensions, channels that do
        not match ``weight`` and ``groups`` (the message hints at a
        channels-last input or weight), a kernel larger than the padded input;
        a non-positive stride, dilation or groups, a negative padding,
        ``'same'`` with a stride; an ``out`` of the wrong shape, dtype or
        layout; an unknown ``padding_mode``; a ``backend`` that cannot run the
        call.

    See Also
    --------
    conv2d : the convolution this one is the input gradient of.
    convolution_backward : the gradients (``transposed=True``).

    Notes
    -----
    Dtypes: float32 and float64 run natively; float16 is computed in float32
    and rounded once; complex64/complex128 are three real convolutions (not
    conjugated, as PyTorch).  ``input``, ``weight`` and ``bias`` must share
    one dtype.  The arrays may have any strides (views, channels-last,
    Fortran order, read-only, big-endian); array-likes are converted with
    ``numpy.asarray`` and objects that offer only DLPack with
    ``numpy.from_dlpack``.  CuPy arrays run on the GPU (with CuPy
    installed) and give CuPy arrays.

    Backends: the GEMM backend's transposed form (OpenBLAS GEMM and col2im),
    or the depthwise kernels for a depthwise problem.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((4, 256, 8, 8), dtype=np.float32)
    >>> w = rng.standard_normal((256, 128, 4, 4), dtype=np.float32)   # (C_in, C_out, kH, kW)
    >>> cconv.conv_transpose2d(x, w, stride=2, padding=1).shape       # a DCGAN up-sampling
    (4, 128, 16, 16)
    >>> cconv.conv_transpose2d(x, w, stride=2, output_padding=1).shape
    (4, 128, 19, 19)
    """
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
def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: IntOrTuple = 1,
         padding: IntOrTuple = 0, output_padding: IntOrTuple = 0, groups: int = 1,
         dilation: IntOrTuple = 1, *, out: Any = None, backend: BackendArg = None,
         padding_mode: Literal["zeros"] = "zeros") -> Any:
    """3-D transposed convolution, as ``torch.nn.functional.conv_transpose3d``.

    The gradient of :func:`conv3d` with respect to its input, used as an
    up-sampling layer (sometimes called a deconvolution).

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_in, C_out // groups, kD, kH, kW)``
        The filters, of ``input``'s dtype (note: input channels first, as
        PyTorch's transposed weights).
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of 3 ints, default 1
        Up-sampling factor of each spatial dimension (>= 1).
    padding : int or tuple of 3 ints, default 0
        ``dilation * (k - 1) - padding`` zeros are implicitly added to each
        side (>= 0; strings are not accepted, as in PyTorch).
    output_padding : int or tuple of 3 ints, default 0
        Extra size added on one side of each output dimension, to pick among
        the output sizes a strided convolution maps to the same input size;
        smaller than ``stride`` or ``dilation``.
    groups : int, default 1
        ``C_in`` and ``C_out`` must both be multiples of it.
    dilation : int or tuple of 3 ints, default 1
        Spacing between kernel taps (>= 1).
    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why.
    padding_mode : {'zeros'}, default 'zeros'
        Only ``'zeros'``, as ``torch.nn.ConvTranspose3d`` (another mode is a
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``(N, C_out, D_out, H_out, W_out)`` or ``(C_out, D_out, H_out, W_out)``
        Of ``input``'s dtype and array type (``out`` when given).  Each output
        size is ``(size - 1) * stride - 2 * padding + dilation * (k - 1) +
        output_padding + 1``.

    Raises
    ------
    TypeError
        An argument is not an array and cannot be made one; the arrays'
        dtypes differ (the message says how to cast) or are not supported
        (integer, bool, bfloat16 and object arrays are not); a parameter has
        the wrong type (e.g. a float stride).
    ValueError
        The shapes do not fit: wrong number of dimensions, channels that do
        not match ``weight`` and ``groups`` (the message hints at a
        channels-last input or weight), a kernel larger than the padded input;
        a non-positive stride, dilation or groups, a negative padding,
        ``'same'`` with a stride; an ``out`` of the wrong shape, dtype or
        layout; an unknown ``padding_mode``; a ``backend`` that cannot run the
        call.

    See Also
    --------
    conv3d : the convolution this one is the input gradient of.
    convolution_backward : the gradients (``transposed=True``).

    Notes
    -----
    Dtypes: float32 and float64 run natively; float16 is computed in float32
    and rounded once; complex64/complex128 are three real convolutions (not
    conjugated, as PyTorch).  ``input``, ``weight`` and ``bias`` must share
    one dtype.  The arrays may have any strides (views, channels-last,
    Fortran order, read-only, big-endian); array-likes are converted with
    ``numpy.asarray`` and objects that offer only DLPack with
    ``numpy.from_dlpack``.  CuPy arrays run on the GPU (with CuPy
    installed) and give CuPy arrays.

    Backends: the GEMM backend's transposed form (OpenBLAS GEMM and col2im),
    or the depthwise kernels for a depthwise problem.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 4, 2, 3, 3), dtype=np.float32)
    >>> w = np.ones((4, 2, 2, 2, 2), dtype=np.float32)   # (C_in, C_out // groups, kD, kH, kW)
    >>> y = cconv.conv_transpose3d(x, w, stride=2)
    >>> y.shape
    (1, 2, 4, 6, 6)
    >>> float(y.sum()) == 4 * 2 * 3 * 3 * 2 * 8
    True
    """
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
                   output_padding: IntOrTuple = 0, groups: int = 1,
                   need_backward: bool = False) -> Backend:
    """The backend a forward call with these arguments would run.

    Parameters
    ----------
    input : ndarray
        The input, batched ``(N, C_in, *spatial)`` or unbatched; only its
        shape, dtype and array type are read.
    weight : ndarray
        The weight, as for :func:`convolution`.
    bias : ndarray, optional
        The bias, ``(C_out,)``.
    stride, padding, dilation, transposed, output_padding, groups
        As for :func:`convolution` (defaults as :func:`conv2d`).
    need_backward : bool, default False
        Choose among the backends that can also run the gradients (what
        benchmark mode and :func:`convolution_backward` use).

    Returns
    -------
    Backend
        The member of :class:`Backend` that would run the call (benchmark
        mode's cached winner aside).

    Raises
    ------
    TypeError, ValueError
        As the forward call would raise for these arguments.

    See Also
    --------
    Backend, conv2d

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.zeros((1, 32, 28, 28), np.float32)
    >>> cconv.select_backend(x, np.zeros((32, 1, 3, 3), np.float32), groups=32, padding=1)
    <Backend.DEPTHWISE: 'depthwise'>
    >>> cconv.select_backend(x, np.zeros((64, 32, 1, 1), np.float32))
    <Backend.GEMM: 'gemm'>
    """
    fn = "select_backend"
    xp = get_xp(input=input, weight=weight, bias=bias)
    input = as_array(xp, "input", input, fn)
    weight = as_array(xp, "weight", weight, fn)
    bias = as_array(xp, "bias", bias, fn)
    dt = check_dtypes(fn, input=input, weight=weight, bias=bias)
    shape = tuple(input.shape)
    if len(shape) == weight.ndim - 1:
        shape = (1,) + shape
    p = make_params(shape, weight.shape, None if bias is None else bias.shape, stride, padding, dilation,
                    check_flag(fn, "transposed", transposed), output_padding, groups, fn,
                    compute_dtype(dt))
    b, _ = select(p, xp, None, need_backward)
    return b
