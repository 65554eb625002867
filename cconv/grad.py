"""Gradients of conv1d/2d/3d with respect to the input or the weight, as
``torch.nn.grad``.

``convNd_input(input_size, weight, grad_output, ...)`` is the gradient of
the convolution with respect to its input, of shape ``input_size``;
``convNd_weight(input, weight_size, grad_output, ...)`` the gradient with
respect to its weight, of shape ``weight_size``.  As in PyTorch 2.13 both
are ``convolution_backward`` with one output masked in, so everything is
batched: ``input_size`` is the full ``(N, C_in, *spatial)`` (it is what
disambiguates the input size of a strided convolution, e.g. 9 or 10 for
kernel 3, stride 2 and output 4) and ``grad_output`` is ``(N, C_out,
*out)``.  A ``padding`` of ``'same'`` or ``'valid'`` is also accepted (an
extension: PyTorch's helpers reject strings).
"""
from __future__ import annotations

from typing import Any, Sequence, overload

from numpy import ndarray as _nd
from numpy.typing import ArrayLike, NDArray

from . import _dask
from ._array import get_xp
from ._backward import _shape_arg, backward_core, fast_backward, fast_ok
from ._args import as_array
from ._functional import _F, BackendArg, IntOrTuple, Padding

__all__ = [
    "conv1d_input",
    "conv1d_weight",
    "conv2d_input",
    "conv2d_weight",
    "conv3d_input",
    "conv3d_weight",
]


def _size_arg(fn: str, name: str, size, nsp: int) -> tuple[int, ...]:
    shape = _shape_arg(fn, name, size)
    if len(shape) != nsp + 2:
        hint = ""
        if len(shape) == nsp:
            hint = (" (a size of the spatial dims only is not accepted, as in PyTorch 2.13: give "
                    "the full size, batch and channels included)")
        what = "(C_out, C_in // groups, *kernel)" if name == "weight_size" else "(N, C, *spatial)"
        raise ValueError(
            f"{fn}: expected {name} to have {nsp + 2} entries {what} for a {nsp}-D "
            f"convolution, but got {name}={list(shape)}{hint}"
        )
    return shape


def _input_grad(fn, nsp, input_size, weight, grad_output, stride, padding, dilation, groups, backend):
    if not (type(weight) is _nd and type(grad_output) is _nd) and _dask.any_dask(weight, grad_output):
        return _dask.grad_input(fn, nsp, input_size, weight, grad_output, stride, padding, dilation, groups,
                                backend)
    xp = get_xp(weight=weight, grad_output=grad_output)
    weight = as_array(xp, "weight", weight, fn)
    grad_output = as_array(xp, "grad_output", grad_output, fn)
    if weight is None or grad_output is None:
        raise TypeError(f"{fn}: weight and grad_output must be arrays, not None")
    shape = _size_arg(fn, "input_size", input_size, nsp)
    if fast_ok(backend, weight, grad_output):
        res = fast_backward(fn, grad_output, None, shape, weight, tuple(weight.shape), None, stride,
                            padding, dilation, False, 0, groups, (True, False, False))
        if res is not None:
            return res[0]
    return backward_core(fn, xp, grad_output, None, shape, weight, tuple(weight.shape), None, stride,
                         padding, dilation, False, 0, groups, (True, False, False), backend)[0]


def _weight_grad(fn, nsp, input, weight_size, grad_output, stride, padding, dilation, groups, backend):
    if not (type(input) is _nd and type(grad_output) is _nd) and _dask.any_dask(input, grad_output):
        return _dask.grad_weight(fn, nsp, input, weight_size, grad_output, stride, padding, dilation, groups,
                                 backend)
    xp = get_xp(input=input, grad_output=grad_output)
    input = as_array(xp, "input", input, fn)
    grad_output = as_array(xp, "grad_output", grad_output, fn)
    if input is None or grad_output is None:
        raise TypeError(f"{fn}: input and grad_output must be arrays, not None")
    shape = _size_arg(fn, "weight_size", weight_size, nsp)
    if fast_ok(backend, input, grad_output):
        res = fast_backward(fn, grad_output, input, tuple(input.shape), None, shape, None, stride,
                            padding, dilation, False, 0, groups, (False, True, False))
        if res is not None:
            return res[1]
    return backward_core(fn, xp, grad_output, input, tuple(input.shape), None, shape, None, stride,
                         padding, dilation, False, 0, groups, (False, True, False), backend)[1]


@overload
def conv1d_input(input_size: Sequence[int], weight: NDArray[_F], grad_output: NDArray[_F],
                 stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                 groups: int = 1, *, backend: BackendArg = None) -> NDArray[_F]: ...
@overload
def conv1d_input(input_size: Sequence[int], weight: ArrayLike, grad_output: ArrayLike,
                 stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                 groups: int = 1, *, backend: BackendArg = None) -> NDArray[Any]: ...
def conv1d_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: IntOrTuple = 1,
                 padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                 backend: BackendArg = None) -> Any:
    """Gradient of :func:`cconv.conv1d` with respect to its input, as ``torch.nn.grad.conv1d_input``.

    Parameters
    ----------
    input_size : sequence of 3 ints
        The input's full shape ``(N, C_in, L)`` (it disambiguates the
        input size of a strided convolution).
    weight : ndarray, shape ``(C_out, C_in // groups, kL)``
        The forward's weight.
    grad_output : ndarray, shape ``(N, C_out, L_out)``
        The gradient of the loss with respect to the forward's output, of
        ``weight``'s dtype.
    stride : int or tuple of 1 ints, default 1
    padding : int, tuple of 1 ints, 'valid' or 'same', default 0
    dilation : int or tuple of 1 ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv1d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``input_size``
        The gradient with respect to the input, of ``weight``'s dtype.

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
    convolution_backward : all three gradients in one call.
    conv_transpose1d : the same computation as a layer.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the input
    gradient masked in; batched arrays only.  The dtype rules are the forward's.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> w = np.ones((1, 1, 3))
    >>> gy = np.ones((1, 1, 3))
    >>> cconv.grad.conv1d_input((1, 1, 5), w, gy)
    array([[[1., 2., 3., 2., 1.]]])
    """
    return _input_grad("conv1d_input", 1, input_size, weight, grad_output, stride, padding, dilation,
                       groups, backend)


@overload
def conv1d_weight(input: NDArray[_F], weight_size: Sequence[int], grad_output: NDArray[_F],
                  stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                  groups: int = 1, *, backend: BackendArg = None) -> NDArray[_F]: ...
@overload
def conv1d_weight(input: ArrayLike, weight_size: Sequence[int], grad_output: ArrayLike,
                  stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                  groups: int = 1, *, backend: BackendArg = None) -> NDArray[Any]: ...
def conv1d_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: IntOrTuple = 1,
                  padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                  backend: BackendArg = None) -> Any:
    """Gradient of :func:`cconv.conv1d` with respect to its weight, as ``torch.nn.grad.conv1d_weight``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, L)``
        The forward's input.
    weight_size : sequence of 3 ints
        The weight's shape ``(C_out, C_in // groups, kL)``.
    grad_output : ndarray, shape ``(N, C_out, L_out)``
        The gradient of the loss with respect to the forward's output, of
        ``input``'s dtype.
    stride : int or tuple of 1 ints, default 1
    padding : int, tuple of 1 ints, 'valid' or 'same', default 0
    dilation : int or tuple of 1 ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv1d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``weight_size``
        The gradient with respect to the weight, of ``input``'s dtype.

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
    convolution_backward : all three gradients in one call.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the weight
    gradient masked in; batched arrays only.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.arange(5.0).reshape(1, 1, 5)
    >>> gy = np.ones((1, 1, 3))
    >>> cconv.grad.conv1d_weight(x, (1, 1, 3), gy)
    array([[[3., 6., 9.]]])
    """
    return _weight_grad("conv1d_weight", 1, input, weight_size, grad_output, stride, padding, dilation,
                        groups, backend)


@overload
def conv2d_input(input_size: Sequence[int], weight: NDArray[_F], grad_output: NDArray[_F],
                 stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                 groups: int = 1, *, backend: BackendArg = None) -> NDArray[_F]: ...
@overload
def conv2d_input(input_size: Sequence[int], weight: ArrayLike, grad_output: ArrayLike,
                 stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                 groups: int = 1, *, backend: BackendArg = None) -> NDArray[Any]: ...
def conv2d_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: IntOrTuple = 1,
                 padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                 backend: BackendArg = None) -> Any:
    """Gradient of :func:`cconv.conv2d` with respect to its input, as ``torch.nn.grad.conv2d_input``.

    Parameters
    ----------
    input_size : sequence of 4 ints
        The input's full shape ``(N, C_in, H, W)`` (it disambiguates the
        input size of a strided convolution).
    weight : ndarray, shape ``(C_out, C_in // groups, kH, kW)``
        The forward's weight.
    grad_output : ndarray, shape ``(N, C_out, H_out, W_out)``
        The gradient of the loss with respect to the forward's output, of
        ``weight``'s dtype.
    stride : int or tuple of 2 ints, default 1
    padding : int, tuple of 2 ints, 'valid' or 'same', default 0
    dilation : int or tuple of 2 ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv2d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``input_size``
        The gradient with respect to the input, of ``weight``'s dtype.

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
    convolution_backward : all three gradients in one call.
    conv_transpose2d : the same computation as a layer.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the input
    gradient masked in; batched arrays only.  The dtype rules are the forward's.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> rng = np.random.default_rng(0)
    >>> w = rng.standard_normal((8, 4, 3, 3))
    >>> gy = rng.standard_normal((2, 8, 5, 5))
    >>> cconv.grad.conv2d_input((2, 4, 10, 10), w, gy, stride=2, padding=1).shape
    (2, 4, 10, 10)
    """
    return _input_grad("conv2d_input", 2, input_size, weight, grad_output, stride, padding, dilation,
                       groups, backend)


@overload
def conv2d_weight(input: NDArray[_F], weight_size: Sequence[int], grad_output: NDArray[_F],
                  stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                  groups: int = 1, *, backend: BackendArg = None) -> NDArray[_F]: ...
@overload
def conv2d_weight(input: ArrayLike, weight_size: Sequence[int], grad_output: ArrayLike,
                  stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                  groups: int = 1, *, backend: BackendArg = None) -> NDArray[Any]: ...
def conv2d_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: IntOrTuple = 1,
                  padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                  backend: BackendArg = None) -> Any:
    """Gradient of :func:`cconv.conv2d` with respect to its weight, as ``torch.nn.grad.conv2d_weight``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, H, W)``
        The forward's input.
    weight_size : sequence of 4 ints
        The weight's shape ``(C_out, C_in // groups, kH, kW)``.
    grad_output : ndarray, shape ``(N, C_out, H_out, W_out)``
        The gradient of the loss with respect to the forward's output, of
        ``input``'s dtype.
    stride : int or tuple of 2 ints, default 1
    padding : int, tuple of 2 ints, 'valid' or 'same', default 0
    dilation : int or tuple of 2 ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv2d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``weight_size``
        The gradient with respect to the weight, of ``input``'s dtype.

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
    convolution_backward : all three gradients in one call.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the weight
    gradient masked in; batched arrays only.

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
    """
    return _weight_grad("conv2d_weight", 2, input, weight_size, grad_output, stride, padding, dilation,
                        groups, backend)


@overload
def conv3d_input(input_size: Sequence[int], weight: NDArray[_F], grad_output: NDArray[_F],
                 stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                 groups: int = 1, *, backend: BackendArg = None) -> NDArray[_F]: ...
@overload
def conv3d_input(input_size: Sequence[int], weight: ArrayLike, grad_output: ArrayLike,
                 stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                 groups: int = 1, *, backend: BackendArg = None) -> NDArray[Any]: ...
def conv3d_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: IntOrTuple = 1,
                 padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                 backend: BackendArg = None) -> Any:
    """Gradient of :func:`cconv.conv3d` with respect to its input, as ``torch.nn.grad.conv3d_input``.

    Parameters
    ----------
    input_size : sequence of 5 ints
        The input's full shape ``(N, C_in, D, H, W)`` (it disambiguates the
        input size of a strided convolution).
    weight : ndarray, shape ``(C_out, C_in // groups, kD, kH, kW)``
        The forward's weight.
    grad_output : ndarray, shape ``(N, C_out, D_out, H_out, W_out)``
        The gradient of the loss with respect to the forward's output, of
        ``weight``'s dtype.
    stride : int or tuple of 3 ints, default 1
    padding : int, tuple of 3 ints, 'valid' or 'same', default 0
    dilation : int or tuple of 3 ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv3d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``input_size``
        The gradient with respect to the input, of ``weight``'s dtype.

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
    convolution_backward : all three gradients in one call.
    conv_transpose3d : the same computation as a layer.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the input
    gradient masked in; batched arrays only.  The dtype rules are the forward's.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> w = np.ones((2, 3, 1, 1, 1), np.float32)
    >>> gy = np.ones((1, 2, 2, 2, 2), np.float32)
    >>> gx = cconv.grad.conv3d_input((1, 3, 2, 2, 2), w, gy)
    >>> gx.shape, float(gx.max())
    ((1, 3, 2, 2, 2), 2.0)
    """
    return _input_grad("conv3d_input", 3, input_size, weight, grad_output, stride, padding, dilation,
                       groups, backend)


@overload
def conv3d_weight(input: NDArray[_F], weight_size: Sequence[int], grad_output: NDArray[_F],
                  stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                  groups: int = 1, *, backend: BackendArg = None) -> NDArray[_F]: ...
@overload
def conv3d_weight(input: ArrayLike, weight_size: Sequence[int], grad_output: ArrayLike,
                  stride: IntOrTuple = 1, padding: Padding = 0, dilation: IntOrTuple = 1,
                  groups: int = 1, *, backend: BackendArg = None) -> NDArray[Any]: ...
def conv3d_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: IntOrTuple = 1,
                  padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                  backend: BackendArg = None) -> Any:
    """Gradient of :func:`cconv.conv3d` with respect to its weight, as ``torch.nn.grad.conv3d_weight``.

    Parameters
    ----------
    input : ndarray, shape ``(N, C_in, D, H, W)``
        The forward's input.
    weight_size : sequence of 5 ints
        The weight's shape ``(C_out, C_in // groups, kD, kH, kW)``.
    grad_output : ndarray, shape ``(N, C_out, D_out, H_out, W_out)``
        The gradient of the loss with respect to the forward's output, of
        ``input``'s dtype.
    stride : int or tuple of 3 ints, default 1
    padding : int, tuple of 3 ints, 'valid' or 'same', default 0
    dilation : int or tuple of 3 ints, default 1
    groups : int, default 1
        The forward convolution's parameters, as :func:`cconv.conv3d`
        (strings for ``padding`` are an extension: PyTorch's helpers reject
        them).
    backend : Backend or str, optional
        Run this backend (one that cannot run the gradient raises
        ``ValueError``).

    Returns
    -------
    ndarray, shape ``weight_size``
        The gradient with respect to the weight, of ``input``'s dtype.

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
    convolution_backward : all three gradients in one call.

    Notes
    -----
    As in PyTorch 2.13, this is ``convolution_backward`` with only the weight
    gradient masked in; batched arrays only.

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 3, 2, 2, 2))
    >>> gy = np.ones((1, 2, 2, 2, 2))
    >>> float(cconv.grad.conv3d_weight(x, (2, 3, 1, 1, 1), gy).sum())
    48.0
    """
    return _weight_grad("conv3d_weight", 3, input, weight_size, grad_output, stride, padding, dilation,
                        groups, backend)
