"""Independent float64 / complex128 reference for cconv's tests.

Plain NumPy, written from the definition of a (PyTorch-style, i.e.
cross-correlation) convolution: one loop over the kernel taps, each tap a
strided slice of the padded input contracted with ``einsum`` over the
channels of its group.  Nothing here imports cconv.

Conventions (PyTorch's):

* plain:      x (N, C_in, *L), w (C_out, C_in // groups, *k), b (C_out,)
              y[n, o, i] = b[o] + sum_{c in group(o), t} w[o, c, t] * xpad[n, c, i*s + t*d]
* transposed: x (N, C_in, *L), w (C_in, C_out // groups, *k), b (C_out,)
              the adjoint (w.r.t. x) of the plain convolution with the same
              weight, cropped by ``padding`` on both sides and extended by
              ``output_padding`` at the end.
* complex: no conjugation in the forward; gradients follow autograd:
  grad_input = conv_transpose(gO, conj(w)), grad_weight = correlation of
  conj(x) with gO, grad_bias = sum(gO).

Every function takes batched inputs with 1, 2 or 3 spatial dims and computes
in float64 (complex128 when any operand is complex).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = [
    "ref_conv",
    "ref_conv_transpose",
    "ref_conv_grad_input",
    "ref_conv_grad_weight",
    "ref_conv_grad_bias",
    "ref_conv_transpose_grad_input",
    "ref_conv_transpose_grad_weight",
    "ref_conv_out_size",
    "ref_conv_transpose_out_size",
    "same_padding",
    "rel_err",
    "tolerance",
    "reduction_length",
    "assert_close",
]


# ----------------------------------------------------------------- helpers


def _tup(v, n, name):
    """An int or a sequence of ``n`` ints -> tuple of ``n`` python ints."""
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    t = tuple(int(e) for e in v)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise ValueError(f"reference: {name} must have {n} entries, got {t}")
    return t


def _compute_dtype(*arrays):
    if any(a is not None and np.iscomplexobj(a) for a in arrays):
        return np.complex128
    return np.float64


def _as(a, dt):
    return None if a is None else np.asarray(a).astype(dt, copy=True)


def _taps(kernel):
    return itertools.product(*[range(k) for k in kernel])


def _tap_slices(t, dilation, stride, count):
    """Slices picking positions t*d, t*d + s, ..., t*d + s*(count-1)."""
    return tuple(
        slice(ti * di, ti * di + si * (ci - 1) + 1, si)
        for ti, di, si, ci in zip(t, dilation, stride, count)
    )


def same_padding(kernel, dilation=1):
    """PyTorch's padding='same': per dim total d*(k-1), total//2 before, rest after."""
    kernel = tuple(int(k) for k in kernel)
    dil = _tup(dilation, len(kernel), "dilation")
    tot = [d * (k - 1) for k, d in zip(kernel, dil)]
    before = tuple(t // 2 for t in tot)
    after = tuple(t - b for t, b in zip(tot, before))
    return before, after


def ref_conv_out_size(in_size, kernel, stride=1, pad_before=0, pad_after=None, dilation=1):
    n = len(in_size)
    s = _tup(stride, n, "stride")
    pb = _tup(pad_before, n, "pad_before")
    pa = pb if pad_after is None else _tup(pad_after, n, "pad_after")
    d = _tup(dilation, n, "dilation")
    return tuple(
        (L + b + a - dd * (k - 1) - 1) // ss + 1
        for L, k, ss, b, a, dd in zip(in_size, kernel, s, pb, pa, d)
    )


def ref_conv_transpose_out_size(in_size, kernel, stride=1, padding=0, output_padding=0, dilation=1):
    n = len(in_size)
    s = _tup(stride, n, "stride")
    p = _tup(padding, n, "padding")
    op = _tup(output_padding, n, "output_padding")
    d = _tup(dilation, n, "dilation")
    return tuple(
        (L - 1) * ss - 2 * pp + dd * (k - 1) + oo + 1
        for L, k, ss, pp, oo, dd in zip(in_size, kernel, s, p, op, d)
    )


def reduction_length(c_in, groups, kernel):
    """Length of the dot products behind one output element."""
    return (int(c_in) // int(groups)) * int(math.prod(kernel))


def tolerance(dtype, red_len=0):
    """Relative-error bound every result of ``dtype`` is held to: float32
    1e-5 (1e-4 for dot products longer than 2000), float64 1e-12, float16
    2e-3 (computed in float32, rounded once)."""
    dt = np.dtype(dtype)
    if dt in (np.float32, np.complex64):
        return 1e-4 if red_len > 2000 else 1e-5
    if dt in (np.float64, np.complex128):
        return 1e-12
    if dt == np.float16:
        return 2e-3
    raise ValueError(f"no tolerance for dtype {dt}")


def rel_err(a, ref):
    """||a - ref|| / ||ref|| computed in (complex) float64; 0 when both are 0."""
    a = np.asarray(a)
    ref = np.asarray(ref)
    if a.shape != ref.shape:
        raise AssertionError(f"shape mismatch: {a.shape} vs reference {ref.shape}")
    dt = _compute_dtype(a, ref)
    a = a.astype(dt)
    ref = ref.astype(dt)
    if not np.all(np.isfinite(a)):
        return math.inf
    num = float(np.linalg.norm((a - ref).ravel()))
    den = float(np.linalg.norm(ref.ravel()))
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


def assert_close(a, ref, dtype, red_len=0, what="result"):
    tol = tolerance(dtype, red_len)
    err = rel_err(a, ref)
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.0e} (dtype {np.dtype(dtype)})"



NONFINITE_CLASSES = (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf))


def nonfinite_mismatch(a, ref):
    """None when a has NaN, +inf and -inf at exactly the places ref has them;
    else a message naming the first class that differs, with the count of
    places in each array and the first few differing indices."""
    a = np.asarray(a)
    ref = np.asarray(ref)
    if a.shape != ref.shape:
        return f"shape mismatch: {a.shape} vs reference {ref.shape}"
    for name, test in NONFINITE_CLASSES:
        got, want = test(a), test(ref)
        if not np.array_equal(got, want):
            where = np.argwhere(got != want)[:3].tolist()
            return (f"{name} at {int(got.sum())} places, the reference at "
                    f"{int(want.sum())} (first differences at {where})")
    return None


def fd_grad(fun, a, h=1e-3):
    """Central differences of a real scalar function ``fun()`` of the array
    ``a`` (changed in place and restored); complex arrays get dL/dRe + i
    dL/dIm (autograd's convention for a real loss)."""
    g = np.zeros_like(a)
    flat = a.reshape(-1)
    gflat = g.reshape(-1)
    parts = [1.0, 1j] if np.iscomplexobj(a) else [1.0]
    for i in range(flat.size):
        for unit in parts:
            old = flat[i]
            flat[i] = old + h * unit
            fp = fun()
            flat[i] = old - h * unit
            fm = fun()
            flat[i] = old
            gflat[i] += (fp - fm) / (2 * h) * unit
    return g


# ------------------------------------------------------------------ plain


def _check_symmetric(pad_before, pad_after):
    if pad_after is not None and np.any(np.asarray(pad_after) != np.asarray(pad_before)):
        raise ValueError("reference: a transposed convolution takes symmetric padding only")


def _plain_geometry(x_shape, w_shape, stride, pad_before, pad_after, dilation, groups):
    nsp = len(x_shape) - 2
    if nsp not in (1, 2, 3) or len(w_shape) != nsp + 2:
        raise ValueError(f"reference: bad ranks x{tuple(x_shape)} w{tuple(w_shape)}")
    s = _tup(stride, nsp, "stride")
    pb = _tup(pad_before, nsp, "pad_before")
    pa = pb if pad_after is None else _tup(pad_after, nsp, "pad_after")
    d = _tup(dilation, nsp, "dilation")
    g = int(groups)
    N, C = x_shape[:2]
    O, cg = w_shape[:2]
    k = tuple(w_shape[2:])
    if g < 1 or cg * g != C or O % g:
        raise ValueError(f"reference: channels x{tuple(x_shape)} w{tuple(w_shape)} groups={g}")
    out = ref_conv_out_size(x_shape[2:], k, s, pb, pa, d)
    if any(o < 0 for o in out):
        raise ValueError(f"reference: negative output size {out}")
    return nsp, s, pb, pa, d, g, N, C, O, cg, k, out


def ref_conv(x, w, b=None, stride=1, pad_before=0, pad_after=None, dilation=1, groups=1):
    """Plain (cross-correlation) convolution, batched, in float64/complex128.

    ``pad_after`` defaults to ``pad_before`` (symmetric padding).
    """
    x = np.asarray(x)
    w = np.asarray(w)
    dt = _compute_dtype(x, w, b)
    nsp, s, pb, pa, d, g, N, C, O, cg, k, out = _plain_geometry(
        x.shape, w.shape, stride, pad_before, pad_after, dilation, groups)
    x = _as(x, dt)
    w = _as(w, dt)
    og = O // g
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(pb, pa)))
    xg = xp.reshape((N, g, cg) + xp.shape[2:])
    wg = w.reshape((g, og, cg) + k)
    y = np.zeros((N, g, og) + out, dtype=dt)
    if y.size and cg:
        for t in _taps(k):
            xs = xg[(slice(None),) * 3 + _tap_slices(t, d, s, out)]
            y += np.einsum("ngc...,goc->ngo...", xs, wg[(Ellipsis,) + t])
    y = y.reshape((N, O) + out)
    if b is not None:
        y += _as(b, dt).reshape((1, O) + (1,) * nsp)
    return y


def ref_conv_grad_input(grad_output, w, input_shape, stride=1, pad_before=0, pad_after=None,
                        dilation=1, groups=1, transposed=False, output_padding=0):
    """Gradient of ``ref_conv`` w.r.t. its input (the exact adjoint; conj(w) for complex).

    ``transposed=True``: the gradient of ``ref_conv_transpose`` instead, with
    ``pad_before`` as its (symmetric) padding.
    """
    if transposed:
        _check_symmetric(pad_before, pad_after)
        return ref_conv_transpose_grad_input(grad_output, w, input_shape, stride, pad_before,
                                             output_padding, groups, dilation)
    gO = np.asarray(grad_output)
    w = np.asarray(w)
    dt = _compute_dtype(gO, w)
    nsp, s, pb, pa, d, g, N, C, O, cg, k, out = _plain_geometry(
        tuple(input_shape), w.shape, stride, pad_before, pad_after, dilation, groups)
    if gO.shape != (N, O) + out:
        raise ValueError(f"reference: grad_output {gO.shape} != {(N, O) + out}")
    og = O // g
    gOg = _as(gO, dt).reshape((N, g, og) + out)
    wg = np.conj(_as(w, dt)).reshape((g, og, cg) + k)
    padded = tuple(L + b + a for L, b, a in zip(input_shape[2:], pb, pa))
    gx = np.zeros((N, g, cg) + padded, dtype=dt)
    if gOg.size and cg:
        for t in _taps(k):
            idx = (slice(None),) * 3 + _tap_slices(t, d, s, out)
            gx[idx] += np.einsum("ngo...,goc->ngc...", gOg, wg[(Ellipsis,) + t])
    crop = tuple(slice(b, b + L) for b, L in zip(pb, input_shape[2:]))
    return np.ascontiguousarray(gx.reshape((N, C) + padded)[(slice(None), slice(None)) + crop])


def ref_conv_grad_weight(x, grad_output, weight_shape, stride=1, pad_before=0, pad_after=None,
                         dilation=1, groups=1, transposed=False, output_padding=0):
    """Gradient of ``ref_conv`` w.r.t. its weight: correlation of conj(x) with gO.

    ``transposed=True``: the gradient of ``ref_conv_transpose`` instead, with
    ``pad_before`` as its (symmetric) padding.
    """
    if transposed:
        _check_symmetric(pad_before, pad_after)
        return ref_conv_transpose_grad_weight(x, grad_output, weight_shape, stride, pad_before,
                                              output_padding, groups, dilation)
    x = np.asarray(x)
    gO = np.asarray(grad_output)
    dt = _compute_dtype(x, gO)
    nsp, s, pb, pa, d, g, N, C, O, cg, k, out = _plain_geometry(
        x.shape, tuple(weight_shape), stride, pad_before, pad_after, dilation, groups)
    if gO.shape != (N, O) + out:
        raise ValueError(f"reference: grad_output {gO.shape} != {(N, O) + out}")
    og = O // g
    xp = np.pad(np.conj(_as(x, dt)), [(0, 0), (0, 0)] + list(zip(pb, pa)))
    xg = xp.reshape((N, g, cg) + xp.shape[2:])
    gOg = _as(gO, dt).reshape((N, g, og) + out)
    gw = np.zeros((g, og, cg) + k, dtype=dt)
    sp = "xyz"[:nsp]
    if gOg.size and cg:
        for t in _taps(k):
            xs = xg[(slice(None),) * 3 + _tap_slices(t, d, s, out)]
            gw[(Ellipsis,) + t] = np.einsum(f"ngc{sp},ngo{sp}->goc", xs, gOg)
    return gw.reshape((O, cg) + k)


def ref_conv_grad_bias(grad_output):
    """sum of grad_output over every axis but the channel axis (1); no conjugation."""
    gO = np.asarray(grad_output)
    dt = _compute_dtype(gO)
    gO = gO.astype(dt)
    return gO.sum(axis=(0,) + tuple(range(2, gO.ndim)))


# ------------------------------------------------------------- transposed


def _transposed_geometry(x_shape, w_shape, stride, padding, output_padding, dilation, groups):
    nsp = len(x_shape) - 2
    if nsp not in (1, 2, 3) or len(w_shape) != nsp + 2:
        raise ValueError(f"reference: bad ranks x{tuple(x_shape)} w{tuple(w_shape)}")
    s = _tup(stride, nsp, "stride")
    p = _tup(padding, nsp, "padding")
    op = _tup(output_padding, nsp, "output_padding")
    d = _tup(dilation, nsp, "dilation")
    g = int(groups)
    N, C = x_shape[:2]
    if w_shape[0] != C or g < 1 or C % g:
        raise ValueError(f"reference: channels x{tuple(x_shape)} w{tuple(w_shape)} groups={g}")
    cg = C // g
    og = w_shape[1]
    O = og * g
    k = tuple(w_shape[2:])
    L = tuple(x_shape[2:])
    out = ref_conv_transpose_out_size(L, k, s, p, op, d)
    if any(o < 0 for o in out):
        raise ValueError(f"reference: negative output size {out}")
    # uncropped ("full") extent: every tap of every input position, plus output_padding
    full = tuple((l - 1) * ss + dd * (kk - 1) + 1 + oo for l, ss, dd, kk, oo in zip(L, s, d, k, op))
    return nsp, s, p, op, d, g, N, C, O, cg, og, k, L, out, full


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed convolution (PyTorch's conv_transposeNd), batched, float64/complex128."""
    x = np.asarray(x)
    w = np.asarray(w)
    dt = _compute_dtype(x, w, b)
    nsp, s, p, op, d, g, N, C, O, cg, og, k, L, out, full = _transposed_geometry(
        x.shape, w.shape, stride, padding, output_padding, dilation, groups)
    xg = _as(x, dt).reshape((N, g, cg) + L)
    wg = _as(w, dt).reshape((g, cg, og) + k)
    yfull = np.zeros((N, g, og) + full, dtype=dt)
    if xg.size and og and all(l > 0 for l in L):
        for t in _taps(k):
            idx = (slice(None),) * 3 + _tap_slices(t, d, s, L)
            yfull[idx] += np.einsum("ngc...,gco->ngo...", xg, wg[(Ellipsis,) + t])
    crop = tuple(slice(pp, pp + o) for pp, o in zip(p, out))
    y = np.ascontiguousarray(yfull.reshape((N, O) + full)[(slice(None), slice(None)) + crop])
    if b is not None:
        y += _as(b, dt).reshape((1, O) + (1,) * nsp)
    return y


def ref_conv_transpose_grad_input(grad_output, w, input_shape, stride=1, padding=0,
                                  output_padding=0, groups=1, dilation=1):
    """Gradient of ``ref_conv_transpose`` w.r.t. its input: conv(gO, conj(w))."""
    gO = np.asarray(grad_output)
    w = np.asarray(w)
    dt = _compute_dtype(gO, w)
    nsp, s, p, op, d, g, N, C, O, cg, og, k, L, out, full = _transposed_geometry(
        tuple(input_shape), w.shape, stride, padding, output_padding, dilation, groups)
    if gO.shape != (N, O) + out:
        raise ValueError(f"reference: grad_output {gO.shape} != {(N, O) + out}")
    gfull = np.zeros((N, O) + full, dtype=dt)
    gfull[(slice(None), slice(None)) + tuple(slice(pp, pp + o) for pp, o in zip(p, out))] = gO
    gfull = gfull.reshape((N, g, og) + full)
    wg = np.conj(_as(w, dt)).reshape((g, cg, og) + k)
    gx = np.zeros((N, g, cg) + L, dtype=dt)
    if gx.size and og:
        for t in _taps(k):
            gs = gfull[(slice(None),) * 3 + _tap_slices(t, d, s, L)]
            gx += np.einsum("ngo...,gco->ngc...", gs, wg[(Ellipsis,) + t])
    return gx.reshape((N, C) + L)


def ref_conv_transpose_grad_weight(x, grad_output, weight_shape, stride=1, padding=0,
                                   output_padding=0, groups=1, dilation=1):
    """Gradient of ``ref_conv_transpose`` w.r.t. its weight (C_in, C_out // groups, *k)."""
    x = np.asarray(x)
    gO = np.asarray(grad_output)
    dt = _compute_dtype(x, gO)
    nsp, s, p, op, d, g, N, C, O, cg, og, k, L, out, full = _transposed_geometry(
        x.shape, tuple(weight_shape), stride, padding, output_padding, dilation, groups)
    if gO.shape != (N, O) + out:
        raise ValueError(f"reference: grad_output {gO.shape} != {(N, O) + out}")
    gfull = np.zeros((N, O) + full, dtype=dt)
    gfull[(slice(None), slice(None)) + tuple(slice(pp, pp + o) for pp, o in zip(p, out))] = gO
    gfull = gfull.reshape((N, g, og) + full)
    xg = np.conj(_as(x, dt)).reshape((N, g, cg) + L)
    gw = np.zeros((g, cg, og) + k, dtype=dt)
    sp = "xyz"[:nsp]
    if xg.size and og and all(l > 0 for l in L):
        for t in _taps(k):
            gs = gfull[(slice(None),) * 3 + _tap_slices(t, d, s, L)]
            gw[(Ellipsis,) + t] = np.einsum(f"ngc{sp},ngo{sp}->gco", xg, gs)
    return gw.reshape((C, og) + k)
