"""Which array module an argument belongs to (NumPy or CuPy), without
importing CuPy: a CuPy array is recognised by its type's module name."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_cupy", "get_xp", "narrow", "narrow_into"]


def is_cupy(a: Any) -> bool:
    """True when ``a`` is a ``cupy.ndarray`` (checked without importing cupy)."""
    t = type(a)
    return t.__name__ == "ndarray" and t.__module__.split(".")[0] == "cupy"


def get_xp(**arrays: Any):
    """The array module shared by the named arguments (None entries ignored).

    Returns ``numpy`` or ``cupy``.  A mix of CuPy and non-CuPy arrays is a
    ``TypeError`` that names the arguments of each kind.
    """
    gpu = [k for k, v in arrays.items() if v is not None and is_cupy(v)]
    if not gpu:
        return np
    cpu = [k for k, v in arrays.items() if v is not None and not is_cupy(v)]
    if cpu:
        kinds = ", ".join(f"{k} is {type(arrays[k]).__module__}.{type(arrays[k]).__name__}" for k in cpu)
        raise TypeError(
            "cconv: arguments must all be cupy.ndarray or all be NumPy arrays, "
            f"but {', '.join(gpu)} {'is' if len(gpu) == 1 else 'are'} cupy.ndarray and {kinds}"
        )
    from .cuda import _cupy  # imports cupy lazily, raises a clear error without a GPU

    return _cupy.require_cupy()


def narrow(a, dt):
    """``a`` cast to the narrower dtype ``dt`` (float32 results of a
    float16 call), memory order kept: values past ``dt``'s range become
    inf, as in PyTorch, without NumPy's overflow warning."""
    with np.errstate(over="ignore"):
        return a.astype(dt)


def narrow_into(out, a) -> None:
    """``out[...] = a`` with the same rule as :func:`narrow`."""
    with np.errstate(over="ignore"):
        out[...] = a
