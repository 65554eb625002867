"""Methods and the choice among them: the one place where cconv decides
what runs.

Every way cconv can compute a convolution is a ``Backend`` member with a
module of its own (cconv/backends/, cconv/cuda/).  A call asks for one
*operation* of one problem (``Problem``): the forward, grad_input or
grad_weight of a convolution (``ConvParams``), for arrays of one module
(NumPy or CuPy), with the input's memory layout (channels last or not,
forward only) and whether the data are known to hold a NaN or an infinity.

``ORDER`` is the ordered list (oneDNN's implementation list): the first
member whose module ``supports`` the problem and ``wanted`` says the
defaults prefer runs it, unless the caller forces one with ``backend=``,
benchmark mode timed the candidates, or the tuning cache holds a winner.
The compiled kernels never choose: they run the method they are told, and
expose the predicates the modules' ``supports``/``wanted`` read.

A backend module defines:

* ``BACKEND``: its member;
* ``supports(q) -> str | None``: None when it can compute ``q``, else why
  not (a structural reason: shapes, dtype, array module, layout);
* ``wanted(q) -> bool`` (optional, default True): whether the default
  choice takes it when it supports ``q`` (a measured preference);
* ``nonfinite(q) -> str | None`` (optional, default None): None when a NaN
  or an infinity in the data gives the direct product's pattern (PyTorch's);
  ``"weight"`` when it does not for a non-finite weight (the caller checks
  the weight first); ``"data"`` when it does not for any non-finite value
  (input or weight) and its kernels report one (the run returns True);
* ``forward(p, x, w, b, out)``, ``grad_input(p, gy, w, out)``,
  ``grad_weight(p, x, gy, out)``: compute into ``out``; a method whose
  ``nonfinite`` is ``"data"`` returns True when it stopped at a NaN or an
  infinity (``out`` then holds garbage and another method runs).

A forced backend that cannot run a problem for a structural reason is a
ValueError; one that cannot give PyTorch's NaN/inf pattern for the data at
hand yields to the default choice for that data (``Problem.finite_data``,
``finite_weight``), so that forcing a method never changes a result's NaN
pattern.
"""
from __future__ import annotations

import collections
import enum
import importlib
import threading
from typing import Any, NamedTuple

from ._config import get_num_threads

__all__ = ["Backend", "BackendChoice", "Problem", "ORDER", "select", "select_why", "backend_module", "why_not",
           "candidates", "as_backend", "simd_level", "kind_of", "set_tuning", "set_kind_defaults", "GENERATION"]


class Backend(enum.Enum):
    """The methods cconv can run a convolution with (``backend=``).

    Pass a member (or its value, e.g. ``"gemm"``) as ``backend=`` to force
    one; one that cannot run the problem raises ``ValueError`` saying why.
    :func:`select_backend` tells which one a call runs by default (and, with
    ``op=``, which one each gradient runs).  The members are the general
    GEMM forms (``GEMM``, ``GEMM_TRANSPOSE``, ``GEMM_1X1``), cconv's own
    kernels (``IMPLICIT_GEMM``, ``WINOGRAD_3X3``, ``SHIFT``, ``NHWC`` for
    channels-last input), the depthwise kernels (``DEPTHWISE*``,
    ``WINOGRAD_DEPTHWISE_3X3``), ``EMPTY`` for zero-size problems and the
    ``CUDA_*`` methods for CuPy arrays.

    Examples
    --------
    >>> import cconv
    >>> cconv.Backend("gemm") is cconv.Backend.GEMM
    True
    >>> str(cconv.Backend.DEPTHWISE)
    'depthwise'
    """

    EMPTY = "empty"
    GEMM = "gemm"
    GEMM_TRANSPOSE = "gemm_transpose"
    GEMM_1X1 = "gemm_1x1"
    IMPLICIT_GEMM = "implicit_gemm"
    WINOGRAD_3X3 = "winograd_3x3"
    SHIFT = "shift"
    NHWC = "nhwc"
    DEPTHWISE = "depthwise"
    DEPTHWISE_PLANE = "depthwise_plane"
    DEPTHWISE_CHANNEL_BLOCKS = "depthwise_channel_blocks"
    DEPTHWISE_NHWC = "depthwise_nhwc"
    WINOGRAD_DEPTHWISE_3X3 = "winograd_depthwise_3x3"
    CUDA_GEMM = "cuda_gemm"
    CUDA_GEMM_TRANSPOSE = "cuda_gemm_transpose"
    CUDA_DEPTHWISE = "cuda_depthwise"

    def __str__(self) -> str:
        return self.value


_MODULES = {
    Backend.EMPTY: "cconv.backends.empty",
    Backend.GEMM: "cconv.backends.gemm",
    Backend.GEMM_TRANSPOSE: "cconv.backends.gemm_transpose",
    Backend.GEMM_1X1: "cconv.backends.gemm_1x1",
    Backend.IMPLICIT_GEMM: "cconv.backends.implicit_gemm",
    Backend.WINOGRAD_3X3: "cconv.backends.winograd_3x3",
    Backend.SHIFT: "cconv.backends.shift",
    Backend.NHWC: "cconv.backends.nhwc",
    Backend.DEPTHWISE: "cconv.backends.depthwise",
    Backend.DEPTHWISE_PLANE: "cconv.backends.depthwise_plane",
    Backend.DEPTHWISE_CHANNEL_BLOCKS: "cconv.backends.depthwise_channel_blocks",
    Backend.DEPTHWISE_NHWC: "cconv.backends.depthwise_nhwc",
    Backend.WINOGRAD_DEPTHWISE_3X3: "cconv.backends.winograd_depthwise",
    Backend.CUDA_GEMM: "cconv.cuda.gemm",
    Backend.CUDA_GEMM_TRANSPOSE: "cconv.cuda.gemm_transpose",
    Backend.CUDA_DEPTHWISE: "cconv.cuda.depthwise",
}

# The default preference, most specialised first.  Which of these a problem
# gets is each module's supports/wanted; docs/design.md has the rules.
ORDER = (
    Backend.EMPTY,
    Backend.CUDA_DEPTHWISE,
    Backend.CUDA_GEMM,
    Backend.CUDA_GEMM_TRANSPOSE,
    Backend.DEPTHWISE_NHWC,
    Backend.NHWC,
    Backend.WINOGRAD_DEPTHWISE_3X3,
    Backend.DEPTHWISE_CHANNEL_BLOCKS,
    Backend.DEPTHWISE_PLANE,
    Backend.DEPTHWISE,
    Backend.GEMM_1X1,
    Backend.WINOGRAD_3X3,
    Backend.IMPLICIT_GEMM,
    Backend.SHIFT,
    Backend.GEMM,
    Backend.GEMM_TRANSPOSE,
)

OPS = ("forward", "grad_input", "grad_weight")


class BackendChoice(NamedTuple):
    """What ``select_backend(..., explain=True)`` returns.

    Attributes
    ----------
    backend : Backend
        The method that would run.
    source : str
        Where the choice came from: 'default' (the dispatcher's rules),
        'benchmark' (benchmark mode's measured winner), 'tuning' (the
        tuning file) or 'cpu-kind' (the winners measured on this kind of
        CPU that ship with cconv).

    Examples
    --------
    >>> import numpy as np
    >>> import cconv
    >>> x = np.zeros((1, 8, 16, 16), np.float32)
    >>> c = cconv.select_backend(x, np.zeros((8, 8, 3, 3), np.float32), explain=True)
    >>> c.source, c.backend in cconv.Backend
    ('default', True)
    """

    backend: Backend
    source: str


class Problem(NamedTuple):
    """One operation of one convolution, as the choice sees it.

    ``p``: the ConvParams (its dtype the compute dtype, float32/float64);
    ``xp``: the array module; ``op``: 'forward', 'grad_input' or
    'grad_weight'; ``channels_last``: the forward's input is the NCHW view
    of channels-last memory; ``need_backward``: a forward whose gradients
    will be taken (inference-only methods decline); ``finite_weight``
    False once the weight (grad_input, forward) is known to hold a NaN or
    an infinity, ``finite_data`` False once some operand may."""

    p: Any
    xp: Any
    op: str = "forward"
    channels_last: bool = False
    need_backward: bool = False
    finite_weight: bool = True
    finite_data: bool = True

    @property
    def kind(self) -> str:
        return kind_of(self.p.transposed, self.op)


def kind_of(transposed: bool, op: str) -> str:
    """The plain geometry's computation an operation is (src/cconv.h):
    'fwd' (the plain forward, a transposed convolution's grad_input), 'adj'
    (a transposed forward, a plain grad_input) or 'wgrad'."""
    if op == "grad_weight":
        return "wgrad"
    if op not in ("forward", "grad_input"):
        raise ValueError(f"unknown operation {op!r}; expected one of {OPS}")
    return "fwd" if (op == "forward") != bool(transposed) else "adj"


_loaded: dict[Backend, Any] = {}
_missing: dict[Backend, str] = {}


def backend_module(b: Backend):
    """The module implementing ``b``, or None when this build lacks it."""
    mod = _loaded.get(b)
    if mod is not None or b in _missing:
        return mod
    try:
        mod = importlib.import_module(_MODULES[b])
    except ImportError as e:
        _missing[b] = f"{b.name} is not available in this build ({e})"
        return None
    if getattr(mod, "BACKEND", None) is not b:  # pragma: no cover - a wiring mistake
        raise RuntimeError(f"cconv: {_MODULES[b]} implements {getattr(mod, 'BACKEND', None)}, not {b}")
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


def why_not(b: Backend, q: Problem) -> str | None:
    """None when ``b`` can compute ``q`` (structurally), else the reason."""
    mod = backend_module(b)
    if mod is None:
        return _missing.get(b, f"{b.name} is not available")
    return mod.supports(q)


def _wanted(mod, q: Problem) -> bool:
    f = getattr(mod, "wanted", None)
    return f is None or bool(f(q))


def nonfinite_rule(mod, q: Problem) -> str | None:
    """``mod``'s ``nonfinite(q)``: None, 'weight' or 'data'."""
    f = getattr(mod, "nonfinite", None)
    return None if f is None else f(q)


def _exact(mod, q: Problem) -> bool:
    """Whether ``mod`` gives the direct NaN/inf pattern for ``q``'s data."""
    if q.finite_weight and q.finite_data:
        return True
    rule = nonfinite_rule(mod, q)
    if rule == "weight":
        return q.finite_weight
    return rule is None


def candidates(q: Problem) -> list[Backend]:
    """Every member that can compute ``q`` (what benchmark mode times)."""
    out = []
    for b in ORDER:
        if why_not(b, q) is None and _exact(backend_module(b), q):
            out.append(b)
    return out


# (q, backend, threads) -> (Backend, module): which method runs a problem
# depends only on these (the modules' predicates read nothing else; the
# thread count through the workspaces of the implicit GEMM and Winograd), so
# the choice is made once per problem.  Bounded; cleared when full.
_choice: dict[tuple, tuple] = {}
_CHOICE_MAX = 4096


def _default(q: Problem) -> tuple:
    for b in ORDER:
        if why_not(b, q) is None:
            mod = backend_module(b)
            if _exact(mod, q) and _wanted(mod, q):
                return b, mod
    raise ValueError("cconv: no backend can run this convolution")  # pragma: no cover


def _forced(q: Problem, backend: Any) -> tuple:
    b = as_backend(backend)
    reason = why_not(b, q)
    if reason is not None:
        raise ValueError(f"backend={b.value!r} cannot run this convolution: {reason}")
    if b is not Backend.EMPTY and why_not(Backend.EMPTY, q) is None:
        # nothing to compute (a zero batch, zero channels, an empty
        # result): whatever the backend, the result is EMPTY's zeros and
        # bias (the kernels' argument checks size the bias by the result's
        # channels, which an empty input sets to 0 as ATen does)
        return b, backend_module(Backend.EMPTY)
    mod = backend_module(b)
    if not _exact(mod, q):
        # the data hold a NaN or an infinity, whose pattern this method
        # would change: the default choice for such data runs instead
        return _default(q)
    return b, mod


def select(q: Problem, backend: Any = None) -> tuple:
    """(Backend, module) that computes ``q``; ``backend`` forces one
    (ValueError naming the reason where it cannot run ``q``)."""
    if _recorder[0] is not None:
        _recorder[0][q._replace(finite_weight=True, finite_data=True)] = None
    if backend is None and (_tuned or _tuning):
        b = _winner(q)[0]
        if b is not None:
            return b, backend_module(b)
    try:
        key = (q, backend, get_num_threads())
        hit = _choice.get(key)
    except TypeError:  # an unhashable backend argument: no caching
        key, hit = None, None
    if hit is not None:
        return hit
    hit = _preferred(q) if backend is None else _forced(q, backend)
    if key is not None:
        if len(_choice) >= _CHOICE_MAX:
            _choice.clear()
        _choice[key] = hit
    return hit


def _winner(q: Problem) -> tuple:
    """(Backend or None, source) of a measured winner for ``q`` at the
    current thread count: benchmark mode's, else the tuning file's (where
    the method can run ``q``)."""
    b = tuned(q)
    if b is not None:
        return b, "benchmark"
    b = _tuning.get((q, get_num_threads())) if _tuning else None
    if b is not None and why_not(b, q) is None and _exact(backend_module(b), q):
        return b, "tuning"
    return None, None


def _kind_pick(q: Problem):
    """This CPU kind's measured winner for ``q`` at the current thread
    count (cconv/_kind.py), where it can run ``q``; else None."""
    b = _kind_defaults.get((q, get_num_threads())) if _kind_defaults else None
    if b is not None and why_not(b, q) is None and _exact(backend_module(b), q):
        return b
    return None


def _preferred(q: Problem) -> tuple:
    """The choice when nothing is forced or measured in this process: this
    CPU kind's winner, else the rules' (cached with them in ``_choice``)."""
    b = _kind_pick(q)
    return (b, backend_module(b)) if b is not None else _default(q)


def select_why(q: Problem, backend: Any = None) -> tuple:
    """(Backend, module, source): ``select``'s choice and where it came
    from: 'forced', 'benchmark' (a winner benchmark mode measured),
    'tuning' (a winner from the tuning file or ``cconv.tune``),
    'cpu-kind' (this CPU kind's shipped table, cconv/_kind.py) or
    'default' (the ordered list)."""
    if backend is None and (_tuned or _tuning):
        b, source = _winner(q)
        if b is not None:
            return b, backend_module(b), source
    b, mod = select(q, backend)
    if backend is not None:
        return b, mod, "forced"
    return b, mod, "cpu-kind" if _kind_pick(q) is not None else "default"


# Measured winners (benchmark mode, cconv/_autotune.py): (q, threads) ->
# Backend, least recently used first.  Bounded: a service that sees many
# shapes keeps the TUNED_MAX most recent.
TUNED_MAX = 1024
_tuned: collections.OrderedDict = collections.OrderedDict()
_tuned_lock = threading.Lock()
# Winners of the tuning file (cconv/_tuning.py): (q, threads) -> Backend.
_tuning: dict = {}
# Winners measured on this kind of CPU, shipped with cconv (cconv/_kind.py):
# (q, threads) -> Backend.
_kind_defaults: dict = {}
# Bumped whenever a table of winners changes: the entry points' caches of
# the chosen method (the forward Plan, the backward's methods) compare it.
GENERATION = [0]


def set_tuning(table: dict) -> None:
    """Replace the tuning file's winners ((q, threads) -> Backend)."""
    global _tuning
    _tuning = dict(table)
    _changed()


def forget_choices() -> None:
    """Drop the cached default choices (the instruction set changed: some
    rules read its vector width)."""
    _choice.clear()
    _changed()


def set_kind_defaults(table: dict) -> None:
    """Replace this CPU kind's table of winners ((q, threads) -> Backend)."""
    global _kind_defaults
    _kind_defaults = dict(table)
    _choice.clear()  # (the cached default choices read it)
    _changed()


def _changed() -> None:
    GENERATION[0] += 1


# While a dict (cconv/_tuning.record_layers), every problem select() sees.
_recorder: list = [None]


def set_recorder(seen: dict | None) -> None:
    """Record every problem ``select`` is asked about into ``seen`` (None:
    stop); the caches of chosen methods are dropped so that problems seen
    before come through ``select`` again."""
    _recorder[0] = seen
    _choice.clear()
    _changed()


def tuned(q: Problem):
    """The measured winner for ``q`` at the current thread count, or None."""
    key = (q, get_num_threads())
    with _tuned_lock:
        b = _tuned.get(key)
        if b is not None:
            _tuned.move_to_end(key)
    return b


def set_tuned(q: Problem, b: Backend) -> None:
    """Record ``b`` as the winner for ``q`` at the current thread count."""
    key = (q, get_num_threads())
    with _tuned_lock:
        _tuned[key] = b
        _tuned.move_to_end(key)
        while len(_tuned) > TUNED_MAX:
            _tuned.popitem(last=False)
    _changed()


def clear_tuned() -> None:
    """Forget every measured winner."""
    with _tuned_lock:
        _tuned.clear()
    _changed()


def simd_level() -> str:
    """The SIMD instruction set the direct kernels use."""
    try:
        from . import _depthwise  # type: ignore[attr-defined]

        return str(_depthwise.isa())
    except Exception:
        return "none (no SIMD kernels in this build)"
