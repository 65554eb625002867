"""The three GEMM kernels of src/gemm/gemm_conv.c, called with scratch memory
from the per-thread cache.  Shared by the GEMM and GEMM_TRANSPOSE backends."""
from __future__ import annotations

import numpy as np

from .. import _kernels, _nhwc
from .._config import get_num_threads, workspace


def _ws(kind: str, geom: tuple, nt: int, dtype) -> np.ndarray | None:
    nbytes = _kernels.workspace_bytes(kind, geom, nt, np.dtype(dtype).itemsize)
    return workspace(nbytes)


def plain_forward(geom, x, w, b, y) -> None:
    """y (plain output side) = conv(x, w) + b."""
    nt = get_num_threads()
    _kernels.conv_fwd(geom, x, w, b, y, _ws("fwd", geom, nt, y.dtype), nt)


def _flipped_weight(geom, w) -> tuple[np.ndarray, bool]:
    """The weight of the adjoint as a forward: per group, the channel axes
    swapped and the taps reversed, (c_in, c_out // groups, *k), by
    src/transpose/transpose.c (NumPy's copy of the reversed view took 6.6 ms for a
    512x512x3x3 weight, the C loop about 1); and whether it is all finite
    (taps of one: not looked at, True)."""
    batch, groups, c_in, c_out, im, co, k, stride, pad, dil = geom
    cog, cig = c_out // groups, c_in // groups
    kk = k[0] * k[1] * k[2]
    w = np.ascontiguousarray(w)
    w2 = np.empty((c_in, cog) + tuple(k), w.dtype)
    finite = _nhwc.weight_adjoint(groups, cog, cig, kk, w.dtype.itemsize,
                                  w.reshape(-1).view(np.uint8), w2.reshape(-1).view(np.uint8),
                                  get_num_threads())
    return w2, finite


# The forward form computes every input position from all taps of a
# padded y; the col2im form only the output positions' products.  Above
# this ratio of input to output positions (a 'valid' convolution of a small
# image with a large kernel) col2im is faster: measured, 2 threads, float32,
# col2im / forward-form time: 2-D 0.92-0.94 at 1.56-1.65 positions, 0.40
# at 5.4, 1.08 at 1.62 (28x28 7x7), 1.35-1.50 at 1.08-1.36; 3-D 1.06 at
# 1.49, 0.58 at 2.37, 0.40 at 3.38; 1-D 0.75-0.79 at 1.14-1.31, 0.17 at 16,
# 1.09-1.26 at 1.0 ('same').  Indexed by "only the last dim is > 1".
_ADJ_MAX_WASTE = {False: 1.6, True: 1.1}


def _adjoint_as_forward(geom, y, w, b, x) -> bool:
    """At stride 1 the adjoint is a forward convolution of y with the
    weight transposed per group and flipped, padded by d*(k-1) - p before:
    run it that way when that forward needs no im2col (the implicit GEMM of
    src/igemm, its Winograd F(2x2, 3x3) or the shifted GEMMs of
    shift_conv.c)."""
    batch, groups, c_in, c_out, im, co, k, stride, pad, dil = geom
    if any(s != 1 for s in stride):
        return False
    if im[0] * im[1] * im[2] > _ADJ_MAX_WASTE[im[0] == 1 and im[1] == 1] * co[0] * co[1] * co[2]:
        return False
    pad2 = tuple(d * (kk - 1) - p for d, kk, p in zip(dil, k, pad))
    if any(p < 0 for p in pad2):
        return False
    geom2 = (batch, groups, c_out, c_in, co, im, k, stride, pad2, dil)
    if _kernels.fwd_method(geom2, get_num_threads(), y.dtype.itemsize) not in ("igemm", "shift", "winograd"):
        return False
    w2, finite = _flipped_weight(geom, w)
    if not finite and any(p > 0 for p in pad2):
        # a NaN or infinite weight times the forward's zero padding is NaN
        # where the adjoint (and torch) has no product at all: col2im
        # forms only the real ones (a fuzz against torch:
        # conv_transpose1d(ones((1, 1, 2)), [[[1, inf]]], padding=2,
        # dilation=3) gave [[[nan]]], torch [[[0.]]])
        return False
    plain_forward(geom2, y, w2, b, x)
    return True


def plain_adjoint(geom, y, w, b, x) -> None:
    """x (plain input side) = conv_adjoint(y, w) + b."""
    if _adjoint_as_forward(geom, y, w, b, x):
        return
    nt = get_num_threads()
    _kernels.conv_adj(geom, y, w, b, x, _ws("adj", geom, nt, x.dtype), nt)


def plain_wgrad(geom, x, gy, gw) -> None:
    """gw = gradient of <gy, conv(x, w)> with respect to w."""
    nt = get_num_threads()
    _kernels.conv_wgrad(geom, x, gy, gw, _ws("wgrad", geom, nt, gw.dtype), nt)


def check_cpu(xp) -> str | None:
    if xp is not np:
        return "it runs NumPy arrays on the CPU (use the CUDA_* backends for CuPy arrays)"
    return None
