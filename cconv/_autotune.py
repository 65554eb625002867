"""Benchmark mode: time the applicable backends on the first call of each
problem and cache the winner (like cuDNN's benchmark mode).  Off by default."""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

__all__ = ["set_benchmark", "get_benchmark", "benchmark", "lookup", "clear"]

_state = {"on": False}
_cache: dict[tuple, Any] = {}
_lock = threading.Lock()


def set_benchmark(on: bool) -> None:
    """Turn benchmark mode on or off.

    In benchmark mode the first call of each problem (shapes, dtypes,
    parameters) times every backend that can run it and keeps the fastest
    for later calls, as cuDNN's benchmark mode.

    Parameters
    ----------
    on : bool
        True to turn it on.

    See Also
    --------
    benchmark : the same for a ``with`` block.

    Examples
    --------
    >>> import cconv
    >>> cconv.set_benchmark(True)
    >>> cconv.get_benchmark()
    True
    >>> cconv.set_benchmark(False)
    """
    _state["on"] = bool(on)


def get_benchmark() -> bool:
    """Whether benchmark mode is on (see :func:`set_benchmark`).

    Returns
    -------
    bool

    Examples
    --------
    >>> import cconv
    >>> cconv.get_benchmark()
    False
    """
    return _state["on"]


@contextlib.contextmanager
def benchmark(on: bool = True) -> Iterator[None]:
    """Benchmark mode inside a ``with`` block, the previous setting after it.

    Parameters
    ----------
    on : bool, default True
        The setting inside the block.

    Yields
    ------
    None

    See Also
    --------
    set_benchmark

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.ones((1, 8, 16, 16), np.float32)
    >>> w = np.ones((8, 8, 3, 3), np.float32)
    >>> with cconv.benchmark():
    ...     y = cconv.conv2d(x, w, padding=1)   # times the backends once, keeps the fastest
    >>> cconv.get_benchmark()
    False
    """
    old = _state["on"]
    _state["on"] = bool(on)
    try:
        yield
    finally:
        _state["on"] = old


def _key(p, xp, need_backward: bool, op: str) -> tuple:
    from ._config import get_num_threads

    return (p, xp.__name__, bool(need_backward), op, get_num_threads())


def lookup(p, xp, need_backward: bool, op: str = "forward"):
    """The cached winner for this problem, or None."""
    if not _cache:
        return None
    return _cache.get(_key(p, xp, need_backward, op))


def record(p, xp, need_backward: bool, op: str, backend) -> None:
    from . import _dispatch

    with _lock:
        _cache[_key(p, xp, need_backward, op)] = backend
        _dispatch._tuned_any[0] = True


def tune(p, xp, need_backward: bool, op: str, run) -> Any:
    """Time ``run(backend)`` for every backend that supports ``p`` (best of
    two after a warm-up), cache and return the fastest.  ``run`` computes
    the call's result, so the last run leaves a correct result behind: the
    winner is run once more if it was not the last one timed."""
    import time

    from ._dispatch import BACKEND_ORDER, backend_module, why_not

    cands = [b for b in BACKEND_ORDER if why_not(b, p, xp, need_backward) is None]
    extra = [b for b in _extra_candidates() if b not in cands and why_not(b, p, xp, need_backward) is None]
    cands += extra
    best, best_t = None, float("inf")
    for b in cands:
        mod = backend_module(b)
        run(mod)
        t = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            run(mod)
            if xp.__name__ == "cupy":  # pragma: no cover - GPU only
                xp.cuda.runtime.deviceSynchronize()
            t = min(t, time.perf_counter() - t0)
        if t < best_t:
            best, best_t = b, t
    if best is not None and best is not cands[-1]:
        run(backend_module(best))
    record(p, xp, need_backward, op, best)
    return best


def _extra_candidates():
    from ._dispatch import Backend

    return [Backend.WINOGRAD_DEPTHWISE_3X3]


def clear() -> None:
    from . import _dispatch

    with _lock:
        _cache.clear()
        _dispatch._tuned_any[0] = False
