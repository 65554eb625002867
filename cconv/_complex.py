"""Complex convolutions from real ones, in the form PyTorch computes them.

PyTorch convolves complex arrays with the Gauss trick: three real
convolutions a = conv(x_r, w_r) + b_r, b = conv(x_i, w_i) and
c = conv(x_r + x_i, w_r + w_i) + b_r + b_i, combined as
y = (a - b) + i * (c - a - b); its autograd differentiates through them.
cconv does the same, so results, and the NaN/inf patterns of non-finite
data, are PyTorch's (not conjugated: a convolution, not a correlation of
complex vectors).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ._args import compute_dtype, real_contig
from ._config import result_empty

__all__ = ["quiet_add", "forward", "grad_parts", "shared_grad_parts", "gauss_sum"]


def quiet_add(a, b):
    """a + b with inf + -inf = NaN and no NumPy warning."""
    with np.errstate(invalid="ignore", over="ignore"):
        return a + b


def forward(xp, shape: tuple, nsp: int, x, w, b, out, real: Callable):
    """The complex forward of ``x`` and ``w`` (complex, any strides) with
    bias ``b`` (complex or None), of ``shape``, into ``out`` when given.
    ``real(x, w, y)`` computes one real convolution (no bias) into the
    real C-contiguous array ``y``."""
    cdt = compute_dtype(np.dtype(x.dtype))
    xr, xi = real_contig(xp, x.real, cdt), real_contig(xp, x.imag, cdt)
    wr, wi = real_contig(xp, w.real, cdt), real_contig(xp, w.imag, cdt)
    t1 = result_empty(xp, shape, cdt)
    t2 = result_empty(xp, shape, cdt)
    t3 = result_empty(xp, shape, cdt)
    real(xr, wr, t1)
    real(xi, wi, t2)
    xs, ws = quiet_add(xr, xi), quiet_add(wr, wi)
    real(xs, ws, t3)
    del xs, ws
    y = out if out is not None else result_empty(xp, shape, x.dtype)
    bshape = (1, -1) + (1,) * nsp
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
    _nonfinite_as_torch(xp, t1, t3, None if b is None else b.real.reshape(bshape))
    y.real = t1
    y.imag = t3
    return y


def _nonfinite_as_torch(xp, re, im, bias_re) -> None:
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


def grad_parts(xp, gy, cdt):
    """The real grad_outputs of PyTorch's three real convolutions for the
    complex grad_output ``gy``.  Its autograd hands r = c - a - b the real
    part of gy * conj(i), which is 0 * gy_r + gy_i: NaN wherever gy_r is not
    finite.  So, with g_c = gy_i there NaN: a gets gy_r - g_c, b gets
    -gy_r - g_c and c gets g_c; for finite values this is the usual
    x_r' = a' + c', x_i' = b' + c' of the Gauss trick.  Three new
    C-contiguous real arrays of ``cdt``."""
    gr = real_contig(xp, gy.real, cdt)
    gc = gy.imag.astype(cdt, order="C", copy=True)
    with np.errstate(invalid="ignore", over="ignore"):
        bad = ~xp.isfinite(gr)
        if bad.any():
            gc[bad] = np.nan
        ga = gr - gc
        gb = -gr
        gb -= gc
    return ga, gb, gc


def shared_grad_parts(xp, gy, uses: int):
    """grad_parts of a complex ``gy`` that ``uses`` >= 2 gradients read
    (computed once for them), else None (each computes its own, or none is
    needed)."""
    dt = np.dtype(gy.dtype)
    if dt.kind != "c" or uses < 2 or gy.size == 0:
        return None
    return grad_parts(xp, gy, compute_dtype(dt))


def gauss_sum(xp, shape, dt, p, q, s_fn):
    """The complex array p + s + i (q + s) of ``shape`` and ``dt``; s =
    s_fn() is computed after p and q exist (one fewer temporary alive)."""
    s = s_fn()
    with np.errstate(invalid="ignore", over="ignore"):
        p += s
        q += s
    del s
    res = result_empty(xp, shape, dt)
    res.real = p
    res.imag = q
    return res
