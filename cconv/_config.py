"""Threads, scratch memory and show_config."""
from __future__ import annotations

import operator
import os
import sys
import threading
from typing import Any

import numpy as np

from . import _kernels, _outbuf

__all__ = ["set_num_threads", "get_num_threads", "show_config", "empty_cache", "workspace", "result_empty"]

_lock = threading.Lock()
_requested: list[int | None] = [None]
# a C int (the OpenMP runtime's); PyTorch refuses 2**31 as well
_MAX_THREADS = 2**31 - 1
# the most threads a kernel starts: 4 x the CPUs this process may run on
# (src/core/parallel.h); larger counts are clamped to it
_CAP = _kernels.thread_cap()
# the thread that called fork() in this process, when it is a child forked
# after cconv (or anything on its OpenMP runtime) ran a team of threads from
# that thread: GNU OpenMP's pool does not survive fork, and a team started
# there would wait forever for workers that were not copied
_fork_thread: list[int | None] = [None]


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in cconv's kernels from now on.

    Parameters
    ----------
    n : int
        The thread count, >= 1.  The OpenMP runtime is told too, so
        threadpoolctl sees the setting; a threadpoolctl limit below ``n``
        is respected.  A count above 4 x the CPUs this process may run on
        is clamped to that (more threads than that only wait for cores).
        In a child made by ``fork()`` after cconv ran on several threads,
        calls from the thread that forked stay on one thread whatever the
        count (see README: Processes).

    Raises
    ------
    TypeError
        ``n`` is not an int (a bool, a float and a str are not).
    ValueError
        ``n`` < 1 or larger than a C int.

    See Also
    --------
    get_num_threads

    Examples
    --------
    >>> import cconv
    >>> before = cconv.get_num_threads()
    >>> cconv.set_num_threads(1)
    >>> cconv.get_num_threads()
    1
    >>> cconv.set_num_threads(before)
    """
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
    n = min(n, _CAP)
    with _lock:
        _requested[0] = n
    _kernels.openmp_set_threads(n)


def get_num_threads() -> int:
    """The number of threads cconv's kernels use.

    Returns
    -------
    int
        The last :func:`set_num_threads`, else ``OMP_NUM_THREADS``, else
        the CPU count; capped by a threadpoolctl limit and at 4 x the CPUs;
        1 in the thread that forked this process after cconv ran on
        several threads.

    Examples
    --------
    >>> import cconv
    >>> cconv.get_num_threads() >= 1
    True
    """
    # (every kernel call asks: kept to one C call and a few compares)
    omp = _kernels.openmp_max_threads()
    if omp < 1:
        omp = 1
    n = _requested[0]
    if n is None or n > omp:
        n = omp
    if _fork_thread[0] is not None and threading.get_ident() == _fork_thread[0]:
        return 1
    return n if n <= _CAP else _CAP


def _modules_with_pools() -> bool:
    """Whether a kernel module started an OpenMP team of several threads
    from the calling thread."""
    mods = [_kernels]
    for name in ("_depthwise", "_winograd", "_nhwc"):
        m = sys.modules.get(f"{__package__}.{name}")
        if m is not None:
            mods.append(m)
    return any(m.pool_started() for m in mods)


def _after_fork_in_child() -> None:
    """os.register_at_fork's child hook: the forking thread (the child's only
    one) runs single-threaded when its OpenMP pool was started in the
    parent (as PyTorch does for its pools); the caches of the parent's
    threads' scratch memory go too."""
    _fork_thread[0] = threading.get_ident() if _modules_with_pools() else None
    _tls.__dict__.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


_tls = threading.local()
_generation = [0]


def workspace(nbytes: int) -> np.ndarray | None:
    """A uint8 scratch buffer of at least ``nbytes``, kept per Python thread
    and reused from call to call (grown as needed).  ``empty_cache()`` from
    any thread drops every thread's buffer (a generation count each thread
    compares with its own on its next call)."""
    if nbytes <= 0:
        return None
    buf = getattr(_tls, "buf", None)
    gen = _generation[0]
    if buf is None or buf.nbytes < nbytes or getattr(_tls, "gen", -1) != gen:
        old = buf if buf is not None and getattr(_tls, "gen", -1) == gen else None
        _tls.buf = buf = None
        # grow geometrically so a sequence of slightly larger calls does not
        # map fresh pages every time; after empty_cache, start again from
        # what the call needs (growing from the released buffer made a
        # thread's scratch 1.5x larger after every empty_cache elsewhere,
        # until it ended in MemoryError)
        size = max(int(nbytes), int(old.nbytes * 1.5) if old is not None else 0)
        _tls.buf = buf = np.empty(size, dtype=np.uint8)
        _tls.gen = gen
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
    """Release the memory cconv keeps between calls.

    That is the per-thread scratch buffer (im2col columns, packed panels)
    and the freed result blocks kept for reuse by later results.  Arrays
    that are still referenced are not touched.  Safe while other threads
    run convolutions: a thread's buffer goes at its next call.

    Examples
    --------
    >>> import cconv
    >>> cconv.empty_cache()
    """
    with _lock:
        _generation[0] += 1
    _tls.buf = None
    _outbuf.release()


def _kind_line() -> str:
    from . import _dispatch, _kind

    loaded = _kind.loaded_kind()
    n = len(_dispatch._kind_defaults)
    if loaded is None:
        return f"{n} measured winners loaded"
    return f"{n} measured winners loaded from the table of {loaded[0]}"


def _wino_rule() -> str:
    """show_config's words for the dense Winograd's default rule under
    AVX-512 (src/gemm/gemm_conv.c: the smaller layers too where
    cc_cpu_wino_small says, else the larger ones only)."""
    from ._dispatch import simd_level

    if simd_level() != "avx512":
        return ""
    return ", Winograd rule: " + ("small layers too" if _kernels.wino_small() else "large layers only")


def _kc_words() -> str:
    """show_config's words for the AVX-512 micro-kernels' K blocks
    (src/core/cpu.h: cc_cpu_long_kc, and cc_cpu_uk_long_kc and
    cc_cpu_uk_spread_pf for the own GEMM where it runs)."""
    from ._dispatch import simd_level

    if simd_level() != "avx512":
        return ""
    words = ", K blocks of " + ("512" if _kernels.long_kc() else "128")
    if _kernels.uk_gemm_runs():
        words += (" (own GEMM reading B in place " + ("512" if _kernels.uk_long_kc() else "128")
                  + ", its prefetch " + ("within" if _kernels.uk_spread_pf() else "between")
                  + " the kernel calls)")
    return words


def show_config(file: Any = None) -> None:
    """Print the version, the BLAS, the SIMD level, the threads and the CUDA path.

    Parameters
    ----------
    file : file-like, optional
        Where to print (default ``sys.stdout``).

    Examples
    --------
    >>> import io
    >>> import cconv
    >>> buf = io.StringIO()
    >>> cconv.show_config(buf)
    >>> buf.getvalue().startswith("cconv " + cconv.__version__)
    True
    """
    from . import __version__, _dispatch, _kind, _tuning
    from ._dispatch import simd_level

    out = file if file is not None else sys.stdout
    try:
        from .cuda import _cupy

        cuda = _cupy.describe()
    except Exception as e:  # pragma: no cover - defensive
        cuda = f"unavailable ({e})"
    isa = simd_level()
    lines = [
        f"cconv {__version__}",
        f"  python      : {sys.version.split()[0]}",
        f"  numpy       : {np.__version__}",
        f"  BLAS        : scipy-openblas64, core {_kernels.blas_corename()} ({_kernels.blas_config().strip()})",
        f"  SIMD        : {isa}"
        f"{' emulated by SIMDe (a test build)' if isa in _kernels.emulated_isas() else ''}"
        f" (CPU vendor {_kernels.cpu_vendor()}, row prefetch "
        f"{'on' if _kernels.prefetch_rows() else 'off'}, own GEMM "
        f"{'on' if _kernels.uk_gemm_runs() else 'off'}"
        f"{' (float64 too)' if _kernels.uk_gemm_f64_runs() else ''}, depthwise "
        f"{'256-bit' if _kernels.dw_256() and isa == 'avx512' else 'full-width'}"
        f"{_wino_rule()}{_kc_words()})",
        f"  threads     : {get_num_threads()} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})",
        f"  workspace   : capped at {_kernels.WORKSPACE_CAP // (1024 * 1024)} MiB per call",
        f"  CPU kind    : {' / '.join(_kind.cpu_kinds())} ({_kind_line()})",
        f"  tuning file : {_tuning.default_path() if _tuning.enabled() else 'off'}"
        f" ({len(_dispatch._tuning)} winners loaded)",
        f"  CUDA path   : {cuda}",
    ]
    print("\n".join(lines), file=out)
