"""The docstrings of the functions that exist once per number of spatial
dimensions: conv1d/2d/3d, conv_transpose1d/2d/3d and cconv.grad's
conv{1,2,3}d_input and conv{1,2,3}d_weight.  One text per family, with the
dimension's shapes and names filled in (``$sp`` the input's spatial axes,
``$out`` the output's, ``$k`` the kernel's, ``$n`` the number of
dimensions, ``$nfull`` that plus two), the sections two families share
written once (``_PARTS``), and each function's own examples.
"""
from __future__ import annotations

from string import Template
from typing import Callable, TypeVar

__all__ = ["docstring", "per_dim"]

_T = TypeVar("_T", bound=Callable[..., object])

_SHAPES = {1: ("L", "L_out", "kL"), 2: ("H, W", "H_out, W_out", "kH, kW"),
           3: ("D, H, W", "D_out, H_out, W_out", "kD, kH, kW")}


def docstring(family: str, n: int) -> str:
    """The docstring of ``family``'s ``n``-D function."""
    sp, out, k = _SHAPES[n]
    text = Template(_TEMPLATES[family]).safe_substitute(_PARTS)   # the shared sections
    text = Template(text).substitute(n=n, nfull=n + 2, sp=sp, out=out, k=k)
    return text + _EXAMPLES[(family, n)]


def per_dim(family: str, n: int) -> Callable[[_T], _T]:
    """Give the decorated function ``docstring(family, n)``."""
    def deco(f: _T) -> _T:
        f.__doc__ = docstring(family, n)
        return f
    return deco

# conv{n}d and conv_transpose{n}d: what they raise
_FORWARD_RAISES = """
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
    --------"""

# conv{n}d and conv_transpose{n}d: dtypes, layouts, array types
_FORWARD_NOTES = """
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
"""

# conv{n}d_input and conv{n}d_weight: the forward's parameters
_GRAD_PARAMETERS = """    stride : int or tuple of $n ints, default 1
    padding : int, tuple of $n ints, 'valid' or 'same', default 0
    dilation : int or tuple of $n ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv${n}d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------"""

# conv{n}d_input and conv{n}d_weight: what they raise
_GRAD_RAISES = """
    Raises
    ------
    TypeError
        Arguments that are not arrays, mixed or unsupported dtypes, a size
        that is not a sequence of ints.
    ValueError
        Sizes that do not fit the forward convolution (a ``grad_output`` whose
        shape is not the forward's output shape, a size without batch and
        channels), out-of-range parameters.

    See Also
    --------
    convolution_backward : all three gradients in one call."""

# conv{n}d and conv_transpose{n}d: the out and backend parameters
_OUT_BACKEND = """    out : ndarray, optional
        Where to write the result: a C-contiguous, writable array of the
        result's shape and dtype that does not overlap an input.  It is returned.
    backend : Backend or str, optional
        Run this backend (a :class:`Backend` member or its name, e.g.
        ``"gemm"``) instead of the one :func:`select_backend` picks.  One that
        cannot run the problem raises ``ValueError`` saying why."""

_PARTS = {"out_backend": _OUT_BACKEND, "forward_raises": _FORWARD_RAISES,
          "forward_notes": _FORWARD_NOTES, "grad_parameters": _GRAD_PARAMETERS,
          "grad_raises": _GRAD_RAISES}

_CONV = """${n}-D convolution (cross-correlation), as ``torch.nn.functional.conv${n}d``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, $sp)`` or ``(C_in, $sp)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_out, C_in // groups, $k)``
        The filters, of ``input``'s dtype.
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of $n ints, default 1
        Step of the kernel over each spatial dimension (>= 1).
    padding : int, tuple of $n ints, 'valid' or 'same', default 0
        Implicit padding added on both sides of each spatial dimension (>= 0).
        ``'valid'`` is no padding; ``'same'`` pads ``dilation * (k - 1)`` in
        total per dimension, the odd one after (as PyTorch), so that the output
        has the input's size; it needs ``stride=1``.
    dilation : int or tuple of $n ints, default 1
        Spacing between kernel taps (>= 1).
    groups : int, default 1
        Split the channels into ``groups`` independent convolutions: ``C_in``
        and ``C_out`` must both be multiples of it.  ``groups == C_in`` with
        ``weight`` of shape ``(C_in * m, 1, ...)`` is a depthwise convolution.
$out_backend
    padding_mode : {'zeros', 'reflect', 'replicate', 'circular'}, default 'zeros'
        How the padding is filled, as ``torch.nn.Conv${n}d``'s ``padding_mode``
        (an extension of the functional API): other than ``'zeros'``, the input
        is padded by the mode (``torch.nn.functional.pad``: ``'reflect'`` needs
        each pad smaller than its dimension, ``'circular'`` no larger) and then
        convolved with no padding.  The gradients are
        :func:`convolution_backward`'s with the same ``padding_mode``.

    Returns
    -------
    ndarray, shape ``(N, C_out, $out)`` or ``(C_out, $out)``
        Of ``input``'s dtype and array type (``out`` when given); unbatched
        for an unbatched input.  Each output size is ``(size + pad_before +
        pad_after - dilation * (k - 1) - 1) // stride + 1``.
$forward_raises
    conv_transpose${n}d : the transposed convolution (the gradient of this one
        with respect to its input).
    convolution_backward : the gradients of this convolution.
    select_backend : which backend a call runs.
$forward_notes
    Backends: a depthwise convolution (``groups == C_in``) runs the direct
    SIMD depthwise kernels (3x3 stride-1 float32 ones may use a Winograd
    variant); other problems run the implicit GEMM on SIMD micro-kernels
    (Winograd F(2x2, 3x3) for suitable 3x3 stride-1 layers), 1x1 and
    backward-friendly cases OpenBLAS GEMM; channels-last inputs take NHWC
    kernels where there are some.  Every backend gives PyTorch's results to
    rounding; :func:`select_backend` tells which one runs.
"""

_CONV_TRANSPOSE = """${n}-D transposed convolution, as ``torch.nn.functional.conv_transpose${n}d``.

    The gradient of :func:`conv${n}d` with respect to its input, used as an
    up-sampling layer (sometimes called a deconvolution).

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, $sp)`` or ``(C_in, $sp)``
        The input, batched or unbatched (channels-first, as PyTorch).
    weight : ndarray, shape ``(C_in, C_out // groups, $k)``
        The filters, of ``input``'s dtype (note: input channels first, as
        PyTorch's transposed weights).
    bias : ndarray, shape ``(C_out,)``, optional
        Added to each output channel, of ``input``'s dtype.
    stride : int or tuple of $n ints, default 1
        Up-sampling factor of each spatial dimension (>= 1).
    padding : int or tuple of $n ints, default 0
        ``dilation * (k - 1) - padding`` zeros are implicitly added to each
        side (>= 0; strings are not accepted, as in PyTorch).
    output_padding : int or tuple of $n ints, default 0
        Extra size added on one side of each output dimension, to pick among
        the output sizes a strided convolution maps to the same input size;
        smaller than ``stride`` or ``dilation``.
    groups : int, default 1
        ``C_in`` and ``C_out`` must both be multiples of it.
    dilation : int or tuple of $n ints, default 1
        Spacing between kernel taps (>= 1).
$out_backend
    padding_mode : {'zeros'}, default 'zeros'
        Only ``'zeros'``, as ``torch.nn.ConvTranspose${n}d`` (another mode is a
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``(N, C_out, $out)`` or ``(C_out, $out)``
        Of ``input``'s dtype and array type (``out`` when given).  Each output
        size is ``(size - 1) * stride - 2 * padding + dilation * (k - 1) +
        output_padding + 1``.
$forward_raises
    conv${n}d : the convolution this one is the input gradient of.
    convolution_backward : the gradients (``transposed=True``).
$forward_notes
    Backends: the GEMM backend's transposed form (OpenBLAS GEMM and col2im),
    or the depthwise kernels for a depthwise problem.
"""

_GRAD_INPUT = """Gradient of :func:`cconv.conv${n}d` with respect to its input, as ``torch.nn.grad.conv${n}d_input``.

    Parameters
    ----------
    input_size : sequence of $nfull ints
        The input's full shape ``(N, C_in, $sp)`` (it disambiguates the
        input size of a strided convolution).
    weight : ndarray, shape ``(C_out, C_in // groups, $k)``
        The forward's weight.
    grad_output : ndarray, shape ``(N, C_out, $out)``
        The gradient of the loss with respect to the forward's output, of
        ``weight``'s dtype.
$grad_parameters
    ndarray, shape ``input_size``
        The gradient with respect to the input, of ``weight``'s dtype.
$grad_raises
    conv_transpose${n}d : the same computation as a layer.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the input
    gradient masked in; batched arrays only.  The dtype rules are the forward's.
"""

_GRAD_WEIGHT = """Gradient of :func:`cconv.conv${n}d` with respect to its weight, as ``torch.nn.grad.conv${n}d_weight``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, $sp)``
        The forward's input.
    weight_size : sequence of $nfull ints
        The weight's shape ``(C_out, C_in // groups, $k)``.
    grad_output : ndarray, shape ``(N, C_out, $out)``
        The gradient of the loss with respect to the forward's output, of
        ``input``'s dtype.
$grad_parameters
    ndarray, shape ``weight_size``
        The gradient with respect to the weight, of ``input``'s dtype.
$grad_raises

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the weight
    gradient masked in; batched arrays only.
"""

_TEMPLATES = {"conv": _CONV, "conv_transpose": _CONV_TRANSPOSE, "input": _GRAD_INPUT, "weight": _GRAD_WEIGHT}

_EXAMPLES = {
    ("conv", 1): """
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
    """,
    ("conv", 2): """
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
    """,
    ("conv", 3): """
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
    """,
    ("conv_transpose", 1): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.array([[[1.0, 2.0, 3.0]]])           # (N, C_in, L)
    >>> w = np.array([[[1.0, 1.0]]])                # (C_in, C_out // groups, kL)
    >>> cconv.conv_transpose1d(x, w, stride=2)
    array([[[1., 1., 2., 2., 3., 3.]]])
    """,
    ("conv_transpose", 2): """
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
    """,
    ("conv_transpose", 3): """
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
    """,
    ("input", 1): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> w = np.ones((1, 1, 3))
    >>> gy = np.ones((1, 1, 3))
    >>> cconv.grad.conv1d_input((1, 1, 5), w, gy)
    array([[[1., 2., 3., 2., 1.]]])
    """,
    ("input", 2): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> rng = np.random.default_rng(0)
    >>> w = rng.standard_normal((8, 4, 3, 3))
    >>> gy = rng.standard_normal((2, 8, 5, 5))
    >>> cconv.grad.conv2d_input((2, 4, 10, 10), w, gy, stride=2, padding=1).shape
    (2, 4, 10, 10)
    """,
    ("input", 3): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> w = np.ones((2, 3, 1, 1, 1), np.float32)
    >>> gy = np.ones((1, 2, 2, 2, 2), np.float32)
    >>> gx = cconv.grad.conv3d_input((1, 3, 2, 2, 2), w, gy)
    >>> gx.shape, float(gx.max())
    ((1, 3, 2, 2, 2), 2.0)
    """,
    ("weight", 1): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.arange(5.0).reshape(1, 1, 5)
    >>> gy = np.ones((1, 1, 3))
    >>> cconv.grad.conv1d_weight(x, (1, 1, 3), gy)
    array([[[3., 6., 9.]]])
    """,
    ("weight", 2): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((2, 4, 10, 10), dtype=np.float32)
    >>> gy = rng.standard_normal((2, 8, 5, 5), dtype=np.float32)
    >>> gw = cconv.grad.conv2d_weight(x, (8, 4, 3, 3), gy, stride=2, padding=1)
    >>> gw.shape, gw.dtype
    ((8, 4, 3, 3), dtype('float32'))
    """,
    ("weight", 3): """
    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 3, 2, 2, 2))
    >>> gy = np.ones((1, 2, 2, 2, 2))
    >>> float(cconv.grad.conv3d_weight(x, (2, 3, 1, 1, 1), gy).sum())
    48.0
    """,
}
