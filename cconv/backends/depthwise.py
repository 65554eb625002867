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


def wgrad_on_gemm(p) -> bool:
    """Whether ``grad_weight`` hands ``p`` to the GEMM backend's: plain
    layers whose output rows are too short for the wg kernel's vectors
    and too long for its one-vector rows.  Measured (AMD EPYC, AVX2, 2
    threads, float32, depthwise / GEMM grad_weight time): 3-D 3x3x3 on
    8-32-pixel output rows 1.13-1.40 (96 channels, 8 deep; 7: 0.60, 40:
    1.01, 48-56: 0.88-0.95), 3x1x1 1.11-1.56 from 8 to 56 (64-80: 0.99-
    1.01), 5x5x5 1.14-1.46 on 10-28; 2-D stride 2 on 10-20-pixel output rows
    1.11-1.26 (8: 0.90, 28: 0.92); 2-D stride 1 0.85-1.22 (9-20 pixels
    1.00-1.22 at 5x5, 0.94-1.08 at 3x3): left on the wg kernel."""
    if p.transposed:
        return False
    g = p.geom()
    ow = g[5][2]
    if p.nsp == 3:
        return 8 <= ow <= (56 if g[6][1] == 1 and g[6][2] == 1 else 32)
    return p.nsp == 2 and g[7][2] == 2 and 10 <= ow <= 20


def grad_weight(p, x, gy, out) -> None:
    if wgrad_on_gemm(p):
        gemm.grad_weight(p, x, gy, out)
        return
    g = p.geom()
    nt = get_num_threads()
    if p.transposed:
        # the plain convolution's input is our grad_output, its output our input
        _depthwise.wgrad(g, gy, x, out, nt)
    else:
        _depthwise.wgrad(g, x, gy, out, nt)
