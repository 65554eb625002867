"""DEPTHWISE_NHWC: depthwise convolutions (channel multiplier 1) of
channels-last inputs on src/depthwise/dw_nhwc.c, which reads and writes
channels-last memory in place (through layout copies these took 3-16x
torch's time on MobileNet layers).  The plain forward only, float32/float64;
a C-contiguous ``out=`` gets the channels-last result copied."""
from __future__ import annotations

import numpy as np

from .. import _depthwise
from .._config import get_num_threads
from .._dispatch import Backend
from ._depthwise_common import why_not_depthwise

BACKEND = Backend.DEPTHWISE_NHWC
CHANNELS_LAST = True


def supports(q) -> str | None:
    why = why_not_depthwise(q, "DEPTHWISE_NHWC")
    if why:
        return why
    p = q.p
    if not q.channels_last:
        return "DEPTHWISE_NHWC runs inputs in channels-last memory (the NCHW view of an NHWC array)"
    if q.op != "forward" or p.transposed:
        return "DEPTHWISE_NHWC computes the forward of plain convolutions only"
    if p.c_out != p.c_in or p.batch == 0:
        return "DEPTHWISE_NHWC runs channel multiplier 1 on a non-empty batch"
    if not _depthwise.nhwc_ok(p.geom(), np.dtype(p.dtype).itemsize):
        return "DEPTHWISE_NHWC's row buffers for this geometry exceed their cap"
    return None


def nonfinite(q) -> str | None:
    return "weight"


def _last(nd: int) -> tuple:
    return (0,) + tuple(range(2, nd)) + (1,)


def forward(p, x, w, b, out) -> None:
    """out = conv(x, w) + b for channels-last ``x``; ``out`` channels last
    (its NCHW view) or C-contiguous (written by a copy)."""
    from .._layout import empty_channels_last, to_channels_first

    y = out if not out.flags.c_contiguous else empty_channels_last(out.shape, out.dtype)
    xf = x.transpose(_last(x.ndim)).reshape(-1)
    yf = y.transpose(_last(y.ndim)).reshape(-1)
    _depthwise.fwd_nhwc(p.geom(), xf, w.reshape(-1), b, yf, get_num_threads())
    if y is not out:
        to_channels_first(y, out)


def grad_input(p, gy, w, out) -> None:  # pragma: no cover - refused by supports()
    raise NotImplementedError("DEPTHWISE_NHWC has no grad_input")


def grad_weight(p, x, gy, out) -> None:  # pragma: no cover - refused by supports()
    raise NotImplementedError("DEPTHWISE_NHWC has no grad_weight")
