"""A small float64 NumPy direct-convolution reference.

Independent of the compiled core: zero padding, a dilated strided window view
(``sliding_window_view``) and ``tensordot``/``einsum`` per group.  It is slow
but obviously right, and is what ``cconv bench`` (and ``benches/``) check the
real backends against.  Everything is computed in float64 (complex128 for
complex input); the result is float64/complex128.

Only the batched layout is handled ``(N, C, *spatial)``; parameters are ints or
per-dimension tuples.  ``padding`` may also be ``'valid'`` or ``'same'`` for a
plain convolution.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["conv_ref", "conv_transpose_ref", "convolution_ref", "convolution_backward_ref"]


def _tup(v, n, name):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(e) for e in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name} must have {n} entries, got {v}")
    return v


def _pad(x, pads):
    """Pad the spatial axes of x with zeros; pads are (before, after) pairs and
    may be negative (then that side is cropped)."""
    x = np.pad(x, [(0, 0), (0, 0)] + [(max(a, 0), max(b, 0)) for a, b in pads])
    sl = tuple(slice(max(-a, 0), x.shape[2 + i] - max(-b, 0)) for i, (a, b) in enumerate(pads))
    return x[(slice(None), slice(None)) + sl]


def _windows(xp, k, s, d):
    """(N, C, *out, *k) view of the padded input: the dilated, strided windows."""
    nsp = len(k)
    axes = tuple(range(2, 2 + nsp))
    ext = tuple(d[i] * (k[i] - 1) + 1 for i in range(nsp))
    v = sliding_window_view(xp, ext, axis=axes)
    return v[(slice(None), slice(None)) + tuple(slice(None, None, st) for st in s)
             + tuple(slice(None, None, dl) for dl in d)]


def _conv(x, w, s, pads, d, groups):
    """Plain (cross-correlation) convolution, float64/complex128, no bias."""
    nsp = x.ndim - 2
    k = w.shape[2:]
    v = _windows(_pad(x, pads), k, s, d)                  # (N, C, *out, *k)
    n, c = x.shape[:2]
    out_sp = v.shape[2:2 + nsp]
    cg, og = c // groups, w.shape[0] // groups
    vg = v.reshape((n, groups, cg) + v.shape[2:])         # no copy: splits C
    wg = w.reshape((groups, og, cg) + tuple(k))
    y = np.empty((n, groups, og) + out_sp, dtype=np.result_type(x, w))
    if groups == 1 or cg * int(np.prod(k)) >= 32:
        # one BLAS contraction per group over (C/g, *k)
        for g in range(groups):
            t = np.tensordot(vg[:, g], wg[g], axes=([1] + list(range(2 + nsp, 2 + 2 * nsp)),
                                                    [1] + list(range(2, 2 + nsp))))
            y[:, g] = np.moveaxis(t, -1, 1)               # (N, *out, og) -> (N, og, *out)
    else:
        # many thin groups (depthwise): accumulate tap by tap over all groups
        y[...] = 0
        for tap in np.ndindex(*k):
            xt = vg[(Ellipsis,) + tap]                    # (N, G, cg, *out)
            y += np.einsum("ngc...,gdc->ngd...", xt, wg[(Ellipsis,) + tap])
    return y.reshape((n, groups * og) + out_sp)


def _prep(x, w, b):
    ct = np.complex128 if (np.iscomplexobj(x) or np.iscomplexobj(w)
                           or (b is not None and np.iscomplexobj(b))) else np.float64
    x, w = np.asarray(x, dtype=ct), np.asarray(w, dtype=ct)
    unbatched = x.ndim == w.ndim - 1
    if unbatched:
        x = x[None]
    if x.ndim != w.ndim or x.ndim < 3:
        raise ValueError(f"input {x.shape} and weight {w.shape} ranks do not fit")
    return x, w, (None if b is None else np.asarray(b, dtype=ct)), unbatched


def _finish(y, b, unbatched):
    if b is not None:
        y += b.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y[0] if unbatched else y


def conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """``torch.nn.functional.conv{1,2,3}d`` in float64."""
    x, w, b, ub = _prep(x, w, b)
    nsp = x.ndim - 2
    s, d = _tup(stride, nsp, "stride"), _tup(dilation, nsp, "dilation")
    k = w.shape[2:]
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * nsp
        elif padding == "same":
            tot = [d[i] * (k[i] - 1) for i in range(nsp)]
            pads = [(t // 2, t - t // 2) for t in tot]
        else:
            raise ValueError(f"unknown padding {padding!r}")
    else:
        pads = [(p, p) for p in _tup(padding, nsp, "padding")]
    return _finish(_conv(x, w, s, pads, d, groups), b, ub)


def _transpose_weight(w, groups):
    """(C_in, C_out/g, *k) transposed weight -> (C_out, C_in/g, *k) flipped plain weight."""
    cin, og = w.shape[:2]
    k = w.shape[2:]
    wg = w.reshape((groups, cin // groups, og) + k).swapaxes(1, 2)
    wg = wg[(Ellipsis,) + (slice(None, None, -1),) * len(k)]
    return wg.reshape((groups * og, cin // groups) + k)


def conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """``torch.nn.functional.conv_transpose{1,2,3}d`` in float64: zeros inserted
    between input samples, then a plain convolution with the flipped weight."""
    x, w, b, ub = _prep(x, w, b)
    nsp = x.ndim - 2
    s, d = _tup(stride, nsp, "stride"), _tup(dilation, nsp, "dilation")
    p, op = _tup(padding, nsp, "padding"), _tup(output_padding, nsp, "output_padding")
    k = w.shape[2:]
    up = np.zeros(x.shape[:2] + tuple((x.shape[2 + i] - 1) * s[i] + 1 for i in range(nsp)), x.dtype)
    up[(slice(None), slice(None)) + tuple(slice(None, None, si) for si in s)] = x
    pads = [(d[i] * (k[i] - 1) - p[i], d[i] * (k[i] - 1) - p[i] + op[i]) for i in range(nsp)]
    y = _conv(up, _transpose_weight(w, groups), (1,) * nsp, pads, d, groups)
    return _finish(y, b, ub)


def convolution_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """``torch.convolution`` in float64."""
    if transposed:
        return conv_transpose_ref(x, w, b, stride, padding, output_padding, groups, dilation)
    return conv_ref(x, w, b, stride, padding, dilation, groups)


def _grad_weight_plain(x, gy, kshape, s, p, d, groups):
    """dL/dW of a plain convolution (no conjugation): correlate x with gy."""
    nsp = x.ndim - 2
    v = _windows(_pad(x, [(pi, pi) for pi in p]), kshape, s, d)
    v = v[(slice(None), slice(None)) + tuple(slice(0, gy.shape[2 + i]) for i in range(nsp))]
    n, c = x.shape[:2]
    cg, og = c // groups, gy.shape[1] // groups
    vg = v.reshape((n, groups, cg) + v.shape[2:])
    gyg = gy.reshape((n, groups, og) + gy.shape[2:])
    gw = np.empty((groups, og, cg) + tuple(kshape), dtype=np.result_type(x, gy))
    sum_axes = [0] + list(range(2, 2 + nsp))
    for g in range(groups):
        gw[g] = np.tensordot(gyg[:, g], vg[:, g], axes=(sum_axes, [0] + list(range(2, 2 + nsp))))
    return gw.reshape((groups * og, cg) + tuple(kshape))


def convolution_backward_ref(gy, x, w, stride, padding, dilation, transposed, output_padding, groups):
    """(grad_input, grad_weight, grad_bias) of ``torch.convolution``, float64,
    real arithmetic (for complex data autograd conjugates: pass conj(w) / conj(x))."""
    gy, x, w = (np.asarray(a, dtype=np.result_type(a, np.float64)) for a in (gy, x, w))
    nsp = x.ndim - 2
    s, d = _tup(stride, nsp, "stride"), _tup(dilation, nsp, "dilation")
    p = _tup(padding, nsp, "padding")
    k = w.shape[2:]
    gb = gy.sum(axis=(0,) + tuple(range(2, gy.ndim)))
    if not transposed:
        # input size may not be reachable exactly by the transposed conv: add output_padding
        in_sz = x.shape[2:]
        base = [(gy.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1 for i in range(nsp)]
        op = [in_sz[i] - base[i] for i in range(nsp)]
        up = np.zeros(gy.shape[:2] + tuple((gy.shape[2 + i] - 1) * s[i] + 1 for i in range(nsp)), gy.dtype)
        up[(slice(None), slice(None)) + tuple(slice(None, None, si) for si in s)] = gy
        pads = [(d[i] * (k[i] - 1) - p[i], d[i] * (k[i] - 1) - p[i] + op[i]) for i in range(nsp)]
        gx = _conv(up, _transpose_weight(w, groups), (1,) * nsp, pads, d, groups)
        gw = _grad_weight_plain(x, gy, k, s, p, d, groups)
    else:
        gx = _conv(gy, w, s, [(pi, pi) for pi in p], d, groups)
        # an output_padding >= stride (allowed when < dilation) adds a position
        # that no input sample reaches: crop to the input's size
        gx = gx[(slice(None), slice(None)) + tuple(slice(0, n) for n in x.shape[2:])]
        gw = _grad_weight_plain(gy, x, k, s, p, d, groups)
    return gx, gw, gb
