"""Backends and the choice among them.

``BACKENDS`` is an ordered list (oneDNN's implementation list): the first
backend whose ``supports`` returns None runs the problem, unless the caller
forces one with ``backend=`` or autotuning has cached a winner.
"""
from __future__ import annotations

import enum
import importlib
from typing import Any

__all__ = ["Backend", "select", "backend_module", "simd_level", "BACKEND_ORDER"]


class Backend(enum.Enum):
    """The convolution implementations cconv can run.

    Pass a member (or its value, e.g. ``"gemm"``) as ``backend=`` to force
    one; :func:`select_backend` tells which one a call runs by default.

    Attributes
    ----------
    EMPTY
        Zero-size problems (no arithmetic).
    GEMM
        Implicit GEMM on cconv's SIMD micro-kernels (Winograd F(2x2, 3x3)
        for suitable 3x3 stride-1 layers), OpenBLAS GEMM for 1x1 and the
        gradients.
    GEMM_TRANSPOSE
        Transposed convolutions: OpenBLAS GEMM and col2im.
    DEPTHWISE
        Direct SIMD kernels for depthwise convolutions (``groups == C_in``).
    WINOGRAD_DEPTHWISE_3X3
        Winograd F(2, 3) for float32 3x3 stride-1 depthwise layers (taken
        by benchmark mode or on request).
    CUDA_GEMM, CUDA_GEMM_TRANSPOSE, CUDA_DEPTHWISE
        The same on CuPy arrays (a CUDA GPU).

    Examples
    --------
    >>> import cconv
    >>> cconv.Backend("gemm") is cconv.Backend.GEMM
    True
    """

    EMPTY = "empty"
    GEMM = "gemm"
    GEMM_TRANSPOSE = "gemm_transpose"
    DEPTHWISE = "depthwise"
    WINOGRAD_DEPTHWISE_3X3 = "winograd_depthwise_3x3"
    CUDA_GEMM = "cuda_gemm"
    CUDA_GEMM_TRANSPOSE = "cuda_gemm_transpose"
    CUDA_DEPTHWISE = "cuda_depthwise"

    def __str__(self) -> str:
        return self.value


_MODULES = {
    Backend.EMPTY: "empty",
    Backend.GEMM: "gemm",
    Backend.GEMM_TRANSPOSE: "gemm_transpose",
    Backend.DEPTHWISE: "depthwise",
    Backend.WINOGRAD_DEPTHWISE_3X3: "winograd",
    Backend.CUDA_GEMM: "cuda_gemm",
    Backend.CUDA_GEMM_TRANSPOSE: "cuda_gemm_transpose",
    Backend.CUDA_DEPTHWISE: "cuda_depthwise",
}

# Default preference, most specialised first.
BACKEND_ORDER = [
    Backend.EMPTY,
    Backend.CUDA_DEPTHWISE,
    Backend.CUDA_GEMM,
    Backend.CUDA_GEMM_TRANSPOSE,
    Backend.DEPTHWISE,
    Backend.GEMM,
    Backend.GEMM_TRANSPOSE,
]

_loaded: dict[Backend, Any] = {}
_missing: dict[Backend, str] = {}


def backend_module(b: Backend):
    """The module implementing ``b``, or None when this build lacks it."""
    if b in _loaded:
        return _loaded[b]
    if b in _missing:
        return None
    try:
        mod = importlib.import_module(f"cconv.backends.{_MODULES[b]}")
    except ImportError as e:
        _missing[b] = f"{b.name} is not available in this build ({e})"
        return None
    _loaded[b] = mod
    return mod


def as_backend(backend: Any) -> Backend:
    """A ``Backend`` from a member, its value or its name."""
    if isinstance(backend, Backend):
        return backend
    if isinstance(backend, str):
        for b in Backend:
            if backend == b.value or backend.upper() == b.name:
                return b
        raise ValueError(
            f"backend: unknown backend {backend!r}; expected one of "
            + ", ".join(repr(b.value) for b in Backend)
        )
    raise TypeError(f"backend: expected a cconv.Backend or its string value, but got {type(backend).__name__}")


def _auto_ok(b: Backend, p) -> bool:
    """A backend's own say on whether automatic dispatch should take ``p``
    it supports (an optional ``auto_ok(p)``; measured preferences, not
    limits: ``backend=`` still forces it)."""
    f = getattr(backend_module(b), "auto_ok", None)
    return f is None or bool(f(p))


def why_not(b: Backend, p, xp, need_backward: bool = False) -> str | None:
    """None when ``b`` can run ``p``, else the reason it cannot."""
    mod = backend_module(b)
    if mod is None:
        return _missing.get(b, f"{b.name} is not available")
    return mod.supports(p, xp, need_backward)


# (p, xp, backend, need_backward) -> (Backend, module): which backend runs a
# problem depends only on these (a backend's ``supports`` reads nothing
# else), so the choice is made once per problem.  Bounded; cleared when full.
_choice: dict[tuple, tuple] = {}
_CHOICE_MAX = 4096


def select(p, xp, backend: Any = None, need_backward: bool = False, op: str = "forward"):
    """(Backend, module) that runs ``p``; ``backend`` forces one."""
    if backend is None and _tuned_any[0]:
        from . import _autotune

        tuned = _autotune.lookup(p, xp, need_backward, op)
        if tuned is not None:
            return tuned, backend_module(tuned)
    try:
        key = (p, xp, backend, bool(need_backward))
        hit = _choice.get(key)
    except TypeError:  # an unhashable backend argument: no caching
        key, hit = None, None
    if hit is not None:
        return hit
    if backend is not None:
        b = as_backend(backend)
        reason = why_not(b, p, xp, need_backward)
        if reason is not None:
            raise ValueError(f"backend={b.value!r} cannot run this convolution: {reason}")
        hit = (b, backend_module(b))
        if b is not Backend.EMPTY and why_not(Backend.EMPTY, p, xp, need_backward) is None:
            # nothing to compute (a zero batch, zero channels, an empty
            # result): whatever the backend, the result is EMPTY's zeros
            # and bias.  The kernels' argument checks size the bias by the
            # result's channels, which an empty input sets to 0 as ATen
            # does: forcing GEMM on a (3, 0, 5) input with a bias of 3
            # raised "b: expected 0 elements"
            hit = (b, backend_module(Backend.EMPTY))
    else:
        for b in BACKEND_ORDER:
            if why_not(b, p, xp, need_backward) is None and _auto_ok(b, p):
                hit = (b, backend_module(b))
                break
        else:  # pragma: no cover - GEMM/GEMM_TRANSPOSE take every problem
            raise ValueError("cconv: no backend can run this convolution")
    if key is not None:
        if len(_choice) >= _CHOICE_MAX:
            _choice.clear()
        _choice[key] = hit
    return hit


# set by _autotune when its cache holds an entry (saves a lookup per call)
_tuned_any = [False]


def simd_level() -> str:
    """The SIMD instruction set the direct kernels use."""
    try:
        from . import _depthwise  # type: ignore[attr-defined]

        return str(_depthwise.isa())
    except Exception:
        return "none (no SIMD kernels in this build)"
