"""Benchmark mode: time every method that can compute a problem on its
first call, and keep the fastest (like cuDNN's benchmark mode).  Off by
default.  The winners live in cconv/_dispatch.py's bounded table of
measured choices, which ``select`` reads first."""
from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Iterator

from . import _dispatch

__all__ = ["set_benchmark", "get_benchmark", "benchmark", "tune", "clear"]

_state = {"on": False}


def set_benchmark(on: bool) -> None:
    """Turn benchmark mode on or off: when on, the first call of each
    problem (shapes, dtype, parameters, thread count) times every method
    that can compute it and later calls run the fastest."""
    _state["on"] = bool(on)


def get_benchmark() -> bool:
    """Whether benchmark mode is on."""
    return _state["on"]


@contextlib.contextmanager
def benchmark(on: bool = True) -> Iterator[None]:
    """Context manager: benchmark mode inside the block."""
    old = _state["on"]
    _state["on"] = bool(on)
    try:
        yield
    finally:
        _state["on"] = old


def tune(q: _dispatch.Problem, run: Callable[[Any], Any]) -> _dispatch.Backend:
    """Time ``run(module)`` for every method that can compute ``q`` (best of
    two after a warm-up), record and return the fastest.  ``run`` computes
    the call's result, so the last run leaves a correct result behind: the
    winner is run once more if it was not the last one timed.  A method
    whose run reports a NaN or an infinity (True) is out of the race."""
    cands = _dispatch.candidates(q)
    sync = (lambda: q.xp.cuda.runtime.deviceSynchronize()) if q.xp.__name__ == "cupy" else None
    best, best_t, last = None, float("inf"), None
    for b in cands:
        mod = _dispatch.backend_module(b)
        last = b
        if run(mod):
            continue
        t = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            run(mod)
            if sync is not None:  # pragma: no cover - GPU only
                sync()
            t = min(t, time.perf_counter() - t0)
        if t < best_t:
            best, best_t = b, t
    if best is None:  # pragma: no cover - GEMM/GEMM_TRANSPOSE run everything
        best = _dispatch.select(q)[0]
    if best is not last:
        run(_dispatch.backend_module(best))
    _dispatch.set_tuned(q, best)
    return best


def clear() -> None:
    """Forget every winner benchmark mode recorded."""
    _dispatch.clear_tuned()
