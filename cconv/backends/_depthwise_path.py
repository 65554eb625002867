"""The forward-only depthwise methods on one path of ``cc_dw_fwd``
(src/depthwise/depthwise.h): the plane kernels (DEPTHWISE_PLANE) and the
channels-last blocks (DEPTHWISE_CHANNEL_BLOCKS).  ``path_backend(name,
path, what)`` makes a backend module's functions for one path."""
from __future__ import annotations

import numpy as np

from .. import _depthwise
from .._config import get_num_threads
from ._depthwise_common import auto_ok, why_not_depthwise
from ._plain import ops

__all__ = ["path_backend"]


def path_backend(name: str, path: str, what: str):
    """(supports, wanted, nonfinite, forward, grad_input, grad_weight) of the
    method running ``cc_dw_fwd`` by ``path``; ``what`` says which
    geometries it takes, for the refusal."""

    def supports(q) -> str | None:
        why = why_not_depthwise(q, name)
        if why:
            return why
        if q.kind != "fwd":
            return (f"{name} computes the plain depthwise forward (a transposed one's grad_input) "
                    f"only; DEPTHWISE computes the others")
        p = q.p
        if not _depthwise.fwd_applies(path, p.geom(), np.dtype(p.dtype).itemsize):
            return f"{name} runs {what}"
        return None

    def wanted(q) -> bool:
        p = q.p
        return auto_ok(p) and _depthwise.fwd_wanted(path, p.geom(), np.dtype(p.dtype).itemsize)

    def nonfinite(q) -> str | None:
        return "weight"

    def fwd(p, x, w, b, out):
        _depthwise.fwd(path, p.geom(), x, w, b, out, get_num_threads())

    return (supports, wanted, nonfinite) + ops(fwd)
