"""Threads, scratch memory and show_config."""
from __future__ import annotations

import operator
import os
import sys
import threading

import numpy as np

from . import _kernels, _outbuf

__all__ = ["set_num_threads", "get_num_threads", "show_config", "empty_cache", "workspace", "result_empty"]

_lock = threading.Lock()
_requested: list[int | None] = [None]
# a C int (the OpenMP runtime's); PyTorch refuses 2**31 as well
_MAX_THREADS = 2**31 - 1


def set_num_threads(n: int) -> None:
    """Use ``n`` threads (n >= 1) in cconv's kernels from now on.

    The OpenMP runtime is told too, so threadpoolctl sees the setting; a
    threadpoolctl limit below ``n`` is respected."""
    try:
        if isinstance(n, (bool, np.bool_)):
            raise TypeError
        n = operator.index(n)  # not int(n): 1.5 and "2" are not thread counts
    except TypeError:
        raise TypeError(f"set_num_threads: n must be an int, but got {n!r}") from None
    if n < 1:
        raise ValueError(f"set_num_threads: n must be >= 1, but got n={n}")
    if n > _MAX_THREADS:
        raise ValueError(f"set_num_threads: n={n} is too large (at most {_MAX_THREADS})")
    with _lock:
        _requested[0] = n
    _kernels.openmp_set_threads(n)


def get_num_threads() -> int:
    """Threads the kernels use: the last ``set_num_threads``, else
    ``OMP_NUM_THREADS``, else the CPU count (capped by threadpoolctl)."""
    # (every kernel call asks: kept to one C call and two compares)
    omp = _kernels.openmp_max_threads()
    if omp < 1:
        omp = 1
    n = _requested[0]
    return omp if n is None or n > omp else n


_tls = threading.local()
_generation = [0]


def workspace(nbytes: int) -> np.ndarray | None:
    """A uint8 scratch buffer of at least ``nbytes``, kept per Python thread
    and reused from call to call (grown as needed)."""
    if nbytes <= 0:
        return None
    buf = getattr(_tls, "buf", None)
    if buf is None or buf.nbytes < nbytes or getattr(_tls, "gen", -1) != _generation[0]:
        _tls.buf = None
        # grow geometrically so a sequence of slightly larger calls does not
        # map fresh pages every time
        size = max(int(nbytes), int(buf.nbytes * 1.5) if buf is not None else 0)
        _tls.buf = buf = np.empty(size, dtype=np.uint8)
        _tls.gen = _generation[0]
    return buf


def result_empty(xp, shape, dtype):
    """An uninitialised C-order array for a result or a full-size temporary:
    on NumPy from the cache of freed result blocks (src/core/outbuf.h), so that a
    chain of calls reuses pages already mapped instead of faulting in new
    ones; ``xp.empty`` otherwise (CuPy has its own memory pool)."""
    if xp is np:
        return _outbuf.empty(shape, dtype)
    return xp.empty(shape, dtype=dtype)


def empty_cache() -> None:
    """Release the scratch memory kept between calls and the freed result
    blocks kept for reuse."""
    _generation[0] += 1
    _tls.buf = None
    _outbuf.release()


def show_config(file=None) -> None:
    """Print the version, the BLAS, the SIMD level, threads and the CUDA path."""
    from . import __version__
    from ._dispatch import simd_level

    out = file if file is not None else sys.stdout
    try:
        from . import _cuda

        cuda = _cuda.describe()
    except Exception as e:  # pragma: no cover - defensive
        cuda = f"unavailable ({e})"
    lines = [
        f"cconv {__version__}",
        f"  python      : {sys.version.split()[0]}",
        f"  numpy       : {np.__version__}",
        f"  BLAS        : scipy-openblas64, core {_kernels.blas_corename()} ({_kernels.blas_config().strip()})",
        f"  SIMD        : {simd_level()}",
        f"  threads     : {get_num_threads()} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})",
        f"  workspace   : capped at {_kernels.WORKSPACE_CAP // (1024 * 1024)} MiB per call",
        f"  CUDA path   : {cuda}",
    ]
    print("\n".join(lines), file=out)
