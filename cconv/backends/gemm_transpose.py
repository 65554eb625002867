"""GEMM_TRANSPOSE: GEMM + col2im for every transposed convolution (the
adjoint of the plain convolution with the same weight)."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import check_cpu, plain_adjoint, plain_forward, plain_wgrad

BACKEND = Backend.GEMM_TRANSPOSE


def supports(p, xp, need_backward: bool = False) -> str | None:
    why = check_cpu(xp)
    if why:
        return why
    if not p.transposed:
        return "GEMM_TRANSPOSE runs transposed convolutions; a plain one runs on GEMM"
    return None


def forward(p, x, w, b, out) -> None:
    plain_adjoint(p.geom(), x, w, b, out)


def grad_input(p, gy, w, out) -> None:
    plain_forward(p.geom(), gy, w, None, out)


def grad_weight(p, x, gy, out) -> None:
    # the plain convolution's input is our grad_output, its output our input
    plain_wgrad(p.geom(), gy, x, out)
