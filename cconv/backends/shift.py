"""SHIFT: stride-1 convolutions as one GEMM per tap over a padded band of
input rows (src/gemm/shift_conv.c): the plain forward, the adjoint
(grad_input, transposed forward) as the forward of the flipped weight, and
the weight gradient (one GEMM per tap of the wide gy rows against the
shifted band; it stops at a NaN or an infinity in the plain input, whose
wide columns it would multiply by zero)."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import adj_as_fwd, flip_nonfinite, fwd, gemm_method, wgrad
from ._plain import ops

BACKEND = Backend.SHIFT
_M = "shift"


def _refusal(p, kind) -> str:
    if kind == "wgrad" and all(s == 1 for s in p.stride):
        return "SHIFT's weight gradient needs more scratch than the workspace cap"
    return f"SHIFT runs stride-1 convolutions with input channels, not stride {p.stride}"


supports, wanted = gemm_method(BACKEND, _M, _refusal, wgrad=True)


def nonfinite(q) -> str | None:
    if q.kind == "wgrad":
        return "data"
    return flip_nonfinite(q.p) if q.kind == "adj" else None


forward, grad_input, grad_weight = ops(
    lambda p, x, w, b, out: fwd(_M, p.geom(), x, w, b, out),
    lambda p, y, w, b, out: adj_as_fwd(_M, p, y, w, b, out),
    lambda p, x, gy, out: wgrad(_M, p.geom(), x, gy, out))
