"""The three GEMM kernels of src/gemm_conv.c, called with scratch memory
from the per-thread cache.  Shared by the GEMM and GEMM_TRANSPOSE backends."""
from __future__ import annotations

import numpy as np

from .. import _kernels
from .._config import get_num_threads, workspace


def _ws(kind: str, geom: tuple, nt: int, dtype) -> np.ndarray | None:
    nbytes = _kernels.workspace_bytes(kind, geom, nt, np.dtype(dtype).itemsize)
    return workspace(nbytes)


def plain_forward(geom, x, w, b, y) -> None:
    """y (plain output side) = conv(x, w) + b."""
    nt = get_num_threads()
    _kernels.conv_fwd(geom, x, w, b, y, _ws("fwd", geom, nt, y.dtype), nt)


def _adjoint_as_forward(geom, y, w, b, x) -> bool:
    """At stride 1 the adjoint is a forward convolution of y with the
    weight transposed per group and flipped, padded by d*(k-1) - p before:
    run it that way when that forward needs no im2col (the implicit GEMM of
    src/igemm or the shifted GEMMs of shift_conv.c)."""
    batch, groups, c_in, c_out, im, co, k, stride, pad, dil = geom
    if any(s != 1 for s in stride):
        return False
    pad2 = tuple(d * (kk - 1) - p for d, kk, p in zip(dil, k, pad))
    if any(p < 0 for p in pad2):
        return False
    geom2 = (batch, groups, c_out, c_in, co, im, k, stride, pad2, dil)
    if _kernels.fwd_method(geom2, get_num_threads(), y.dtype.itemsize) not in ("igemm", "shift"):
        return False
    cog, cig = c_out // groups, c_in // groups
    w2 = w.reshape((groups, cog, cig) + tuple(k)).transpose(0, 2, 1, 3, 4, 5)
    w2 = np.ascontiguousarray(w2[:, :, :, ::-1, ::-1, ::-1]).reshape((c_in, cog) + tuple(k))
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
