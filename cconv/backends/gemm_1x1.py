"""GEMM_1X1: 1x1 convolutions of stride 1 without padding, whose im2col
is the input itself: the forward, grad_input and grad_weight as GEMMs that
read the arrays in place (blocks of several small images share one GEMM
through a copy), plain or transposed (src/gemm/gemm_conv.c, method
'gemm_1x1')."""
from __future__ import annotations

from .. import _kernels
from .._config import get_num_threads
from .._dispatch import Backend
from ._gemm_common import GEMM_1X1_OPS, check_cpu, check_real, elsize

BACKEND = Backend.GEMM_1X1


def supports(q) -> str | None:
    why = check_cpu(q, "GEMM_1X1") or check_real(q, "GEMM_1X1")
    if why:
        return why
    p = q.p
    if not _kernels.applies(q.kind, "gemm_1x1", p.geom(), get_num_threads(), elsize(p)):
        return (f"GEMM_1X1 runs 1x1 kernels of stride 1 without padding, not kernel "
                f"{p.kernel}, stride {p.stride}, padding {p.pad_before}/{p.pad_after}")
    return None


def wanted(q) -> bool:
    """Always, but for a weight gradient that IMPLICIT_GEMM's grouped kernel
    takes (it reads the band in place and came first in the measurements)."""
    if q.kind != "wgrad":
        return True
    p = q.p
    return not _kernels.applies("wgrad", "implicit_gemm", p.geom(), get_num_threads(), elsize(p))


forward, grad_input, grad_weight = GEMM_1X1_OPS
