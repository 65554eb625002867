"""CUDA_DEPTHWISE: direct kernels (cconv/cuda/depthwise.cu) for depthwise
convolutions (groups == input channels of the plain convolution >= 2, any
channel multiplier), plain or transposed, 1-D to 3-D, on cupy.ndarray
inputs.  The weight gradient is reduced in a fixed order (partial sums per
chunk of output rows, then the chunks in order): deterministic, no atomics.
"""
from __future__ import annotations

from .._dispatch import Backend
from ._common import check_cuda, device_api, plain_ops

BACKEND = Backend.CUDA_DEPTHWISE

__all__ = ["supports", "forward", "grad_input", "grad_weight", "forward_with", "grad_input_with",
           "grad_weight_with", "dw_fwd", "dw_adj", "dw_wgrad"]


def supports(q) -> str | None:
    p = q.p
    why = check_cuda(q.xp, "CUDA_DEPTHWISE")
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


forward_with, grad_input_with, grad_weight_with = plain_ops(dw_fwd, dw_adj, dw_wgrad)
forward, grad_input, grad_weight = device_api(forward_with, grad_input_with, grad_weight_with)
