"""Lazy access to CuPy: ``import cconv`` never imports it."""
from __future__ import annotations

import functools
import importlib

__all__ = ["cupy_or_none", "require_cupy", "has_cupy", "describe"]


@functools.cache
def _load():
    """(cupy module or None, reason it is unusable or None)."""
    try:
        cp = importlib.import_module("cupy")
    except Exception as e:  # ImportError, or a broken install
        return None, f"CuPy is not installed or failed to import ({type(e).__name__}: {e})"
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, no device
        return None, f"CuPy cannot reach a CUDA device ({type(e).__name__}: {e})"
    if n < 1:
        return None, "CuPy found no CUDA device"
    return cp, None


def cupy_or_none():
    return _load()[0]


def has_cupy() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    return _load()[0] is not None


def require_cupy():
    """The cupy module, or a RuntimeError saying why the CUDA path is unusable."""
    cp, why = _load()
    if cp is None:
        raise RuntimeError(f"cconv: a cupy.ndarray was given but the CUDA path is unavailable: {why}")
    return cp


def describe() -> str:
    import sys

    if "cupy" not in sys.modules and importlib.util.find_spec("cupy") is None:
        return "unavailable (CuPy is not installed)"
    cp, why = _load()
    if cp is None:
        return f"unavailable ({why})"
    return f"available (CuPy {cp.__version__}, {cp.cuda.runtime.getDeviceCount()} device(s))"
