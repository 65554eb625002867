"""WINOGRAD_DEPTHWISE_3X3: depthwise 3x3 convolution by Winograd F(2x2,3x3)
(src/winograd), inference only: float32 compute, NumPy arrays, plain 2-D
convolutions with groups == C_in == C_out (multiplier 1), kernel 3x3,
stride 1, dilation 1, padding 0 or 1 before and after each dim (so 'same').

The filter transform runs per call, per channel (16 values from 9); the
input and output transforms and the products are fused per tile row.  The
instruction set (scalar, AVX2, AVX-512, NEON) is chosen at import;
``cconv._winograd.set_isa`` or ``CCONV_SIMD`` force one.

Non-finite values: the transforms subtract inputs from one another, so
an infinity in x or w would give NaN where the direct product (and
PyTorch) gives an infinity, and a NaN would reach the whole 2x2 output
tile.  The kernels flag a NaN or an infinity as they read x (a running sum
of each input row's transform, which no separate scan of x has to pay
for: a scan cost about as much as the convolution here) and w, and the
call runs on the method the default choice takes for non-finite data
(``nonfinite``: 'data'), whose direct product gives PyTorch's NaN/inf
pattern; so benchmark mode, which times this method too, cannot change a
result's NaN/inf pattern.
"""
from __future__ import annotations

import numpy as np

from .._config import get_num_threads
from .._dispatch import Backend

try:
    from .. import _winograd
except ImportError as e:  # pragma: no cover - a build without the extension
    raise ImportError(f"cconv._winograd is not built: {e}") from e

BACKEND = Backend.WINOGRAD_DEPTHWISE_3X3

__all__ = ["BACKEND", "supports", "wanted", "nonfinite", "forward", "grad_input", "grad_weight"]

_NAME = "WINOGRAD_DEPTHWISE_3X3"


def supports(q) -> str | None:
    p = q.p
    if q.xp is not np:
        return f"{_NAME} runs NumPy arrays on the CPU"
    if q.need_backward or q.op != "forward":
        return f"{_NAME} is inference only (no backward)"
    if p.transposed:
        return f"{_NAME} runs plain convolutions, not transposed ones"
    if p.dtype is None or np.dtype(p.dtype) != np.float32:
        name = "unknown" if p.dtype is None else np.dtype(p.dtype).name
        return f"{_NAME} computes in float32 only, not {name}"
    if p.nsp != 2:
        return f"{_NAME} runs 2-D convolutions, not {p.nsp}-D"
    if not (p.groups == p.c_in == p.c_out and p.c_in >= 1):
        return (
            f"{_NAME} runs depthwise convolutions with channel multiplier 1 "
            f"(groups == C_in == C_out), but groups={p.groups}, C_in={p.c_in}, C_out={p.c_out}"
        )
    if tuple(p.kernel) != (3, 3):
        return f"{_NAME} runs 3x3 kernels, not {'x'.join(map(str, p.kernel))}"
    if tuple(p.stride) != (1, 1):
        return f"{_NAME} runs stride 1, not stride={tuple(p.stride)}"
    if tuple(p.dilation) != (1, 1):
        return f"{_NAME} runs dilation 1, not dilation={tuple(p.dilation)}"
    if any(v > 1 for v in p.pad_before) or any(v > 1 for v in p.pad_after):
        return (
            f"{_NAME} runs padding 0 or 1 per side, not padding before={tuple(p.pad_before)} "
            f"after={tuple(p.pad_after)}"
        )
    if p.batch > 0 and not _winograd.geom_ok(p.geom()):
        return f"{_NAME} cannot run the geometry {p.geom()} (sizes out of range)"
    return None


def wanted(q) -> bool:
    """Never by default: it beat the direct kernels only on a few layers
    (1x2x512x512 0.90-0.94, a tie on 4x16x64x64); benchmark mode times it."""
    return False


def nonfinite(q) -> str | None:
    return "data"


def forward(p, x, w, b, out) -> bool:
    """out = conv(x, w) + b; True when a NaN or an infinity in x or w
    stopped it (the kernels flag one as they read the data)."""
    if p.batch == 0 or out.size == 0:
        return False
    return _winograd.fwd(p.geom(), x, w, b, out, get_num_threads())


def grad_input(p, gy, w, out) -> None:  # pragma: no cover - refused by supports()
    raise NotImplementedError(f"{_NAME} is inference only: it has no grad_input")


def grad_weight(p, x, gy, out) -> None:  # pragma: no cover - refused by supports()
    raise NotImplementedError(f"{_NAME} is inference only: it has no grad_weight")
