"""Running an operation on the method the dispatcher names.

``run`` computes one operation (forward, grad_input, grad_weight) of a real
problem: it asks ``_dispatch.select`` (or benchmark mode) for the method,
honours the method's NaN rule (a non-finite weight checked first, or the
kernel's own report), and adapts the input's memory layout where a
channels-first method runs a channels-last input.  ``forward_any`` is the
forward for any supported dtype and layout (float16 through float32,
complex by the Gauss trick), on which the entry points and the double
backward build.
"""
from __future__ import annotations

import numpy as np

from . import _autotune, _complex, _depthwise, _dispatch, _layout
from ._args import REAL, compute_dtype, native, real_contig
from ._array import narrow, narrow_into
from ._config import result_empty
from ._dispatch import Problem, nonfinite_rule, select

__all__ = ["run", "attempt", "forward_any"]


def _call(mod, q: Problem, a, c, bias, out):
    p = q.p
    if q.op == "forward":
        return mod.forward(p, a, c, bias, out)
    if q.op == "grad_input":
        return mod.grad_input(p, a, c, out)
    return mod.grad_weight(p, a, c, out)


def attempt(mod, q: Problem, a, c, bias, out) -> bool:
    """Compute ``q`` by ``mod`` into ``out``; True when it could not give
    the direct NaN/inf pattern (a non-finite weight it would mishandle, or
    its kernel stopped at a NaN or an infinity), ``out`` then unfinished.

    Operands by operation: forward (x=a, w=c, bias), grad_input (gy=a,
    w=c), grad_weight (x=a, gy=c); real, ``q.p.dtype``, C-contiguous, but
    for a channels-last forward ``a`` and (unless C-contiguous) ``out``
    are NCHW views of channels-last memory."""
    if q.op != "grad_weight" and nonfinite_rule(mod, q) == "weight" and not _depthwise.all_finite(c):
        return True
    if q.channels_last and not getattr(mod, "CHANNELS_LAST", False):
        # a channels-first method on a channels-last input: the copies
        xc = _layout.to_channels_first(a)
        if out.flags.c_contiguous:
            return bool(_call(mod, q, xc, c, bias, out))
        yc = result_empty(np, out.shape, out.dtype)
        if _call(mod, q, xc, c, bias, yc):
            return True
        _layout.to_channels_last(yc, out)
        return False
    return bool(_call(mod, q, a, c, bias, out))


def run(q: Problem, a, c, bias, out, backend=None):
    """Compute ``q`` into ``out`` (operands as ``attempt``) on the method
    the dispatcher chooses, or ``backend``; returns ``out``."""
    if backend is None and _autotune.get_benchmark() and _dispatch.tuned(q) is None:
        _autotune.tune(q, lambda mod: attempt(mod, q, a, c, bias, out))
        return out
    _, mod = select(q, backend)
    if attempt(mod, q, a, c, bias, out):
        # a NaN or an infinity the method would mishandle: the choice for
        # such data (never one that stops again)
        weight_ok = q.op == "grad_weight" or _depthwise.all_finite(c)
        q = q._replace(finite_weight=weight_ok, finite_data=False)
        _, mod = select(q, backend)
        if attempt(mod, q, a, c, bias, out):  # pragma: no cover - guarded by _dispatch
            raise RuntimeError(f"cconv: {mod.BACKEND.name} could not compute non-finite data")
    return out


def _cast_keep_layout(x, cdt):
    """``x`` in ``cdt`` with its channels-last memory kept (aligned)."""
    if x.dtype != cdt:
        x = x.astype(cdt)  # order 'K': stays channels last
        if x.flags.c_contiguous or not _layout.is_channels_last(x):
            nd = x.ndim
            x = x.transpose((0,) + tuple(range(2, nd)) + (1,)).copy().transpose(
                (0, nd - 1) + tuple(range(1, nd - 1)))
    if not x.flags.aligned:
        x = x.copy(order="K")
    return x


def forward_any(p, xp, x, w, b, out=None, backend=None, need_backward=False):
    """The forward of ``p`` for any supported dtype (batched arrays).

    ``x``, ``w``, ``b`` are arrays of the user's dtype ``dt`` (any strides);
    the result has ``p.output_shape`` and dtype ``dt`` (channels last for a
    channels-last NumPy ``x``); ``out`` (C-contiguous, checked) is written
    when given."""
    if xp is np:
        x, w, b = native(x), native(w), native(b)
        if not x.flags.aligned:  # an aligned copy, same memory layout
            x = x.copy(order="K")
    dt = np.dtype(x.dtype)
    cdt = compute_dtype(dt)
    shape = p.output_shape
    pr = p.with_dtype(cdt)
    cl = xp is np and x.ndim >= 3 and _layout.is_channels_last(x)
    if dt.kind == "c":
        if cl:  # the Gauss trick on channels-first parts; the result channels last
            y = forward_any(p, xp, _layout.to_channels_first(x), w, b, out, backend, need_backward)
            return y if out is not None else _layout.to_channels_last(y)
        q = Problem(pr, xp, "forward", need_backward=need_backward)
        return _complex.forward(xp, shape, p.nsp, x, w, b, out,
                                lambda xx, ww, yy: run(q, xx, ww, None, yy, backend))
    q = Problem(pr, xp, "forward", cl, need_backward)
    xr = _cast_keep_layout(x, cdt) if cl else real_contig(xp, x, cdt)
    wr, br = real_contig(xp, w, cdt), real_contig(xp, b, cdt)
    if dt in REAL:
        if out is None:
            out = _layout.empty_channels_last(shape, dt) if cl else result_empty(xp, shape, dt)
        return run(q, xr, wr, br, out, backend)
    # float16: computed in float32, rounded once
    y32 = _layout.empty_channels_last(shape, cdt) if cl and out is None else result_empty(xp, shape, cdt)
    run(q, xr, wr, br, y32, backend)
    if out is None:
        return narrow(y32, dt)  # order 'K': the layout kept
    narrow_into(out, y32)
    return out
