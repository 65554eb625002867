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

from . import _dask, _docs
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
@_docs.per_dim("input", 1)
def conv1d_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: IntOrTuple = 1,
                 padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                 backend: BackendArg = None) -> Any:
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
@_docs.per_dim("weight", 1)
def conv1d_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: IntOrTuple = 1,
                  padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                  backend: BackendArg = None) -> Any:
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
@_docs.per_dim("input", 2)
def conv2d_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: IntOrTuple = 1,
                 padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                 backend: BackendArg = None) -> Any:
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
@_docs.per_dim("weight", 2)
def conv2d_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: IntOrTuple = 1,
                  padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                  backend: BackendArg = None) -> Any:
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
@_docs.per_dim("input", 3)
def conv3d_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: IntOrTuple = 1,
                 padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                 backend: BackendArg = None) -> Any:
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
@_docs.per_dim("weight", 3)
def conv3d_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: IntOrTuple = 1,
                  padding: Padding = 0, dilation: IntOrTuple = 1, groups: int = 1, *,
                  backend: BackendArg = None) -> Any:
    return _weight_grad("conv3d_weight", 3, input, weight_size, grad_output, stride, padding, dilation,
                        groups, backend)
