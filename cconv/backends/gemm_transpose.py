"""GEMM_TRANSPOSE: GEMM + col2im for every transposed convolution (the
adjoint of the plain convolution with the same weight); its grad_input is
the plain forward by im2col + GEMM, its grad_weight the plain weight
gradient with the operands swapped (src/gemm/gemm_conv.c, method 'im2col')."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import IM2COL_OPS, check_cpu, check_real

BACKEND = Backend.GEMM_TRANSPOSE


def supports(q) -> str | None:
    why = check_cpu(q, "GEMM_TRANSPOSE") or check_real(q, "GEMM_TRANSPOSE")
    if why:
        return why
    if not q.p.transposed:
        return "GEMM_TRANSPOSE runs transposed convolutions; a plain one runs on GEMM"
    return None


forward, grad_input, grad_weight = IM2COL_OPS
