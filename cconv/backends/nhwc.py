"""NHWC: plain convolutions of channels-last inputs on src/nhwc/nhwc_conv.c,
which reads the input's channels-last memory in place (no layout copy) and
writes the result channels last, or channels first into ``out=``.  Forward
only (grouped, strided, dilated, 1-D to 3-D, float32/float64; float16
inputs reach it as float32).

The default choice takes it for channels-last inputs except where the
copies to channels first and a channels-first method measured faster
(``wanted``); forcing another method on a channels-last input runs that
method on a channels-first copy and copies the result back."""
from __future__ import annotations

import math

import numpy as np

from .. import _kernels, _nhwc
from .._config import get_num_threads, workspace
from .._dispatch import Backend, select
from ._gemm_common import check_cpu, check_real

BACKEND = Backend.NHWC
CHANNELS_LAST = True

# grouped kxk convolutions take the NHWC path from this many input channels
# per group on (1x1 ones always: their GEMMs read x in place)
_GROUP_MIN_CIG = 64
# 2-D/3-D kernels of this many taps or more, with at most this many output
# and at least this many input channels per group, take the copy path
_BIG_KERNEL_TAPS = 25
_BIG_KERNEL_MAX_COG = 64
_BIG_KERNEL_MIN_CIG = 32
# Winograd layers take the copy path while input and output together are at
# most this many bytes: the copies cost that much memory beyond the output
# (the memory target: <= 64 MiB for a 1x64x1024x1024 3x3 layer)
_COPY_MAX_BYTES = 64 << 20
# With 16-lane float32 kernels (AVX-512), multi-tap layers with few input
# channels on large outputs, and dilated stride-1 2-D ones, take the copy
# path (benches/results/channels-last-2026-12-01-intel-xeon-avx512.md)
_WIDE_FEW_CIG = 16
_WIDE_FEW_CIG_MIN_POS = 784
_WIDE_DILATED_MIN_POS = 256


def supports(q) -> str | None:
    why = check_cpu(q, "NHWC") or check_real(q, "NHWC")
    if why:
        return why
    p = q.p
    if not q.channels_last:
        return "NHWC runs inputs in channels-last memory (the NCHW view of an NHWC array)"
    if q.op != "forward" or p.transposed:
        return "NHWC computes the forward of plain convolutions only"
    if p.is_depthwise:
        return "NHWC runs non-depthwise convolutions (DEPTHWISE_NHWC runs depthwise ones)"
    if p.batch == 0 or p.c_in == 0 or p.c_out == 0:
        return "NHWC runs non-empty problems"
    return None


def _copies_fit(p) -> bool:
    """The copy path's channels-first input and output copies stay within
    the copy budget."""
    n = p.batch * (p.c_in * math.prod(p.in_size) + p.c_out * math.prod(p.out_size))
    return n * np.dtype(p.dtype).itemsize <= _COPY_MAX_BYTES


def wanted(q) -> bool:
    p = q.p
    if p.groups > 1 and p.c_in // p.groups < _GROUP_MIN_CIG and any(k > 1 for k in p.kernel):
        # each group's col re-reads every pixel for a few of its channels:
        # measured slower than the copy path below 64 channels per group
        # (1 thread, 3x3 on 28x28: groups 8 x 32 channels 1.16x, 16 x 16
        # 1.46x, 32 x 8 1.48x the time; 4 x 64 0.94x, 2 x 64 0.93x)
        return False
    if (p.nsp >= 2 and math.prod(p.kernel) >= _BIG_KERNEL_TAPS and p.c_out // p.groups <= _BIG_KERNEL_MAX_COG
            and p.c_in // p.groups >= _BIG_KERNEL_MIN_CIG):
        # 5x5 and larger 2-D/3-D kernels with few output channels: the
        # copies and the implicit GEMM win (2 threads, NHWC time / copy
        # path time: 2x96x28x28 7x7 -> 16/32/64 2.02/1.38/1.49, 2x64x28x28
        # 5x5 -> 32 1.51, 1x32x16^3 5x5x5 -> 64 1.23; but -> 128 0.86-1.05,
        # 1-D k31 0.86, the stem's 3 input channels 0.42)
        return False
    if (p.nsp == 2 and math.prod(p.kernel) == 9 and _copies_fit(p)
            and select(q._replace(channels_last=False))[0] is Backend.WINOGRAD_3X3):
        # 3x3 stride-1 layers that the channels-first forward runs by
        # Winograd: the copies and Winograd win (2 threads, NHWC time /
        # copy path time: 4x128x28x28 2.6, 1x64x56x56 4.9, 1x256x28x28
        # 1.5), while the copies stay within the memory budget
        return False
    if (math.prod(p.kernel) > 1 and np.dtype(p.dtype) != np.float64
            and _kernels.isa() == "avx512" and _copies_fit(p)):
        # 16-lane float32: the NHWC kernel's columns gather runs of c_in / g
        # elements, and the channels-first implicit GEMM got faster here
        # (2 threads, NHWC time / copy path time: 16 input channels on 28x28
        # to 64x64 outputs 1.27-1.69, the stem 1.28, 1-D and 3-D 1.48-1.59;
        # dilated 2-D stride 1 1.03-1.43, deeplab's 1.43 (1-D 1.03-1.06: left
        # alone); but 7x7 images, stride 2 and 1x1 0.3-0.9)
        pos = math.prod(p.out_size)
        if p.c_in // p.groups <= _WIDE_FEW_CIG and pos >= _WIDE_FEW_CIG_MIN_POS:
            return False
        if (p.nsp == 2 and any(d > 1 for d in p.dilation) and all(s == 1 for s in p.stride)
                and pos >= _WIDE_DILATED_MIN_POS):
            return False
    return True


def _last(nd: int) -> tuple:
    return (0,) + tuple(range(2, nd)) + (1,)


def forward(p, x, w, b, out) -> None:
    """out = conv(x, w) + b for channels-last ``x`` (the NCHW view of an NHWC
    buffer); ``out`` channels last (its NCHW view) or C-contiguous."""
    geom = p.geom()
    nt = get_num_threads()
    y_cl = not out.flags.c_contiguous
    xf = x.transpose(_last(x.ndim)).reshape(-1)
    yf = (out.transpose(_last(out.ndim)) if y_cl else out).reshape(-1)
    ws = workspace(_nhwc.fwd_workspace_bytes(geom, nt, x.dtype.itemsize))
    _nhwc.fwd(geom, xf, w, b, yf, 1 if y_cl else 0, ws, nt)


def grad_input(p, gy, w, out) -> None:  # pragma: no cover - refused by supports()
    raise NotImplementedError("NHWC has no grad_input")


def grad_weight(p, x, gy, out) -> None:  # pragma: no cover - refused by supports()
    raise NotImplementedError("NHWC has no grad_weight")
