"""What the depthwise methods (src/depthwise) share: which problems they
take, the default choice's rules, and the NaN rule.

A NaN or infinite weight: the kernels skip output rows that lie wholly in
the padding (plain) and run the adjoint over the padded extent, so 0 * inf
= NaN would land elsewhere than in PyTorch's im2col products; the GEMM
methods give PyTorch's pattern (``nonfinite``: 'weight', checked before the
call by reading the weight, about 1 us for 144 x 3 x 3)."""
from __future__ import annotations

import numpy as np

from .. import _depthwise

__all__ = ["why_not_depthwise", "auto_ok", "nonfinite"]


def why_not_depthwise(q, name: str) -> str | None:
    """Why ``name`` cannot run ``q`` as a depthwise method, or None."""
    p = q.p
    if q.xp is not np:
        return f"{name} runs NumPy arrays on the CPU (CUDA_DEPTHWISE runs CuPy arrays)"
    if p.dtype is None or np.dtype(p.dtype) not in (np.float32, np.float64):
        return f"{name} computes in float32 or float64, not {'unknown' if p.dtype is None else np.dtype(p.dtype).name}"
    if not (p.is_depthwise or p.is_single_channel):
        cin = p.c_out if p.transposed else p.c_in
        return (
            f"{name} runs depthwise convolutions (groups == input channels of the plain "
            f"convolution, or one input channel), but groups={p.groups} and the "
            f"{'transposed ' if p.transposed else ''}convolution's plain input has {cin} channels"
        )
    if not _depthwise.geom_ok(p.geom()):
        return f"{name} cannot run the geometry {p.geom()} (sizes out of range)"
    return None


# One input channel (groups == 1): the depthwise kernels for at most this
# many filters, the implicit GEMM beyond.  AMD EPYC Zen 4, AVX-512, 1
# thread, float32, best depthwise method / implicit GEMM time (its 1-, 2-
# and 4-row kernels), 1 / 2 / 3 / 4 filters: 1-D k31 over 100000 samples
# 0.87 / 1.40 / 1.06 / 1.24, k5 0.66 / 0.84 / 0.71 / 0.82, 32 samples k3
# 0.45-0.60; 2-D 3x3 on 512x512 0.53 / 0.69 / 0.60 / 0.74, 5x5 0.63 / 0.99
# / 0.83 / 1.06, 3x3 on 28x28 0.65-0.80; 3-D 3x3x3 on 64^3 0.61 / 0.98 /
# 0.83 / 1.04.  And only where the depthwise split gives every planned
# thread an item (``_depthwise.fwd_parallel``): a 1-D layer is one item
# per signal, and 1-2 long signals left the second thread idle (2 threads,
# one signal of 10^6 samples, k101: 3.4 ms against the implicit GEMM's 1.8).
_SINGLE_MAX_FILTERS = 1


def auto_ok(p) -> bool:
    """Whether the default choice takes a depthwise method for ``p`` at all.
    Large channel multipliers run faster as a grouped GEMM: the depthwise
    kernels read an input row once per output channel.  Measured (2
    threads, AVX2, float32, 3x3, depthwise time / GEMM time): 2-D 56x56
    multiplier 2-16: 0.38-0.48, 24: 0.96, 32: 1.83-2.24; 3-D 16^3
    multiplier 1: 0.87, 2: 1.22, 4: 2.32, 8-32: 1.45-2.62 (3-D runs the
    generic row kernel).  One input channel: ``_SINGLE_MAX_FILTERS``, where
    the split keeps the threads busy."""
    g = p.geom()
    m = g[3] // g[2] if g[2] else 1
    if p.is_single_channel:
        return m <= _SINGLE_MAX_FILTERS and _depthwise.fwd_parallel(g)
    return m < (2 if p.nsp == 3 else 24)


def nonfinite(q) -> str | None:
    return None if q.kind == "wgrad" else "weight"
