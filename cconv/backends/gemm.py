"""GEMM: im2col + GEMM for every plain (non-transposed) convolution: the
forward as im2col tiles and GEMMs, grad_input as GEMMs and col2im,
grad_weight as im2col tiles and GEMMs accumulated over the batch
(src/gemm/gemm_conv.c, method 'im2col').  The method of last resort: it runs
every plain problem, so the default choice takes it when nothing more
specialised is wanted."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import IM2COL_OPS, check_cpu, check_real

BACKEND = Backend.GEMM


def supports(q) -> str | None:
    why = check_cpu(q, "GEMM") or check_real(q, "GEMM")
    if why:
        return why
    if q.p.transposed:
        return "GEMM runs plain convolutions; a transposed one runs on GEMM_TRANSPOSE"
    return None


forward, grad_input, grad_weight = IM2COL_OPS
