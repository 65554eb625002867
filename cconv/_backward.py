"""Gradients: ``convolution_backward`` and ``convolution_double_backward``.

Both are built from three array-generic pieces; the first two run through
``_functional.run_real`` on the backend ``_dispatch.select(...,
need_backward=True)`` picks (or benchmark mode's winner for the op):

* ``grad_input_of(p, xp, gy, w)``   - the input gradient (a backend's grad_input);
* ``grad_weight_of(p, xp, x, gy)``  - the weight gradient (a backend's grad_weight);
* ``grad_bias_of(xp, gy)``          - the sum of gy over batch and space.

Complex arrays go through the same real kernels: each gradient is bilinear
in its two operands with one of them conjugated (autograd's convention:
grad_input = conv_transpose(gO, conj(W)), grad_weight = correlation of
conj(x) with gO), three real calls in the form PyTorch's autograd takes
through its Gauss-trick forward (``_torch_grad_parts``: the same NaN and
inf pattern).
float16 is computed in float32 and rounded once at the end.

Nothing here calls NumPy functions on the arrays: the array module ``xp``
comes from ``_array.get_xp``, so the same code serves CuPy arrays.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from . import _autotune, _dask, _kernels, _layout, _outbuf
from ._array import get_xp, narrow
from ._config import get_num_threads, result_empty
from ._dispatch import _tuned_any, select
from ._functional import (
    _REAL, _hk, _NoKey, _quiet_add, _ready, as_array, check_dtypes, compute_dtype, forward_any,
    native, real_contig, remember, run_real,
)
from ._params import ConvParams, check_flag, make_params, normalize_int_tuple

__all__ = ["convolution_backward", "convolution_double_backward"]


# --------------------------------------------------------------------------
# argument checks
# --------------------------------------------------------------------------
def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def check_output_mask(fn: str, output_mask: Any) -> tuple[bool, bool, bool]:
    """``output_mask`` as three bools; ValueError/TypeError naming it."""
    if isinstance(output_mask, (str, bytes)) or not hasattr(output_mask, "__len__"):
        raise TypeError(
            f"{fn}: output_mask must be a sequence of 3 bools, but got {type(output_mask).__name__}"
        )
    vals = list(output_mask)
    if len(vals) != 3:
        raise ValueError(
            f"{fn}: output_mask must have 3 entries (input, weight, bias), but got {len(vals)}: {vals!r}"
        )
    return tuple(check_flag(fn, f"output_mask[{i}]", v) for i, v in enumerate(vals))  # type: ignore[return-value]


def _shape_arg(fn: str, name: str, v: Any) -> tuple[int, ...]:
    """A shape given as a sequence of non-negative ints."""
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise TypeError(f"{fn}: {name} must be a sequence of ints, but got {type(v).__name__} ({v!r})")
    out = []
    for s in v:
        if isinstance(s, (bool, np.bool_)):
            raise TypeError(f"{fn}: {name} must be a sequence of ints, but got {list(v)!r}")
        try:
            s = operator.index(s)
        except TypeError:
            raise TypeError(f"{fn}: {name} must be a sequence of ints, but got {list(v)!r}") from None
        if s < 0:
            raise ValueError(f"{fn}: {name} has a negative size: {list(v)!r}")
        out.append(s)
    return tuple(out)


def _bias_channels(p: ConvParams, weight_shape: Sequence[int]) -> int:
    """Length of the bias (and of grad_bias): the weight's output channels.

    It differs from ``p.c_out`` only for a plain convolution of zero input
    channels, whose result has no channels (ATen's Empty backend)."""
    if p.transposed:
        return int(weight_shape[1]) * p.groups
    return int(weight_shape[0])


# The checked parameters of recent backward calls (as _functional._plans for
# the forward): _checked_params is a pure function of its arguments, so a hit
# skips only work whose outcome is known; calls that raise never enter.
_plans: dict[tuple, ConvParams] = {}


def _params(fn: str, input_shape, weight_shape, bias_sizes, stride, padding, dilation,
            transposed, output_padding, groups, grad_output_shape, dt) -> ConvParams:
    """``_checked_params``, remembered for exact-int (or str) arguments."""
    try:
        bs = bias_sizes
        if type(bs) is list:
            bs = tuple(bs)
        key = (fn, tuple(input_shape), tuple(weight_shape), bs is None or _hk(bs),
               type(bias_sizes), type(transposed), transposed, _hk(stride), _hk(padding),
               _hk(dilation), _hk(output_padding), _hk(groups), tuple(grad_output_shape), dt)
        p = _plans.get(key)
    except (_NoKey, TypeError):
        key, p = None, None
    if p is not None:
        return p
    return remember(_plans, key, lambda: _checked_params(
        fn, input_shape, weight_shape, bias_sizes, stride, padding, dilation, transposed,
        output_padding, groups, grad_output_shape, dt))


def _checked_params(fn: str, input_shape, weight_shape, bias_sizes, stride, padding, dilation,
                    transposed, output_padding, groups, grad_output_shape, dt) -> ConvParams:
    """Every check of ``aten::convolution_backward`` (the forward's checks,
    then grad_output's rank, then output_padding), plus grad_output's shape
    and bias_sizes, which ATen leaves unchecked."""
    transposed = check_flag(fn, "transposed", transposed)
    bias_shape = None if bias_sizes is None else _shape_arg(fn, "bias_sizes", bias_sizes)
    p = make_params(input_shape, weight_shape, None, stride, padding, dilation, transposed,
                    output_padding, groups, fn, compute_dtype(dt), dt)
    if len(grad_output_shape) != len(input_shape):
        raise ValueError(
            f"{fn}: expected input and grad_output to have the same number of dimensions, but got "
            f"input of size {_fmt(input_shape)} and grad_output of size {_fmt(grad_output_shape)}"
        )
    if not transposed:
        op = normalize_int_tuple("output_padding", output_padding, p.nsp, fn)
        if any(o != 0 for o in op):
            raise ValueError(
                f"{fn}: output_padding is not supported for non-transposed convolutions; "
                f"got output_padding={list(op)}"
            )
    if tuple(grad_output_shape) != p.output_shape:
        raise ValueError(
            f"{fn}: expected grad_output of size {_fmt(p.output_shape)} (the forward output's size "
            f"for input {_fmt(input_shape)} and weight {_fmt(weight_shape)}), but got grad_output "
            f"of size {_fmt(grad_output_shape)}"
        )
    if bias_shape is not None:
        nb = _bias_channels(p, weight_shape)
        if len(bias_shape) != 1 or bias_shape[0] != nb:
            raise ValueError(
                f"{fn}: Given weight of size {_fmt(weight_shape)}, expected bias_sizes to be "
                f"[{nb}], but got bias_sizes={list(bias_shape)}"
            )
    return p


# --------------------------------------------------------------------------
# the three gradients, array-generic (user dtype float32/64 or complex)
# --------------------------------------------------------------------------
def _torch_grad_parts(xp, gy, cdt):
    """The real grad_outputs of PyTorch's three real convolutions for the
    complex grad_output ``gy``.  PyTorch computes a complex convolution as
    y = (a - b) + i * (c - a - b), a = conv(x_r, w_r) + b_r, b = conv(x_i,
    w_i), c = conv(x_r + x_i, w_r + w_i) + b_r + b_i; its autograd hands
    r = c - a - b the real part of gy * conj(i), which is 0 * gy_r + gy_i:
    NaN wherever gy_r is not finite.  So, with g_c = gy_i there NaN:
    a gets gy_r - g_c, b gets -gy_r - g_c and c gets g_c; for finite
    values this is the usual x_r' = a' + c', x_i' = b' + c' of the Gauss
    trick.  Three new C-contiguous real arrays of ``cdt``."""
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


def _shared_parts(xp, gy, uses: int):
    """_torch_grad_parts of a complex ``gy`` that ``uses`` >= 2 gradients
    read (computed once for them), else None (each computes its own, or
    none is needed)."""
    dt = np.dtype(gy.dtype)
    if dt.kind != "c" or uses < 2 or gy.size == 0:
        return None
    return _torch_grad_parts(xp, gy, compute_dtype(dt))


def _gauss_sum(xp, shape, dt, p, q, s_fn):
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


def grad_input_of(p: ConvParams, xp, gy, w, backend=None, parts=None):
    """The input gradient of ``p`` for grad_output ``gy`` and weight ``w``
    (float32/64 or complex64/128, any strides), of ``p.input_shape``: the
    backend's ``grad_input`` of the real pieces, conj(w) for complex."""
    dt = np.dtype(gy.dtype)
    cdt = compute_dtype(dt)
    shape = p.input_shape
    if _prod(shape) == 0 or gy.size == 0 or w.size == 0:
        return xp.zeros(shape, dtype=dt)   # nothing flows back: no kernel
    pr = p.with_dtype(cdt)

    def real_fn(g, ww):
        out = result_empty(xp, shape, cdt)
        return run_real("grad_input", pr, xp, real_contig(xp, g, cdt), real_contig(xp, ww, cdt), None, out,
                        backend, need_backward=True)

    if dt.kind != "c":
        return real_fn(gy, w)
    # PyTorch's autograd through its three real convolutions (see
    # _torch_grad_parts): x_r gets a's and c's gradients, x_i b's and c's
    ga, gb, gc = parts if parts is not None else _torch_grad_parts(xp, gy, cdt)
    wr, wi = real_contig(xp, w.real, cdt), real_contig(xp, w.imag, cdt)
    return _gauss_sum(xp, shape, dt, real_fn(ga, wr), real_fn(gb, wi),
                      lambda: real_fn(gc, _quiet_add(wr, wi)))


def grad_weight_of(p: ConvParams, xp, x, gy, weight_shape, backend=None, parts=None):
    """The weight gradient of ``p`` for input ``x`` and grad_output ``gy``,
    of ``weight_shape``: the backend's ``grad_weight``, conj(x) for complex."""
    dt = np.dtype(gy.dtype)
    cdt = compute_dtype(dt)
    shape = tuple(weight_shape)
    if _prod(shape) == 0 or x.size == 0 or gy.size == 0:
        return xp.zeros(shape, dtype=dt)   # an empty sum: no kernel
    pr = p.with_dtype(cdt)

    def real_fn(xx, g):
        out = result_empty(xp, shape, cdt)
        return run_real("grad_weight", pr, xp, real_contig(xp, xx, cdt), real_contig(xp, g, cdt), None, out,
                        backend, need_backward=True)

    if dt.kind != "c":
        return real_fn(x, gy)
    ga, gb, gc = parts if parts is not None else _torch_grad_parts(xp, gy, cdt)
    xr, xi = real_contig(xp, x.real, cdt), real_contig(xp, x.imag, cdt)
    return _gauss_sum(xp, shape, dt, real_fn(xr, ga), real_fn(xi, gb),
                      lambda: real_fn(_quiet_add(xr, xi), gc))


def _sum_bias_real(xp, gy, cdt):
    """Per-channel sum of a real batched array (C kernel on the CPU)."""
    n, c = int(gy.shape[0]), int(gy.shape[1])
    if xp is np:
        g = real_contig(xp, gy, cdt)
        out = np.empty((c,), dtype=cdt)
        if c:
            _kernels.bias_grad(n, c, g.size // (n * c) if n else 0, g, out, get_num_threads())
        return out
    axes = (0,) + tuple(range(2, gy.ndim))
    return gy.astype(cdt, copy=False).sum(axis=axes)


def grad_bias_of(xp, gy, nbias: int, parts=None):
    """sum of ``gy`` over batch and space (no conjugation), of length
    ``nbias``; zeros when the result has no channels (zero input channels)."""
    dt = np.dtype(gy.dtype)
    cdt = compute_dtype(dt)
    if int(gy.shape[1]) != nbias:
        return xp.zeros((nbias,), dtype=dt)
    if dt.kind != "c":
        return _sum_bias_real(xp, gy, cdt)
    # the real bias is in a and c, the imaginary one in c (_torch_grad_parts)
    ga, _, gc = parts if parts is not None else _torch_grad_parts(xp, gy, cdt)
    res = xp.empty((nbias,), dtype=dt)
    sc = _sum_bias_real(xp, gc, cdt)
    with np.errstate(invalid="ignore", over="ignore"):
        res.real = _sum_bias_real(xp, ga, cdt) + sc
    res.imag = sc
    return res


# --------------------------------------------------------------------------
# the shared core (also used by cconv.grad)
# --------------------------------------------------------------------------
def _up(xp, a):
    """float16 -> float32 (exact), a non-native byte order -> native; other
    arrays unchanged."""
    if a is None:
        return a
    a = native(a)
    if np.dtype(a.dtype) == np.float16:
        return a.astype(np.float32)
    return a


def _first(xp, a):
    """A channels-last NumPy array as one channels-first copy, made by the
    tiled transpose, for every gradient that reads it: left to each
    kernel's own C-contiguous copy, grad_output was copied twice by NumPy's
    strided copy, 3-10x slower than the tiled one (a channels-last
    depthwise backward took 2.4-8.2 ms against 0.5-1.0 for its NCHW
    arrays).  Other arrays unchanged."""
    if xp is np and a is not None and _layout.is_channels_last(a):
        return _layout.to_channels_first(a)
    return a


def _down(a, dt):
    if a is not None and np.dtype(a.dtype) != dt:
        return narrow(a, dt)
    return a


def backward_core(fn: str, xp, grad_output, input, input_shape, weight, weight_shape, bias_sizes,
                  stride, padding, dilation, transposed, output_padding, groups, output_mask,
                  backend=None):
    """convolution_backward on arrays of module ``xp``; ``input`` (or
    ``weight``) may be None when only its shape is known and its gradient
    partner is masked out."""
    mask = check_output_mask(fn, output_mask)
    dt = check_dtypes(fn, grad_output=grad_output, input=input, weight=weight)
    p = _params(fn, input_shape, weight_shape, bias_sizes, stride, padding, dilation, transposed,
                output_padding, groups, tuple(grad_output.shape), dt)
    if not any(mask):
        return None, None, None
    if (mask[0] and weight is None) or (mask[1] and input is None):  # pragma: no cover - internal misuse
        raise ValueError(f"{fn}: an array needed for a masked-in gradient is missing")
    if backend is not None and (mask[0] or mask[1]):
        # a forced backend that cannot run the backward: ValueError before any work
        select(p.with_dtype(compute_dtype(dt)), xp, backend, need_backward=True)
    gy = _first(xp, _up(xp, grad_output))
    parts = _shared_parts(xp, gy, sum(mask))
    gi = gw = gb = None
    if mask[0]:
        gi = _down(grad_input_of(p, xp, gy, _up(xp, weight), backend, parts), dt)
    if mask[1]:
        gw = _down(grad_weight_of(p, xp, _first(xp, _up(xp, input)), gy, weight_shape, backend, parts), dt)
    if mask[2]:
        gb = _down(grad_bias_of(xp, gy, _bias_channels(p, weight_shape), parts), dt)
    return gi, gw, gb


def fast_backward(fn: str, gy, x, x_shape, w, w_shape, bias_sizes, stride, padding, dilation,
                  transposed, output_padding, groups, output_mask):
    """backward_core's common call, or None where it is not: real
    float32/float64 NumPy arrays of one native dtype, C-contiguous and
    aligned, no empty shape, a list or tuple of three bools for the mask
    (``x`` or ``w`` may be None, given by its shape, when the gradient that
    reads it is masked out, as for the torch.nn.grad helpers).  The same
    checks (_params) and backend choice as backward_core, without the
    array-generic layers (complex, float16, layouts, CuPy): a small
    layer's backward spent 12 us there before any gradient (a 1x4x4x4
    depthwise backward took 47 us, its three kernels 7).  The caller has
    checked that the arrays are exact ndarrays, no backend is forced and
    benchmark mode is off."""
    dt = gy.dtype
    if dt not in _REAL or (x is not None and x.dtype != dt) or (w is not None and w.dtype != dt):
        return None
    if type(output_mask) is not list and type(output_mask) is not tuple or len(output_mask) != 3:
        return None
    m0, m1, m2 = output_mask
    if type(m0) is not bool or type(m1) is not bool or type(m2) is not bool:
        return None
    if (m0 and w is None) or (m1 and x is None):
        return None
    if not (_ready(gy) and (x is None or _ready(x)) and (w is None or _ready(w))):
        return None
    if not (gy.size and _prod(x_shape) and _prod(w_shape)):
        return None
    p = _params(fn, x_shape, w_shape, bias_sizes, stride, padding, dilation, transposed,
                output_padding, groups, gy.shape, dt)
    gi = gw = gb = None
    if m0 or m1:
        mod = p.__dict__.get("_np_backward")
        if mod is None:
            mod = p.__dict__["_np_backward"] = select(p, np, None, need_backward=True)[1]
        if m0:
            gi = _outbuf.empty(p.input_shape, dt)
            mod.grad_input(p, gy, w, gi)
        if m1:
            gw = _outbuf.empty(tuple(w_shape), dt)
            mod.grad_weight(p, x, gy, gw)
    if m2:
        gb = grad_bias_of(np, gy, _bias_channels(p, w_shape))
    return gi, gw, gb


def fast_ok(backend, *arrays) -> bool:
    """Whether a call may try fast_backward: no forced backend, benchmark
    mode off, every array an exact numpy.ndarray (or None)."""
    if backend is not None or _tuned_any[0] or _autotune.get_benchmark():
        return False
    nd = np.ndarray
    for a in arrays:
        if a is not None and type(a) is not nd:
            return False
    return True


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask, *, backend=None):
    """Gradients of ``convolution(input, weight, bias, ...)``, as
    ``aten::convolution_backward``.

    Returns ``(grad_input, grad_weight, grad_bias)``, None where
    ``output_mask`` is False; only the masked-in gradients are computed.
    Batched arrays only (1 to 3 spatial dims); ``grad_output`` must have the
    forward output's shape.  ``grad_bias`` (shape ``(C_out,)``) is computed
    whenever ``output_mask[2]`` is True, whether or not ``bias_sizes`` is
    given; a given ``bias_sizes`` must be ``[C_out]``.  ``output_padding``
    must be 0 for a non-transposed convolution (as ATen).  ``padding`` may
    also be ``'same'``/``'valid'`` for a non-transposed convolution.

    float16 is computed in float32; complex follows autograd:
    grad_input = conv_transpose(gO, conj(W)), grad_weight = correlation of
    conj(x) with gO, grad_bias = sum(gO).  ``backend=`` forces a backend
    (one that cannot run the backward raises ValueError saying why).
    """
    fn = "convolution_backward"
    if (grad_output is not None and input is not None and weight is not None
            and fast_ok(backend, grad_output, input, weight)):
        res = fast_backward(fn, grad_output, input, input.shape, weight, weight.shape, bias_sizes,
                            stride, padding, dilation, transposed, output_padding, groups,
                            output_mask)
        if res is not None:
            return res
    if _dask.any_dask(grad_output, input, weight):
        return _dask.backward(fn, grad_output, input, weight, bias_sizes, stride, padding, dilation,
                              transposed, output_padding, groups, output_mask, backend)
    xp = get_xp(grad_output=grad_output, input=input, weight=weight)
    grad_output = as_array(xp, "grad_output", grad_output, fn)
    input = as_array(xp, "input", input, fn)
    weight = as_array(xp, "weight", weight, fn)
    for name, a in (("grad_output", grad_output), ("input", input), ("weight", weight)):
        if a is None:
            raise TypeError(f"{fn}: {name} must be an array, not None")
    return backward_core(fn, xp, grad_output, input, tuple(input.shape), weight, tuple(weight.shape),
                         bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
                         output_mask, backend)


def convolution_double_backward(ggI, ggW, ggb, gO, weight, input, stride, padding, dilation,
                                transposed, output_padding, groups, output_mask, *, backend=None):
    """Double backward of ``convolution``, as ATen's
    ``_convolution_double_backward``: the gradients of
    ``<ggI, grad_input> + <ggW, grad_weight> + <ggb, grad_bias>`` (the
    outputs of ``convolution_backward(gO, input, weight, ...)``).

    Returns ``(ggO, gI, gW)``:

    * ``ggO = conv(ggI, W) + conv(input, ggW) + ggb`` (broadcast);
    * ``gW``  = the weight gradient with ggI in place of the input;
    * ``gI``  = the input gradient with ggW in place of the weight.

    Any of ggI, ggW, ggb may be None; an output is None only when it cannot
    be computed (ggO when ggI, ggW and ggb are all None, gI when ggW is None,
    gW when ggI is None).  Zero-size problems give zeros, where ATen gives
    None.  ``output_mask`` is checked (3 bools) but, as in ATen, does not
    drop any output.  Complex follows autograd's convention (the same
    conjugations as ``convolution_backward``).
    """
    fn = "convolution_double_backward"
    if _dask.any_dask(ggI, ggW, ggb, gO, weight, input):
        return _dask.double_backward(ggI, ggW, ggb, gO, weight, input, stride, padding, dilation, transposed,
                                     output_padding, groups, output_mask, backend)
    xp = get_xp(ggI=ggI, ggW=ggW, ggb=ggb, gO=gO, weight=weight, input=input)
    ggI = as_array(xp, "ggI", ggI, fn)
    ggW = as_array(xp, "ggW", ggW, fn)
    ggb = as_array(xp, "ggb", ggb, fn)
    gO = as_array(xp, "gO", gO, fn)
    weight = as_array(xp, "weight", weight, fn)
    input = as_array(xp, "input", input, fn)
    for name, a in (("gO", gO), ("weight", weight), ("input", input)):
        if a is None:
            raise TypeError(f"{fn}: {name} must be an array, not None")
    check_output_mask(fn, output_mask)
    dt = check_dtypes(fn, gO=gO, input=input, weight=weight, ggI=ggI, ggW=ggW, ggb=ggb)
    x_shape, w_shape = tuple(input.shape), tuple(weight.shape)
    p = _params(fn, x_shape, w_shape, None, stride, padding, dilation, transposed, output_padding,
                groups, tuple(gO.shape), dt)
    nb = _bias_channels(p, w_shape)
    for name, a, want in (("ggI", ggI, x_shape), ("ggW", ggW, w_shape), ("ggb", ggb, (nb,))):
        if a is not None and tuple(a.shape) != want:
            what = {"ggI": "input", "ggW": "weight", "ggb": "bias"}[name]
            raise ValueError(
                f"{fn}: expected {name} of size {_fmt(want)} (the {what}'s size), but got {name} "
                f"of size {_fmt(a.shape)}"
            )
    if backend is not None and (ggI is not None or ggW is not None):
        select(p.with_dtype(compute_dtype(dt)), xp, backend, need_backward=True)

    ggI, ggW, ggb = _up(xp, ggI), _up(xp, ggW), _up(xp, ggb)
    gO, weight, input = _up(xp, gO), _up(xp, weight), _up(xp, input)

    ggO = None
    if ggI is not None or ggW is not None or ggb is not None:
        b = ggb if p.c_out == nb else None   # ggb rides along as a bias
        terms = [(a, ww) for a, ww in ((ggI, weight), (input, ggW)) if a is not None and ww is not None]
        if _prod(p.output_shape) == 0 or input.size == 0 or weight.size == 0:
            terms = []   # nothing to convolve: ggO is ggb broadcast (or zeros)
        for a, ww in terms:
            if ggO is None:
                ggO = forward_any(p, xp, a, ww, b, backend=backend)
            else:
                ggO += forward_any(p, xp, a, ww, None, backend=backend)
        if ggO is None:
            dto = compute_dtype(dt) if dt.kind == "f" else dt
            ggO = xp.zeros(p.output_shape, dtype=dto)
            if b is not None and ggO.size:
                ggO += b.reshape((1, -1) + (1,) * p.nsp)
    parts = _shared_parts(xp, gO, (ggW is not None) + (ggI is not None))
    gI = None if ggW is None else grad_input_of(p, xp, gO, ggW, backend, parts)
    gW = None if ggI is None else grad_weight_of(p, xp, ggI, gO, w_shape, backend, parts)
    return _down(ggO, dt), _down(gI, dt), _down(gW, dt)
