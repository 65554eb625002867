"""Arguments of a call on dask arrays: what may be mixed with them, chunks
that cannot work, the zero-size fallback."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._array import is_cupy
from . import is_dask

__all__ = ["arrays", "as_dask", "is_empty", "compute_all"]


def _axis_name(axis: int, first_spatial: int | None) -> str:
    if first_spatial is None:
        return f"axis {axis}"
    if axis >= first_spatial:
        return f"axis {axis}, spatial"
    if first_spatial == 2 and axis == 0:
        return "axis 0, batch"
    return f"axis {axis}, channels"


def arrays(fn: str, out: Any = None, spatial_from: dict | None = None, **named: Any) -> dict:
    """The named arguments of a call that involves a dask array, checked:
    NumPy arrays and array-likes stay (as NumPy arrays), dask arrays must
    have NumPy chunks of known sizes; ``out=`` and CuPy arrays are a
    TypeError, unknown chunk sizes a ValueError naming the argument and
    axis.  ``spatial_from[name]`` is the first spatial axis of that array
    (for the message: 2 batched, 1 unbatched; absent: a weight or bias)."""
    if out is not None:
        raise TypeError(
            f"{fn}: out= cannot be used with dask arrays: the result is a lazy dask array (write it "
            f"with dask.array.store, to_zarr, or compute it), but got out of type "
            f"{type(out).__module__}.{type(out).__name__}"
        )
    gpu = [k for k, v in named.items() if v is not None and is_cupy(v)]
    if gpu:
        raise TypeError(
            f"{fn}: dask arrays cannot be mixed with cupy.ndarray arguments ({', '.join(gpu)}); "
            f"give NumPy arrays or dask arrays of NumPy chunks"
        )
    res = {}
    for name, a in named.items():
        if a is None:
            res[name] = None
            continue
        if is_dask(a):
            meta = getattr(a, "_meta", None)
            if type(meta) is not np.ndarray:
                raise TypeError(
                    f"{fn}: {name} is a dask array of {type(meta).__module__}.{type(meta).__name__} "
                    f"chunks; only dask arrays of numpy.ndarray chunks are supported"
                )
            first = (spatial_from or {}).get(name)
            for axis, cs in enumerate(a.chunks):
                if any(isinstance(c, float) and math.isnan(c) for c in cs):
                    raise ValueError(
                        f"{fn}: {name} has unknown chunk sizes along {_axis_name(axis, first)} "
                        f"(shape {a.shape}); call {name}.compute_chunk_sizes() first"
                    )
            res[name] = a
            continue
        if not isinstance(a, np.ndarray):
            try:
                a = np.asarray(a)
            except Exception as e:
                raise TypeError(f"{fn}: {name} could not be converted to an array ({e})") from None
        res[name] = a
    return res


def as_dask(a, chunks=None):
    """``a`` as a dask array (a NumPy array: one chunk, or ``chunks``)."""
    if a is None or is_dask(a):
        return a
    import dask.array as da

    return da.from_array(a, chunks=a.shape if chunks is None else chunks)


def is_empty(*shapes) -> bool:
    """Whether any of the shapes has no elements."""
    return any(math.prod(int(s) for s in sh) == 0 for sh in shapes if sh is not None)


def compute_all(*arrays):
    """NumPy arrays of the arguments (dask ones computed together)."""
    import dask

    idx = [i for i, a in enumerate(arrays) if a is not None and is_dask(a)]
    vals = list(arrays)
    if idx:
        got = dask.compute(*[arrays[i] for i in idx])
        for i, v in zip(idx, got):
            vals[i] = np.asarray(v)
    return vals
