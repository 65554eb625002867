"""SHIFT: convolutions as one product per kernel tap over a padded band of
input rows (src/gemm/shift_conv.c), no im2col matrix: the plain forward and
the adjoint (grad_input, transposed forward) as the forward of the flipped
weight at stride 1, by one GEMM per tap; the weight gradient at any stride,
by per-tap outer products of the band, transposed, with the tile's gy
values on the instruction set's kernel.  Every product is a term of the
direct sum, so NaN and infinity give PyTorch's pattern."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import adj_as_fwd, flip_nonfinite, fwd, gemm_method, wgrad
from ._plain import ops

BACKEND = Backend.SHIFT
_M = "shift"


def _refusal(p, kind) -> str:
    if kind == "wgrad":
        return "SHIFT's weight gradient needs input channels and scratch within the workspace cap"
    return f"SHIFT runs stride-1 convolutions with input channels, not stride {p.stride}"


supports, wanted = gemm_method(BACKEND, _M, _refusal, wgrad=True)


def nonfinite(q) -> str | None:
    return flip_nonfinite(q.p) if q.kind == "adj" else None


forward, grad_input, grad_weight = ops(
    lambda p, x, w, b, out: fwd(_M, p.geom(), x, w, b, out),
    lambda p, y, w, b, out: adj_as_fwd(_M, p, y, w, b, out),
    lambda p, x, gy, out: wgrad(_M, p.geom(), x, gy, out))
