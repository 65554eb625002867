"""The forward API: conv1d/2d/3d, conv_transpose1d/2d/3d and convolution.

A call is normalised here (array module, array-likes, dtypes, unbatched
input), checked by ``_params.make_params``, and run on the backend that
``_dispatch.select`` picks.  float16 is computed in float32; complex uses the
Gauss trick (three real convolutions).  Backends only ever see real
float32/float64 C-contiguous batched arrays.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Union

import numpy as np

from . import _autotune, _dask, _layout, _outbuf
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
Padding = Union[int, Sequence[int], str]

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
        try:
            a = np.asarray(a)
        except Exception as e:
            raise TypeError(f"{fn}: {name} could not be converted to an array ({e})") from None
    return a


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
                f"{fn}: {first} dtype ({dt}) and {name} dtype ({d}) should be the same"
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
        if _dask.any_dask(input, weight, bias, out):
            return _dask.forward(fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed,
                                 output_padding, out, backend)
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
                   groups: int = 1, need_backward: bool = False) -> Backend:
    """The backend a forward call with these arguments would run.

    ``input`` may be batched or unbatched; arrays may also be shape tuples'
    worth of real arrays (only shapes and dtypes are read)."""
    fn = "select_backend"
    if _dask.any_dask(input, weight, bias):   # shapes and dtypes only: nothing computed
        input, weight, bias = _dask.stand_ins(input, weight, bias)
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
