"""Convolutions and their gradients on dask arrays (optional: ``cconv[dask]``).

The public functions hand a call here when one of its array arguments is a
``dask.array.Array``; the result is then a lazy dask array whose blocks are
computed by cconv's NumPy path (see docs/dask.md).  This module only
recognises dask arrays, by their type's module name, without importing
dask; the work is in the submodules, imported on the first such call.
"""
from __future__ import annotations

from typing import Any

__all__ = ["is_dask", "any_dask", "stand_ins", "forward", "backward", "double_backward", "grad_input",
           "grad_weight"]


def is_dask(a: Any) -> bool:
    """True when ``a`` is a ``dask.array.Array`` (checked without importing dask)."""
    t = type(a)
    return t.__name__ == "Array" and t.__module__.startswith("dask.array")


def any_dask(*arrays: Any) -> bool:
    """Whether any argument is a dask array."""
    for a in arrays:
        if a is not None and is_dask(a):
            return True
    return False


def stand_ins(*arrays: Any) -> list:
    """Each dask array replaced by a NumPy array of its shape and dtype that
    holds no memory (for calls that read only shapes and dtypes)."""
    import math

    import numpy as np

    res = []
    for a in arrays:
        if is_dask(a):
            if any(isinstance(n, float) and math.isnan(n) for n in a.shape):
                raise ValueError(f"a dask array of unknown shape {a.shape}: call compute_chunk_sizes() first")
            a = np.broadcast_to(np.zeros((), dtype=a.dtype), a.shape)
        res.append(a)
    return res


def forward(*args, **kwargs):
    """The forward functions on dask arrays (cconv._dask._forward.forward)."""
    from ._forward import forward as f

    return f(*args, **kwargs)


def backward(*args, **kwargs):
    """convolution_backward on dask arrays (cconv._dask._backward.backward)."""
    from ._backward import backward as f

    return f(*args, **kwargs)


def double_backward(*args, **kwargs):
    """convolution_double_backward on dask arrays."""
    from ._backward import double_backward as f

    return f(*args, **kwargs)


def grad_input(*args, **kwargs):
    """cconv.grad.convNd_input on dask arrays."""
    from ._backward import helper_input as f

    return f(*args, **kwargs)


def grad_weight(*args, **kwargs):
    """cconv.grad.convNd_weight on dask arrays."""
    from ._backward import helper_weight as f

    return f(*args, **kwargs)
