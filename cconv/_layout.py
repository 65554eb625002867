"""Channels-last inputs: detection and the NHWC forward path.

A channels-last array is the NCHW view of an NHWC C-contiguous buffer
(``x_nhwc.transpose(0, 3, 1, 2)``; NLC and NDHWC likewise, unbatched too
once batchified).  PyTorch keeps that memory format through a convolution;
so does cconv: for such an input the result is channels last as well (the
NCHW-shaped view of an NHWC buffer).  Plain, non-depthwise float16/32/64
convolutions run on ``src/nhwc/nhwc_conv.c`` without any layout copy (float16
through float32), and float32/64 depthwise ones with multiplier 1 on
``src/depthwise/dw_nhwc.c``, likewise in place (through the copies they
took 3-16x torch's time on MobileNet layers); everything else (complex,
other depthwise, transposed, a forced backend other than GEMM or DEPTHWISE)
runs the usual channels-first path on a copy and its result is copied to
channels last.  ``out=`` (always C-contiguous) is written channels first by
the NHWC kernel directly (the depthwise one: a channels-last result copied).
"""
from __future__ import annotations

import math

import numpy as np

from . import _depthwise, _kernels, _nhwc
from ._array import narrow, narrow_into
from ._config import get_num_threads, result_empty, workspace
from ._dispatch import Backend, as_backend

__all__ = ["is_channels_last", "empty_channels_last", "forward", "set_enabled"]

_state = {"nhwc": True}
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
# path (benches/results/channels-last-2026-12-01.md)
_WIDE_FEW_CIG = 16
_WIDE_FEW_CIG_MIN_POS = 784
_WIDE_DILATED_MIN_POS = 256
_FLOAT = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def set_enabled(on: bool) -> bool:
    """Turn the NHWC kernel path on or off (tests, benchmarks); returns the
    old setting.  Off, channels-last inputs are copied to channels first
    (the result is still channels last)."""
    old = _state["nhwc"]
    _state["nhwc"] = bool(on)
    return old


def _to_last(nd: int) -> tuple:
    return (0,) + tuple(range(2, nd)) + (1,)


def _to_first(nd: int) -> tuple:
    return (0, nd - 1) + tuple(range(1, nd - 1))


def is_channels_last(a) -> bool:
    """True for a batched (N, C, *spatial) array whose memory is
    (N, *spatial, C) C-contiguous and not also plain C-contiguous (size-1
    axes make some arrays both: those count as channels first)."""
    return (
        a.ndim >= 3
        and not a.flags.c_contiguous
        and a.transpose(_to_last(a.ndim)).flags.c_contiguous
    )


def empty_channels_last(shape, dtype) -> np.ndarray:
    """An uninitialised array of NCHW ``shape`` with channels-last memory."""
    nd = len(shape)
    phys = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    return result_empty(np, phys, dtype).transpose(_to_first(nd))


def _dims(shape) -> tuple:
    n, c = shape[0], shape[1]
    s = 1
    for v in shape[2:]:
        s *= v
    return n, c, s


def to_channels_first(x, out=None) -> np.ndarray:
    """A C-contiguous (channels-first) copy of channels-last ``x``, or
    written into C-contiguous ``out`` of its shape and dtype: the tiled SIMD
    transpose (src/transpose/transpose.c), 4-6x faster than NumPy's strided copy (2
    threads, AVX2: 1x56x56x144 float32 0.09 against 0.42 ms, 8x56x56x64 0.46
    against 2.3 ms); for fewer than 8 channels NumPy's copy."""
    n, c, s = _dims(x.shape)
    if c < 8 or s < 8:
        if out is None:
            return np.ascontiguousarray(x)
        np.copyto(out, x)
        return out
    y = result_empty(np, x.shape, x.dtype) if out is None else out
    src = x.transpose(_to_last(x.ndim)).reshape(-1).view(np.uint8)
    _nhwc.transpose(n, s, c, x.dtype.itemsize, src, y.reshape(-1).view(np.uint8),
                    get_num_threads())
    return y


def to_channels_last(yc) -> np.ndarray:
    """A channels-last copy of C-contiguous ``yc`` (same shape and values),
    by the same tiled transpose the other way (rows = channels); NumPy's
    strided copy for fewer than 8 channels."""
    n, c, s = _dims(yc.shape)
    y = empty_channels_last(yc.shape, yc.dtype)
    if c < 8 or s < 8 or not yc.flags.c_contiguous:
        np.copyto(y, yc)
        return y
    dst = y.transpose(_to_last(y.ndim)).reshape(-1).view(np.uint8)
    _nhwc.transpose(n, c, s, yc.dtype.itemsize, yc.reshape(-1).view(np.uint8), dst,
                    get_num_threads())
    return y


def _copies_fit(p, dt) -> bool:
    """The copy path's channels-first input and output copies (computed in
    float32 but for float64) stay within the copy budget."""
    n = p.batch * (p.c_in * math.prod(p.in_size) + p.c_out * math.prod(p.out_size))
    return n * (8 if dt == np.float64 else 4) <= _COPY_MAX_BYTES


def _nhwc_applies(p, dt, backend) -> bool:
    if not _state["nhwc"] or p.transposed or dt not in _FLOAT:
        return False
    if backend is not None and as_backend(backend) is not Backend.GEMM:
        return False
    if p.is_depthwise or p.batch == 0 or p.c_in == 0 or p.c_out == 0:
        return False
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
    if (p.nsp == 2 and math.prod(p.kernel) == 9 and _copies_fit(p, dt)
            and _kernels.fwd_method(p.geom(), get_num_threads(), 8 if dt == np.float64 else 4) == "winograd"):
        # 3x3 stride-1 layers that the channels-first forward runs by
        # Winograd: the copies and Winograd win (2 threads, NHWC time /
        # copy path time: 4x128x28x28 2.6, 1x64x56x56 4.9, 1x256x28x28
        # 1.5), while the copies stay within the memory budget
        return False
    if (math.prod(p.kernel) > 1 and dt != np.float64
            and _kernels.isa() == "avx512" and _copies_fit(p, dt)):
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


def _dw_nhwc_applies(p, dt, backend) -> bool:
    """Depthwise, multiplier 1, float32/64: the kernel that reads and writes
    channels-last memory in place (src/depthwise/dw_nhwc.c)."""
    if not _state["nhwc"] or p.transposed or dt not in _FLOAT[1:] or not p.is_depthwise:
        return False
    if p.c_out != p.c_in or p.batch == 0:
        return False
    if backend is not None and as_backend(backend) is not Backend.DEPTHWISE:
        return False
    return _depthwise.nhwc_ok(p.geom(), dt.itemsize)


def _run_dw_nhwc(p, x, w, b, out):
    """The depthwise forward of channels-last ``x`` (compute dtype): the
    result channels last, or written to C-contiguous ``out``."""
    dt = x.dtype
    y = empty_channels_last(p.output_shape, dt)
    xf = x.transpose(_to_last(x.ndim)).reshape(-1)
    yf = y.transpose(_to_last(y.ndim)).reshape(-1)
    _depthwise.fwd_nhwc(p.geom(), xf, _contig(w, dt).reshape(-1),
                        None if b is None else _contig(b, dt), yf, get_num_threads())
    if out is None:
        return y
    return to_channels_first(y, out)


def _contig(a, dtype) -> np.ndarray:
    """C-contiguous, aligned ``a`` in ``dtype`` (a copy when needed)."""
    a = np.ascontiguousarray(a, dtype=dtype)
    return a if a.flags.aligned else a.copy()


def _run_nhwc(p, x, w, b, y, y_cl: bool) -> None:
    """y = conv(x, w) + b on the NHWC kernel; x channels last (compute
    dtype), y channels last (y_cl) or C-contiguous."""
    cdt = x.dtype
    geom = p.geom()
    nt = get_num_threads()
    xf = x.transpose(_to_last(x.ndim)).reshape(-1)
    yf = (y.transpose(_to_last(y.ndim)) if y_cl else y).reshape(-1)
    wf = _contig(w, cdt)
    bf = None if b is None else _contig(b, cdt)
    ws = workspace(_nhwc.fwd_workspace_bytes(geom, nt, cdt.itemsize))
    _nhwc.fwd(geom, xf, wf, bf, yf, 1 if y_cl else 0, ws, nt)


def forward(p, x, w, b, out, backend, need_backward, fallback):
    """The forward of ``p`` for a channels-last batched NumPy ``x``, or None
    when ``x`` is not channels last.  ``fallback(x_c)`` runs the usual path
    on a channels-first copy and returns its result (written to ``out``
    when that is given)."""
    if not is_channels_last(x):
        return None
    dt = np.dtype(x.dtype)
    if _dw_nhwc_applies(p, dt, backend) and _depthwise.all_finite(w):
        return _run_dw_nhwc(p.with_dtype(dt), x, w, b, out)
    if _nhwc_applies(p, dt, backend):
        if dt == np.float16:
            x32 = x.astype(np.float32)  # order 'K': stays channels last
            if x32.flags.c_contiguous or not is_channels_last(x32):
                x32 = x32.transpose(_to_last(x.ndim)).copy().transpose(_to_first(x.ndim))
            p32 = p.with_dtype(np.float32)
            if out is None:
                y32 = empty_channels_last(p.output_shape, np.float32)
                _run_nhwc(p32, x32, w, b, y32, True)
                return narrow(y32, dt)  # order 'K': stays channels last
            y32 = result_empty(np, p.output_shape, np.float32)
            _run_nhwc(p32, x32, w, b, y32, False)
            narrow_into(out, y32)
            return out
        pr = p.with_dtype(dt)
        if out is not None:
            _run_nhwc(pr, x, w, b, out, False)
            return out
        y = empty_channels_last(p.output_shape, dt)
        _run_nhwc(pr, x, w, b, y, True)
        return y
    xc = to_channels_first(x)
    if out is not None:
        return fallback(xc)
    yc = fallback(xc)
    return to_channels_last(yc)
