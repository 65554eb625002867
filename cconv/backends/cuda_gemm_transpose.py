"""CUDA_GEMM_TRANSPOSE: GEMM (``cupy.matmul``) + col2im as a gather (one
thread per output element, no atomics, deterministic) for every transposed
convolution on cupy.ndarray inputs: the adjoint of the plain convolution
with the same weight (see cuda_gemm.py for the algorithms)."""
from __future__ import annotations

from .. import _cuda_kernels
from .._dispatch import Backend
from .cuda_gemm import check_cuda, conv_adj, conv_fwd, conv_wgrad

BACKEND = Backend.CUDA_GEMM_TRANSPOSE


def supports(p, xp, need_backward: bool = False) -> str | None:
    why = check_cuda(xp, "CUDA_GEMM_TRANSPOSE")
    if why:
        return why
    if not p.transposed:
        return "CUDA_GEMM_TRANSPOSE runs transposed convolutions; a plain one runs on CUDA_GEMM"
    return None


def forward_with(xp, K, p, x, w, b, out) -> None:
    conv_adj(xp, K, p.geom(), x, w, b, out)


def grad_input_with(xp, K, p, gy, w, out) -> None:
    conv_fwd(xp, K, p.geom(), gy, w, None, out)


def grad_weight_with(xp, K, p, x, gy, out) -> None:
    # the plain convolution's input is our grad_output, its output our input
    conv_wgrad(xp, K, p.geom(), gy, x, out)


def forward(p, x, w, b, out) -> None:
    xp, K = _cuda_kernels.context(x)
    with _cuda_kernels.on_device(x):
        forward_with(xp, K, p, x, w, b, out)


def grad_input(p, gy, w, out) -> None:
    xp, K = _cuda_kernels.context(gy)
    with _cuda_kernels.on_device(gy):
        grad_input_with(xp, K, p, gy, w, out)


def grad_weight(p, x, gy, out) -> None:
    xp, K = _cuda_kernels.context(x)
    with _cuda_kernels.on_device(x):
        grad_weight_with(xp, K, p, x, gy, out)
