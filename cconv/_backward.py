"""Gradients: ``convolution_backward`` and ``convolution_double_backward``.

Both are built from three array-generic pieces; the first two run through
``_run.run`` on the method ``_dispatch.select`` picks for the operation
'grad_input' or 'grad_weight' (or benchmark mode's winner for it):

* ``grad_input_of(p, xp, gy, w)``   - the input gradient (a method's grad_input);
* ``grad_weight_of(p, xp, x, gy)``  - the weight gradient (a method's grad_weight);
* ``grad_bias_of(xp, gy)``          - the sum of gy over batch and space.

Complex arrays go through the same real kernels: each gradient is bilinear
in its two operands with one of them conjugated (autograd's convention:
grad_input = conv_transpose(gO, conj(W)), grad_weight = correlation of
conj(x) with gO), three real calls in the form PyTorch's autograd takes
through its Gauss-trick forward (``_complex.grad_parts``: the same NaN and
inf pattern).
float16 is computed in float32 and rounded once at the end.

Nothing here calls NumPy functions on the arrays: the array module ``xp``
comes from ``_array.get_xp``, so the same code serves CuPy arrays.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _autotune, _complex, _dask, _depthwise, _dispatch, _kernels, _layout, _outbuf, _padding_mode
from ._args import (
    REAL, NoKey, as_array, check_dtypes, compute_dtype, hk, native, ready, real_contig, remember,
)
from ._array import get_xp, narrow
from ._config import get_num_threads, result_empty
from ._dispatch import Problem, nonfinite_rule, select
from ._functional import _F, BackendArg, IntOrTuple, Padding, PaddingMode
from ._params import ConvParams, check_flag, make_params, normalize_int_tuple
from ._run import forward_any, run

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
        key = (fn, tuple(input_shape), tuple(weight_shape), bs is None or hk(bs),
               type(bias_sizes), type(transposed), transposed, hk(stride), hk(padding),
               hk(dilation), hk(output_padding), hk(groups), tuple(grad_output_shape), dt)
        p = _plans.get(key)
    except (NoKey, TypeError):
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
def grad_input_of(p: ConvParams, xp, gy, w, backend=None, parts=None):
    """The input gradient of ``p`` for grad_output ``gy`` and weight ``w``
    (float32/64 or complex64/128, any strides), of ``p.input_shape``: the
    backend's ``grad_input`` of the real pieces, conj(w) for complex."""
    dt = np.dtype(gy.dtype)
    cdt = compute_dtype(dt)
    shape = p.input_shape
    if _prod(shape) == 0 or gy.size == 0 or w.size == 0:
        return xp.zeros(shape, dtype=dt)   # nothing flows back: no kernel
    q = Problem(p.with_dtype(cdt), xp, "grad_input")

    def real_fn(g, ww):
        out = result_empty(xp, shape, cdt)
        return run(q, real_contig(xp, g, cdt), real_contig(xp, ww, cdt), None, out, backend)

    if dt.kind != "c":
        return real_fn(gy, w)
    # PyTorch's autograd through its three real convolutions (see
    # _complex.grad_parts): x_r gets a's and c's gradients, x_i b's and c's
    ga, gb, gc = parts if parts is not None else _complex.grad_parts(xp, gy, cdt)
    wr, wi = real_contig(xp, w.real, cdt), real_contig(xp, w.imag, cdt)
    return _complex.gauss_sum(xp, shape, dt, real_fn(ga, wr), real_fn(gb, wi),
                              lambda: real_fn(gc, _complex.quiet_add(wr, wi)))


def grad_weight_of(p: ConvParams, xp, x, gy, weight_shape, backend=None, parts=None):
    """The weight gradient of ``p`` for input ``x`` and grad_output ``gy``,
    of ``weight_shape``: the backend's ``grad_weight``, conj(x) for complex."""
    dt = np.dtype(gy.dtype)
    cdt = compute_dtype(dt)
    shape = tuple(weight_shape)
    if _prod(shape) == 0 or x.size == 0 or gy.size == 0:
        return xp.zeros(shape, dtype=dt)   # an empty sum: no kernel
    q = Problem(p.with_dtype(cdt), xp, "grad_weight")

    def real_fn(xx, g):
        out = result_empty(xp, shape, cdt)
        return run(q, real_contig(xp, xx, cdt), real_contig(xp, g, cdt), None, out, backend)

    if dt.kind != "c":
        return real_fn(x, gy)
    ga, gb, gc = parts if parts is not None else _complex.grad_parts(xp, gy, cdt)
    xr, xi = real_contig(xp, x.real, cdt), real_contig(xp, x.imag, cdt)
    return _complex.gauss_sum(xp, shape, dt, real_fn(xr, ga), real_fn(xi, gb),
                              lambda: real_fn(_complex.quiet_add(xr, xi), gc))


def _sum_bias_real(xp, gy, cdt):
    """Per-channel sum of a real batched array (C kernel on the CPU)."""
    n, c = int(gy.shape[0]), int(gy.shape[1])
    if xp is np:
        g = real_contig(xp, gy, cdt)
        out = np.empty((c,), dtype=cdt)
        if c:
            _kernels.bias_grad(n, c, g.size // (n * c) if n else 0, g, out, get_num_threads())
        return out
    # on the GPU: cconv/cuda/reduce.cu, summed in double in a fixed order
    from .cuda import kernels

    return kernels.bias_grad(gy.astype(cdt, copy=False))


def grad_bias_of(xp, gy, nbias: int, parts=None):
    """sum of ``gy`` over batch and space (no conjugation), of length
    ``nbias``; zeros when the result has no channels (zero input channels)."""
    dt = np.dtype(gy.dtype)
    cdt = compute_dtype(dt)
    if int(gy.shape[1]) != nbias:
        return xp.zeros((nbias,), dtype=dt)
    if dt.kind != "c":
        return _sum_bias_real(xp, gy, cdt)
    # the real bias is in a and c, the imaginary one in c (_complex.grad_parts)
    ga, _, gc = parts if parts is not None else _complex.grad_parts(xp, gy, cdt)
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


def _check_forced(p, xp, backend, need_gi: bool, need_gw: bool) -> None:
    """A forced backend that cannot run a gradient asked for: ValueError
    before any work."""
    for op, need in (("grad_input", need_gi), ("grad_weight", need_gw)):
        if need:
            select(Problem(p, xp, op), backend)


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
    if backend is not None:
        _check_forced(p.with_dtype(compute_dtype(dt)), xp, backend, mask[0], mask[1])
    gy = _first(xp, _up(xp, grad_output))
    parts = _complex.shared_grad_parts(xp, gy, sum(mask))
    gi = gw = gb = None
    if mask[0]:
        gi = _down(grad_input_of(p, xp, gy, _up(xp, weight), backend, parts), dt)
    if mask[1]:
        gw = _down(grad_weight_of(p, xp, _first(xp, _up(xp, input)), gy, weight_shape, backend, parts), dt)
    if mask[2]:
        gb = _down(grad_bias_of(xp, gy, _bias_channels(p, weight_shape), parts), dt)
    return gi, gw, gb


class _BackwardMethods:
    """The methods the common backward call runs for a problem (its
    grad_input and grad_weight, chosen for ``threads`` threads in the
    dispatcher's ``generation`` of measured winners), and whether
    grad_input's needs the weight checked for NaN/inf first."""

    __slots__ = ("threads", "generation", "gi", "gw", "gi_check_w")

    def __init__(self, p, threads: int) -> None:
        self.threads = threads
        self.generation = _dispatch.GENERATION[0]
        qi = Problem(p, np, "grad_input")
        self.gi = select(qi)[1]
        self.gi_check_w = nonfinite_rule(self.gi, qi) == "weight"
        self.gw = select(Problem(p, np, "grad_weight"))[1]


# ConvParams -> _BackwardMethods of the common call; bounded, cleared when full
_bwd_methods: dict[ConvParams, _BackwardMethods] = {}
_BWD_MAX = 1024


def fast_backward(fn: str, gy, x, x_shape, w, w_shape, bias_sizes, stride, padding, dilation,
                  transposed, output_padding, groups, output_mask):
    """backward_core's common call, or None where it is not: real
    float32/float64 NumPy arrays of one native dtype, C-contiguous and
    aligned, no empty shape, a list or tuple of three bools for the mask
    (``x`` or ``w`` may be None, given by its shape, when the gradient that
    reads it is masked out, as for the torch.nn.grad helpers).  The same
    checks (_params) and method choice as backward_core, without the
    array-generic layers (complex, float16, layouts, CuPy): a small
    layer's backward spent 12 us there before any gradient (a 1x4x4x4
    depthwise backward took 47 us, its three kernels 7).  The caller has
    checked that the arrays are exact ndarrays, no backend is forced and
    benchmark mode is off."""
    dt = gy.dtype
    if dt not in REAL or (x is not None and x.dtype != dt) or (w is not None and w.dtype != dt):
        return None
    if type(output_mask) is not list and type(output_mask) is not tuple or len(output_mask) != 3:
        return None
    m0, m1, m2 = output_mask
    if type(m0) is not bool or type(m1) is not bool or type(m2) is not bool:
        return None
    if (m0 and w is None) or (m1 and x is None):
        return None
    if not (ready(gy) and (x is None or ready(x)) and (w is None or ready(w))):
        return None
    if not (gy.size and _prod(x_shape) and _prod(w_shape)):
        return None
    p = _params(fn, x_shape, w_shape, bias_sizes, stride, padding, dilation, transposed,
                output_padding, groups, gy.shape, dt)
    gi = gw = gb = None
    if m0 or m1:
        nt = get_num_threads()
        ms = _bwd_methods.get(p)
        if ms is None or ms.threads != nt or ms.generation != _dispatch.GENERATION[0]:
            ms = _BackwardMethods(p, nt)
            if len(_bwd_methods) >= _BWD_MAX:
                _bwd_methods.clear()
            _bwd_methods[p] = ms
        if m0:
            if ms.gi_check_w and not _depthwise.all_finite(w):
                return None
            gi = _outbuf.empty(p.input_shape, dt)
            if ms.gi.grad_input(p, gy, w, gi):
                return None  # a NaN or an infinity: the general path
        if m1:
            gw = _outbuf.empty(tuple(w_shape), dt)
            ms.gw.grad_weight(p, x, gy, gw)
    if m2:
        gb = grad_bias_of(np, gy, _bias_channels(p, w_shape))
    return gi, gw, gb


def fast_ok(backend, *arrays) -> bool:
    """Whether a call may try fast_backward: no forced backend, benchmark
    mode off, every array an exact numpy.ndarray (or None)."""
    if backend is not None or _autotune.get_benchmark():
        return False
    nd = np.ndarray
    for a in arrays:
        if a is not None and type(a) is not nd:
            return False
    return True


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------
@overload
def convolution_backward(grad_output: NDArray[_F], input: NDArray[_F], weight: NDArray[_F],
                         bias_sizes: Sequence[int] | None, stride: IntOrTuple, padding: Padding,
                         dilation: IntOrTuple, transposed: bool, output_padding: IntOrTuple,
                         groups: int, output_mask: Sequence[bool], *, backend: BackendArg = None,
                         padding_mode: PaddingMode = "zeros"
                         ) -> tuple[NDArray[_F] | None, NDArray[_F] | None, NDArray[_F] | None]: ...
@overload
def convolution_backward(grad_output: ArrayLike, input: ArrayLike, weight: ArrayLike,
                         bias_sizes: Sequence[int] | None, stride: IntOrTuple, padding: Padding,
                         dilation: IntOrTuple, transposed: bool, output_padding: IntOrTuple,
                         groups: int, output_mask: Sequence[bool], *, backend: BackendArg = None,
                         padding_mode: PaddingMode = "zeros"
                         ) -> tuple[NDArray[Any] | None, NDArray[Any] | None, NDArray[Any] | None]: ...
def convolution_backward(grad_output: Any, input: Any, weight: Any, bias_sizes: Any, stride: Any,
                         padding: Any, dilation: Any, transposed: Any, output_padding: Any,
                         groups: Any, output_mask: Any, *, backend: BackendArg = None,
                         padding_mode: Any = "zeros") -> Any:
    """Gradients of :func:`convolution`, as ``aten::convolution_backward``.

    Parameters
    ----------
    grad_output : ndarray, shape ``(N, C_out, *out_spatial)``
        The gradient of the loss with respect to the forward's output (its
        shape must be the forward output's).
    input : ndarray, shape ``(N, C_in, *spatial)``
        The forward's input (batched, 1 to 3 spatial dimensions).
    weight : ndarray
        The forward's weight: ``(C_out, C_in // groups, *kernel)``, or
        transposed ``(C_in, C_out // groups, *kernel)``.
    bias_sizes : sequence of int or None
        ``[C_out]`` when the forward had a bias (checked), else None.
    stride, padding, dilation, transposed, output_padding, groups
        The forward's parameters, as :func:`convolution` (``padding`` may be
        ``'same'``/``'valid'`` for a plain convolution; ``output_padding``
        must be 0 for a plain one, as ATen).
    output_mask : sequence of 3 bools
        Which of (grad_input, grad_weight, grad_bias) to compute.
    backend : Backend or str, optional
        Run this backend (one that cannot run the backward raises
        ``ValueError`` saying why).
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, default 'zeros'
        The forward's ``padding_mode`` (an extension, see :func:`conv2d`):
        the gradients of the convolution of the input padded by the mode,
        the input gradient summed back through the padding.  Plain
        convolutions only.

    Returns
    -------
    grad_input : ndarray or None
        Shape of ``input``; None when ``output_mask[0]`` is False.
    grad_weight : ndarray or None
        Shape of ``weight``; None when ``output_mask[1]`` is False.
    grad_bias : ndarray or None
        Shape ``(C_out,)``, computed whenever ``output_mask[2]`` is True
        (with or without ``bias_sizes``); None otherwise.

    Raises
    ------
    TypeError
        Not arrays, mixed or unsupported dtypes, an ``output_mask`` that is
        not 3 bools, wrongly typed parameters.
    ValueError
        A ``grad_output`` of the wrong shape, shapes that do not fit,
        out-of-range parameters, a ``bias_sizes`` that is not ``[C_out]``, a
        ``backend`` that cannot run the backward.

    See Also
    --------
    convolution_double_backward : gradients of these gradients.
    cconv.grad.conv2d_input, cconv.grad.conv2d_weight : ``torch.nn.grad``'s helpers.

    Notes
    -----
    Only the masked-in gradients are computed.  float16 is computed in
    float32 and rounded once; complex follows autograd's convention:
    ``grad_input = conv_transpose(gO, conj(W))``, ``grad_weight`` the
    correlation of ``conj(x)`` with ``gO``, ``grad_bias = sum(gO)``.
    The input gradient runs on the GEMM backend's transposed form or the
    depthwise kernels, the weight gradient on OpenBLAS GEMM (or the
    implicit-GEMM grouped kernels, the depthwise weight-gradient kernels).

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((8, 64, 28, 28), dtype=np.float32)
    >>> w = rng.standard_normal((128, 64, 3, 3), dtype=np.float32)
    >>> y = cconv.conv2d(x, w, stride=2, padding=1)
    >>> gy = np.ones_like(y)
    >>> gx, gw, gb = cconv.convolution_backward(
    ...     gy, x, w, [128], (2, 2), (1, 1), (1, 1), False, (0, 0), 1, (True, True, True))
    >>> gx.shape, gw.shape, gb.shape
    ((8, 64, 28, 28), (128, 64, 3, 3), (128,))
    >>> gx, gw, gb = cconv.convolution_backward(
    ...     gy, x, w, None, 2, 1, 1, False, 0, 1, (False, True, False))
    >>> gx is None, gw.dtype, gb is None
    (True, dtype('float32'), True)
    """
    fn = "convolution_backward"
    if padding_mode != "zeros":
        # (the padded input's convolution, the input gradient folded back)
        tr = check_flag(fn, "transposed", transposed)
        mode = _padding_mode.check_mode(fn, padding_mode, tr)
        return _padding_mode.backward(grad_output, input, weight, bias_sizes, stride, padding,
                                      dilation, output_padding, groups, output_mask, mode,
                                      backend, convolution_backward)
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


def convolution_double_backward(ggI: Any, ggW: Any, ggb: Any, gO: Any, weight: Any, input: Any,
                                stride: IntOrTuple, padding: Padding, dilation: IntOrTuple,
                                transposed: bool, output_padding: IntOrTuple, groups: int,
                                output_mask: Sequence[bool], *, backend: BackendArg = None
                                ) -> tuple[Any, Any, Any]:
    """Double backward of :func:`convolution`, as ATen's ``_convolution_double_backward``.

    The gradients of ``<ggI, grad_input> + <ggW, grad_weight> + <ggb,
    grad_bias>``, where those are the outputs of
    ``convolution_backward(gO, input, weight, ...)``: what a
    gradient-of-gradient (e.g. a gradient penalty) needs.

    Parameters
    ----------
    ggI : ndarray or None
        Shape of ``input``: the incoming gradient of ``grad_input``.
    ggW : ndarray or None
        Shape of ``weight``: the incoming gradient of ``grad_weight``.
    ggb : ndarray or None
        Shape ``(C_out,)``: the incoming gradient of ``grad_bias``.
    gO : ndarray, shape ``(N, C_out, *out_spatial)``
        The ``grad_output`` of the first backward.
    weight, input : ndarray
        The forward's weight and input.
    stride, padding, dilation, transposed, output_padding, groups
        The forward's parameters, as :func:`convolution`.
    output_mask : sequence of 3 bools
        Checked (3 bools) but, as in ATen, does not drop an output.
    backend : Backend or str, optional
        Run this backend.

    Returns
    -------
    ggO : ndarray or None
        ``conv(ggI, W) + conv(input, ggW) + ggb``; None when ggI, ggW and
        ggb are all None.
    gI : ndarray or None
        The input gradient with ggW in place of the weight; None when ggW is.
    gW : ndarray or None
        The weight gradient with ggI in place of the input; None when ggI is.

    Raises
    ------
    TypeError
        Not arrays, mixed or unsupported dtypes, a bad ``output_mask``.
    ValueError
        An incoming gradient whose shape is not its variable's, shapes that
        do not fit the forward.

    See Also
    --------
    convolution_backward

    Notes
    -----
    Zero-size problems give zeros where ATen gives None.  Complex follows
    autograd's convention (the conjugations of :func:`convolution_backward`).

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> rng = np.random.default_rng(0)
    >>> x, w = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((4, 3, 3, 3))
    >>> gO = rng.standard_normal((2, 4, 8, 8))
    >>> ggI, ggW = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    >>> ggO, gI, gW = cconv.convolution_double_backward(
    ...     ggI, ggW, None, gO, w, x, 1, 1, 1, False, 0, 1, (True, True, True))
    >>> ggO.shape, gI.shape, gW.shape
    ((2, 4, 8, 8), (2, 3, 8, 8), (4, 3, 3, 3))
    >>> bool(np.allclose(ggO, cconv.conv2d(ggI, w, padding=1) + cconv.conv2d(x, ggW, padding=1)))
    True
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
    if backend is not None:
        pc = p.with_dtype(compute_dtype(dt))
        if ggI is not None or ggW is not None:
            select(Problem(pc, xp, "forward", need_backward=True), backend)
        _check_forced(pc, xp, backend, ggW is not None, ggI is not None)

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
    parts = _complex.shared_grad_parts(xp, gO, (ggW is not None) + (ggI is not None))
    gI = None if ggW is None else grad_input_of(p, xp, gO, ggW, backend, parts)
    gW = None if ggI is None else grad_weight_of(p, xp, ggI, gO, w_shape, backend, parts)
    return _down(ggO, dt), _down(gI, dt), _down(gW, dt)
