"""CUDA_GEMM_TRANSPOSE: GEMM (``cupy.matmul``) + col2im as a gather (one
thread per output element, no atomics, deterministic) for every transposed
convolution on cupy.ndarray inputs: the adjoint of the plain convolution
with the same weight (see gemm.py for the algorithms)."""
from __future__ import annotations

from .._dispatch import Backend
from ._common import check_cuda, device_api, plain_ops
from .gemm import conv_adj, conv_fwd, conv_wgrad

BACKEND = Backend.CUDA_GEMM_TRANSPOSE

__all__ = ["supports", "forward", "grad_input", "grad_weight", "forward_with", "grad_input_with",
           "grad_weight_with"]


def supports(q) -> str | None:
    p = q.p
    why = check_cuda(q.xp, "CUDA_GEMM_TRANSPOSE")
    if why:
        return why
    if not p.transposed:
        return "CUDA_GEMM_TRANSPOSE runs transposed convolutions; a plain one runs on CUDA_GEMM"
    return None


forward_with, grad_input_with, grad_weight_with = plain_ops(conv_fwd, conv_adj, conv_wgrad)
forward, grad_input, grad_weight = device_api(forward_with, grad_input_with, grad_weight_with)
