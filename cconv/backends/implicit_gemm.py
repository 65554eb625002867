"""IMPLICIT_GEMM: the implicit GEMM of src/igemm, which gathers the input
while packing the GEMM's B panel from a padded band of rows (no im2col
matrix).  The plain forward directly; the adjoint (grad_input, transposed
forward) at stride 1 as the forward of the flipped weight
(``_gemm_common.flipped``); the weight gradient of grouped convolutions with
few output channels per group, reading the band in place."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import adj_as_fwd, flip_nonfinite, fwd, gemm_method, wgrad
from ._plain import ops

BACKEND = Backend.IMPLICIT_GEMM
_M = "implicit_gemm"


def _refusal(p, kind) -> str:
    if kind == "wgrad":
        return ("IMPLICIT_GEMM's weight gradient runs grouped convolutions with few output "
                "channels per group and output rows of at least one vector")
    return "IMPLICIT_GEMM's packed weight exceeds the workspace cap"


supports, wanted = gemm_method(BACKEND, _M, _refusal, wgrad=True)


def nonfinite(q) -> str | None:
    return flip_nonfinite(q.p) if q.kind == "adj" else None


forward, grad_input, grad_weight = ops(
    lambda p, x, w, b, out: fwd(_M, p.geom(), x, w, b, out),
    lambda p, y, w, b, out: adj_as_fwd(_M, p, y, w, b, out),
    lambda p, x, gy, out: wgrad(_M, p.geom(), x, gy, out))
