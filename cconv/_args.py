"""Argument preparation shared by the forward and backward entry points:
arrays and array-likes, the dtype rules, ``out=``, the kernels' array
requirements, and the bounded caches of checked parameters (``Plan``)."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._params import ConvParams, make_params

__all__ = [
    "REAL", "as_array", "base_ndarray", "check_dtypes", "compute_dtype", "real_contig", "check_out", "native",
    "ready", "NoKey", "hk", "remember", "Plan", "forward_plan",
]

REAL = (np.dtype(np.float32), np.dtype(np.float64))
_ALLOWED = {np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128)}


def as_array(xp, name: str, a: Any, fn: str):
    """``a`` as an array of module ``xp``: array-likes through asarray, an
    ndarray subclass (np.matrix, np.memmap, ...) as its base ndarray (the
    same memory; their own indexing and arithmetic rules would reach the
    internals), a masked array refused with a TypeError (its mask would be
    ignored)."""
    if a is None:
        if name in ("input", "weight", "grad_output"):
            raise TypeError(f"{fn}: {name} must be an array, not None")
        return None
    if xp is np and type(a) is not np.ndarray:
        if isinstance(a, np.ndarray):
            return base_ndarray(name, a, fn)
        try:
            a = np.asarray(a)
        except Exception as e:
            raise TypeError(f"{fn}: {name} could not be converted to an array ({e})") from None
    return a


def base_ndarray(name: str, a: np.ndarray, fn: str) -> np.ndarray:
    """The plain ndarray view of an ndarray subclass; TypeError naming a
    masked array, whose mask cconv cannot honour."""
    ma = sys.modules.get("numpy.ma")
    if ma is not None and isinstance(a, ma.MaskedArray):
        raise TypeError(
            f"{fn}: {name} is a numpy.ma.MaskedArray, which cconv does not take (its mask would be "
            f"ignored); pass {name}.filled(value) or numpy.asarray({name}) for its data"
        )
    return a.view(np.ndarray)


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


def native(a):
    """``a`` in native byte order (a copy when it is not)."""
    if a is None or a.dtype.isnative:
        return a
    return a.astype(a.dtype.newbyteorder("="))


def ready(a) -> bool:
    """A NumPy array the kernels can read as it is: C-contiguous, aligned."""
    f = a.flags
    return f.c_contiguous and f.aligned


# --------------------------------------------------------------------------
# caches of checked parameters
# --------------------------------------------------------------------------
class NoKey(Exception):
    """An argument that cannot be part of a cache key (computed, not kept)."""


def hk(v):
    """``v`` as a cache-key part: an exact int or str itself; a tuple or
    list of ints (NumPy integers included, as torch code passes them) as a
    tuple of ints; a NumPy integer as an int.  NoKey for anything else (so
    a key cannot confuse True with 1)."""
    t = type(v)
    if t is int or t is str:
        return v
    if t is tuple or t is list:
        out = []
        for e in v:
            if type(e) is int:
                out.append(e)
            elif isinstance(e, np.integer):
                out.append(int(e))
            else:
                raise NoKey
        return tuple(out)
    if isinstance(v, np.integer):
        return int(v)
    raise NoKey


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


class Plan:
    """A forward call's checked parameters, and what its common case runs.

    ``p``: the batched problem (ConvParams, the user's dtype); ``unbatched``:
    the input had no batch axis.  For the common call (NumPy, C-contiguous
    float32/float64, no ``backend=``), ``method``/``check_w`` are the module
    the dispatcher chose for ``threads`` threads and whether it needs the
    weight checked for NaN/inf first (set on first use), ``small_out``
    whether the result is too small for the block cache; ``generation``
    the dispatcher's generation of measured winners the choice was made in
    (``_dispatch.GENERATION``)."""

    __slots__ = ("p", "unbatched", "threads", "generation", "method", "check_w", "small_out")

    def __init__(self, p: ConvParams, unbatched: bool) -> None:
        self.p = p
        self.unbatched = unbatched
        self.threads = 0
        self.generation = -1
        self.method = None
        self.check_w = False
        self.small_out = None


# (fn, xp, shapes, dtypes, arguments) -> Plan.  make_params is a pure
# function of the key, so a hit skips only work whose outcome is known;
# calls that raise never enter.
_plans: dict[tuple, Plan] = {}


def _make_plan(fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed,
               output_padding) -> Plan:
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
    return Plan(p, unbatched)


def forward_plan(fn, nsp, xp, input, weight, bias, stride, padding, dilation, groups, transposed,
                 output_padding) -> Plan:
    """The Plan of a forward call, after every check (cached)."""
    try:
        # (ints, the common arguments, inline: a call to hk each is 0.1 us)
        key = (fn, xp, input.shape, input.dtype, weight.shape, weight.dtype,
               None if bias is None else (bias.shape, bias.dtype),
               stride if type(stride) is int else hk(stride),
               padding if type(padding) is int else hk(padding),
               dilation if type(dilation) is int else hk(dilation),
               groups if type(groups) is int else hk(groups), transposed,
               output_padding if type(output_padding) is int else hk(output_padding))
        plan = _plans.get(key)
    except (NoKey, TypeError):
        key, plan = None, None
    if plan is None:
        plan = remember(_plans, key, lambda: _make_plan(
            fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed,
            output_padding))
    return plan
