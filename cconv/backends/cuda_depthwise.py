"""CUDA_DEPTHWISE: direct kernels (cconv/cuda/depthwise.cu) for depthwise
convolutions (groups == input channels of the plain convolution >= 2, any
channel multiplier), plain or transposed, 1-D to 3-D, on cupy.ndarray
inputs.  The weight gradient is reduced in a fixed order (partial sums per
chunk of output rows, then the chunks in order): deterministic, no atomics.
"""
from __future__ import annotations

from .. import _cuda_kernels
from .._dispatch import Backend
from .cuda_gemm import check_cuda

BACKEND = Backend.CUDA_DEPTHWISE

__all__ = ["supports", "forward", "grad_input", "grad_weight", "forward_with", "grad_input_with",
           "grad_weight_with", "dw_fwd", "dw_adj", "dw_wgrad"]


def supports(p, xp, need_backward: bool = False) -> str | None:
    why = check_cuda(xp, "CUDA_DEPTHWISE")
    if why:
        return why
    if not p.is_depthwise:
        cin = p.c_out if p.transposed else p.c_in
        return (
            f"CUDA_DEPTHWISE runs depthwise convolutions (groups == input channels >= 2), "
            f"but groups={p.groups} and the {'transposed ' if p.transposed else ''}convolution's "
            f"plain input has {cin} channels"
        )
    return None


def _dims(geom):
    batch, groups, c_in, c_out = geom[:4]
    return batch, c_in, (c_out // c_in if c_in else 0)


def dw_fwd(xp, K, geom, x, w, b, y) -> None:
    """y = conv(x, w) (+ b) for a depthwise plain geometry."""
    N, C, Mu = _dims(geom)
    K.dw_fwd(x, w, b, y, N, C, Mu, geom)


def dw_adj(xp, K, geom, gy, w, b, gx) -> None:
    """gx = conv_adjoint(gy, w) (+ b over the plain input channels)."""
    N, C, Mu = _dims(geom)
    K.dw_adj(gy, w, b, gx, N, C, Mu, geom)


def dw_wgrad(xp, K, geom, x, gy, gw) -> None:
    """gw = d<gy, conv(x, w)>/dw."""
    N, C, Mu = _dims(geom)
    if N == 0:
        gw[...] = 0
        return
    K.dw_wgrad(x, gy, gw, N, C, Mu, geom)


def forward_with(xp, K, p, x, w, b, out) -> None:
    if p.transposed:
        dw_adj(xp, K, p.geom(), x, w, b, out)
    else:
        dw_fwd(xp, K, p.geom(), x, w, b, out)


def grad_input_with(xp, K, p, gy, w, out) -> None:
    if p.transposed:
        dw_fwd(xp, K, p.geom(), gy, w, None, out)
    else:
        dw_adj(xp, K, p.geom(), gy, w, None, out)


def grad_weight_with(xp, K, p, x, gy, out) -> None:
    if p.transposed:
        # the plain convolution's input is our grad_output, its output our input
        dw_wgrad(xp, K, p.geom(), gy, x, out)
    else:
        dw_wgrad(xp, K, p.geom(), x, gy, out)


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
