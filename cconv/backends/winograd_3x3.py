"""WINOGRAD_3X3: Winograd F(2x2, 3x3) (src/winograd/wino_conv.c) for 3x3
stride-1 layers across the planes (2-D, or 3-D with any depth taps;
dilation 1-4), and F(2, 3) (src/winograd/wino1d.h) for 1-D layers of 3
taps at stride 1 (any dilation): the plain forward, and the adjoint (grad_input, transposed
forward) at stride 1 as the forward of the flipped weight.  Its transforms
would turn an infinity into NaN and spread a NaN over a tile: the kernels
notice a NaN or an infinity in the data as they read it and stop, and the
call runs on another method (``nonfinite``: 'data')."""
from __future__ import annotations

from .._dispatch import Backend
from ._gemm_common import adj_as_fwd, fwd, gemm_method
from ._plain import ops

BACKEND = Backend.WINOGRAD_3X3
_M = "winograd_3x3"


def _refusal(p, kind) -> str:
    return ("WINOGRAD_3X3 runs 3x3 kernels across the planes at stride 1 and dilation 1-4, "
            "and 1-D kernels of 3 taps at stride 1 (workspace within its cap), not kernel "
            f"{p.kernel}, stride {p.stride}, dilation {p.dilation}")


supports, wanted = gemm_method(BACKEND, _M, _refusal)


def nonfinite(q) -> str | None:
    return "data"


forward, grad_input, grad_weight = ops(
    lambda p, x, w, b, out: fwd(_M, p.geom(), x, w, b, out),
    lambda p, y, w, b, out: adj_as_fwd(_M, p, y, w, b, out))
