"""GEMM: im2col + GEMM for every plain (non-transposed) convolution."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import check_cpu, plain_adjoint, plain_forward, plain_wgrad

BACKEND = Backend.GEMM


def supports(p, xp, need_backward: bool = False) -> str | None:
    why = check_cpu(xp)
    if why:
        return why
    if p.transposed:
        return "GEMM runs plain convolutions; a transposed one runs on GEMM_TRANSPOSE"
    return None


def forward(p, x, w, b, out) -> None:
    plain_forward(p.geom(), x, w, b, out)


def grad_input(p, gy, w, out) -> None:
    plain_adjoint(p.geom(), gy, w, None, out)


def grad_weight(p, x, gy, out) -> None:
    plain_wgrad(p.geom(), x, gy, out)
