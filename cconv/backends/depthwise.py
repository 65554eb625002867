"""DEPTHWISE: direct SIMD kernels (src/depthwise) for depthwise convolutions
(groups == input channels of the plain convolution >= 2, any channel
multiplier), plain or transposed, 1-D to 3-D, float32/float64 NumPy arrays.

The plain forward is ``cc_dw_fwd``; its adjoint ``cc_dw_adj`` is the
grad_input of a plain convolution and the forward of a transposed one;
``cc_dw_wgrad`` reduces in a fixed order (bit-identical for every call and
thread count).  The instruction set (scalar, AVX2, AVX-512, NEON) is chosen
at import; ``cconv._depthwise.set_isa`` or ``CCONV_SIMD`` force one.
"""
from __future__ import annotations

import numpy as np

from .. import _depthwise
from .._config import get_num_threads
from .._dispatch import Backend
from . import gemm, gemm_transpose

BACKEND = Backend.DEPTHWISE

__all__ = ["BACKEND", "supports", "auto_ok", "forward", "grad_input", "grad_weight"]


def supports(p, xp, need_backward: bool = False) -> str | None:
    if xp is not np:
        return "DEPTHWISE runs NumPy arrays on the CPU (CUDA_DEPTHWISE runs CuPy arrays)"
    if p.dtype is not None and np.dtype(p.dtype) not in (np.float32, np.float64):
        return f"DEPTHWISE computes in float32 or float64, not {np.dtype(p.dtype).name}"
    if not p.is_depthwise:
        cin = p.c_out if p.transposed else p.c_in
        return (
            f"DEPTHWISE runs depthwise convolutions (groups == input channels >= 2 of the plain "
            f"convolution), but groups={p.groups} and the "
            f"{'transposed ' if p.transposed else ''}convolution's plain input has {cin} channels"
        )
    if not _depthwise.geom_ok(p.geom()):
        return f"DEPTHWISE cannot run the geometry {p.geom()} (sizes out of range)"
    return None


def auto_ok(p) -> bool:
    """Whether automatic dispatch should take DEPTHWISE for ``p`` (forcing
    it with ``backend=`` always may).  Large channel multipliers run faster
    as a grouped GEMM: the depthwise kernels read an input row once per
    output channel.  Measured (2 threads, AVX2, float32, 3x3, depthwise
    time / GEMM time): 2-D 56x56 multiplier 2-16: 0.38-0.48, 24: 0.96,
    32: 1.83-2.24; 3-D 16^3 multiplier 1: 0.87, 2: 1.22, 4: 2.32, 8-32:
    1.45-2.62 (3-D runs the generic row kernel)."""
    g = p.geom()
    m = g[3] // g[2] if g[2] else 1
    return m < (2 if p.nsp == 3 else 24)


# A NaN or infinite weight: the kernels skip output rows that lie wholly in
# the padding (plain) and run the adjoint over the padded extent, so 0 * inf
# = NaN would land elsewhere than in PyTorch's im2col products; the GEMM
# backends give PyTorch's pattern.  The check (_depthwise.all_finite) reads
# the weight only.
def forward(p, x, w, b, out) -> None:
    if not _depthwise.all_finite(w):
        (gemm_transpose if p.transposed else gemm).forward(p, x, w, b, out)
        return
    g = p.geom()
    nt = get_num_threads()
    if p.transposed:
        _depthwise.adj(g, x, w, b, out, nt)
    else:
        _depthwise.fwd(g, x, w, b, out, nt)


def grad_input(p, gy, w, out) -> None:
    if not _depthwise.all_finite(w):
        (gemm_transpose if p.transposed else gemm).grad_input(p, gy, w, out)
        return
    g = p.geom()
    nt = get_num_threads()
    if p.transposed:
        _depthwise.fwd(g, gy, w, None, out, nt)
    else:
        _depthwise.adj(g, gy, w, None, out, nt)


def grad_weight(p, x, gy, out) -> None:
    g = p.geom()
    nt = get_num_threads()
    if p.transposed:
        # the plain convolution's input is our grad_output, its output our input
        _depthwise.wgrad(g, gy, x, out, nt)
    else:
        _depthwise.wgrad(g, x, gy, out, nt)
