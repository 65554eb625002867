"""DEPTHWISE: the direct depthwise kernels of src/depthwise for every
depthwise convolution (groups == input channels of the plain convolution
>= 2, any channel multiplier; or one input channel, groups 1: a bank of
filters over one signal), plain or transposed, 1-D to 3-D,
float32/float64 NumPy arrays: the forward by the generic row kernel, the
adjoint (``cc_dw_adj``: grad_input of a plain convolution, forward of a
transposed one) and the weight gradient (``cc_dw_wgrad``, reduced in a
fixed order: bit-identical for every call and thread count).  The plane
kernels and the channels-last blocks are methods of their own
(DEPTHWISE_PLANE, DEPTHWISE_CHANNEL_BLOCKS).
"""
from __future__ import annotations

from .. import _depthwise
from .._config import get_num_threads
from .._dispatch import Backend
from ._depthwise_common import auto_ok, nonfinite, why_not_depthwise
from ._plain import ops

BACKEND = Backend.DEPTHWISE

__all__ = ["BACKEND", "supports", "wanted", "nonfinite", "forward", "grad_input", "grad_weight"]


def supports(q) -> str | None:
    return why_not_depthwise(q, "DEPTHWISE")


def _wgrad_on_gemm(p) -> bool:
    """Plain layers whose output rows are too short for the wg kernel's
    vectors and too long for its one-vector rows, where the GEMM methods'
    weight gradient wins.  Measured (AMD EPYC, AVX2, 2 threads, float32,
    depthwise / GEMM grad_weight time): 3-D 3x3x3 on 8-32-pixel output rows
    1.13-1.40 (96 channels, 8 deep; 7: 0.60, 40: 1.01, 48-56: 0.88-0.95),
    3x1x1 1.11-1.56 from 8 to 56 (64-80: 0.99-1.01), 5x5x5 1.14-1.46 on
    10-28; 2-D stride 2 on 10-20-pixel output rows 1.11-1.26 (8: 0.90, 28:
    0.92); 2-D stride 1 0.85-1.22 (9-20 pixels 1.00-1.22 at 5x5, 0.94-1.08 at
    3x3): left on the wg kernel."""
    if p.transposed:
        return False
    g = p.geom()
    ow = g[5][2]
    if p.nsp == 3:
        return 8 <= ow <= (56 if g[6][1] == 1 and g[6][2] == 1 else 32)
    return p.nsp == 2 and g[7][2] == 2 and 10 <= ow <= 20


def wanted(q) -> bool:
    return auto_ok(q.p) and not (q.kind == "wgrad" and _wgrad_on_gemm(q.p))


def _fwd(p, x, w, b, out):
    _depthwise.fwd("rows", p.geom(), x, w, b, out, get_num_threads())


def _adj(p, y, w, b, out):
    _depthwise.adj(p.geom(), y, w, b, out, get_num_threads())


def _wgrad(p, x, gy, out):
    _depthwise.wgrad(p.geom(), x, gy, out, get_num_threads())


forward, grad_input, grad_weight = ops(_fwd, _adj, _wgrad)
