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
    """Turn benchmark mode on or off."""
    _state["on"] = bool(on)


def get_benchmark() -> bool:
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


def _key(p, xp, need_backward: bool) -> tuple:
    from ._config import get_num_threads

    return (p, xp.__name__, bool(need_backward), get_num_threads())


def lookup(p, xp, need_backward: bool):
    """The cached winner for this problem, or None."""
    if not _state["on"] and not _cache:
        return None
    return _cache.get(_key(p, xp, need_backward))


def record(p, xp, need_backward: bool, backend) -> None:
    with _lock:
        _cache[_key(p, xp, need_backward)] = backend


def clear() -> None:
    with _lock:
        _cache.clear()
