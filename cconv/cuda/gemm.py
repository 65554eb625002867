"""CUDA_GEMM: im2col + cuBLAS GEMM (``cupy.matmul``) for every plain
convolution on cupy.ndarray inputs.

The three algorithms below (forward, adjoint, weight gradient of the plain
convolution geometry ``ConvParams.geom()``) are shared with
CUDA_GEMM_TRANSPOSE.  They take the array module ``xp`` and the kernel front
``K`` (``cconv.cuda.kernels.Kernels``) as parameters, so the tests run them
with NumPy and the CPU harness of the same .cu sources.

Tiling: a tile is ``nb`` images times ``np`` output columns (flattened output
positions).  Column buffers are laid out per group, ``(groups, K, nb*np)``
with ``K = cig*kk``, so one (batched over groups) GEMM covers the whole tile;
``nb`` and ``np`` are chosen so that the buffers stay under
``_cuda_kernels.workspace_bytes()`` (np < P only when one image alone does
not fit).  Groups are the batch dimension of the GEMM; with one group the
GEMMs are 2-D, so a transposed operand is passed to cuBLAS as a transpose
flag, not copied.
"""
from __future__ import annotations

import math

from . import kernels as _cuda_kernels
from .._dispatch import Backend
from ._common import check_cuda, device_api, plain_ops

BACKEND = Backend.CUDA_GEMM

__all__ = ["supports", "forward", "grad_input", "grad_weight", "forward_with", "grad_input_with",
           "grad_weight_with", "conv_fwd", "conv_adj", "conv_wgrad", "plan_tiles", "image_range"]


def supports(q) -> str | None:
    p = q.p
    why = check_cuda(q.xp, "CUDA_GEMM")
    if why:
        return why
    if p.transposed:
        return "CUDA_GEMM runs plain convolutions; a transposed one runs on CUDA_GEMM_TRANSPOSE"
    return None


# --------------------------------------------------------------------------
# planning (pure Python)
# --------------------------------------------------------------------------
def plan_tiles(batch: int, P: int, per_col: int, budget_elems: int) -> tuple[int, int]:
    """(nb, np): images and output columns per tile, so that a tile's
    ``nb*np*per_col`` scratch elements fit ``budget_elems`` (at least one
    column per tile)."""
    cols = max(1, budget_elems // max(per_col, 1))
    if P <= cols:
        return max(1, min(batch, cols // max(P, 1))), P
    return 1, cols


def _tiles(batch: int, P: int, nb: int, npc: int):
    for n0 in range(0, batch, nb):
        nbt = min(nb, batch - n0)
        for p0 in range(0, P, npc):
            yield n0, nbt, p0, min(npc, P - p0)


def _unflat(p: int, o3) -> tuple[int, int, int]:
    o2 = p % o3[2]
    q = p // o3[2]
    return q // o3[1], q % o3[1], o2


def image_range(geom: tuple, p0: int, npc: int) -> tuple[int, int]:
    """(q0, nq): a range of flattened image positions holding every image
    element that output columns p0 .. p0+npc-1 read (lexicographic bounds on
    the touched (i0, i1, i2); a dim is narrowed only while the outer dims of
    the column range are constant).  nq == 0 when they read nothing."""
    _, _, _, _, i3, o3, k3, s3, pd3, d3 = geom
    a = _unflat(p0, o3)
    b = _unflat(p0 + npc - 1, o3)
    lo, hi = [], []
    narrow = True
    for d in range(3):
        if narrow:
            l = max(0, a[d] * s3[d] - pd3[d])
            h = min(i3[d] - 1, b[d] * s3[d] - pd3[d] + (k3[d] - 1) * d3[d])
            if l > h:
                return 0, 0
            narrow = a[d] == b[d]
        else:
            l, h = 0, i3[d] - 1
        lo.append(l)
        hi.append(h)

    def flat(t):
        return (t[0] * i3[1] + t[1]) * i3[2] + t[2]

    q0 = flat(lo)
    return q0, flat(hi) - q0 + 1


def _sizes(geom):
    batch, groups, c_in, c_out, i3, o3, k3, s3, pd3, _ = geom
    kk = math.prod(k3)
    direct = kk == 1 and tuple(s3) == (1, 1, 1) and tuple(pd3) == (0, 0, 0) and tuple(i3) == tuple(o3)
    return batch, groups, c_in, c_out, kk, math.prod(o3), math.prod(i3), direct


def _budget(itemsize: int, ws_bytes: int | None) -> int:
    return (ws_bytes if ws_bytes is not None else _cuda_kernels.workspace_bytes()) // itemsize


def _mm(xp, a, b, out) -> None:
    """out = a @ b for stacks (groups, m, k) @ (groups, k, n); 2-D when there
    is one group, so transposed views go to cuBLAS as flags."""
    if a.shape[0] == 1:
        xp.matmul(a[0], b[0], out=out[0])
    else:
        xp.matmul(a, b, out=out)


# --------------------------------------------------------------------------
# the three GEMM convolutions
# --------------------------------------------------------------------------
def conv_fwd(xp, K, geom, x, w, b, y, ws_bytes=None) -> None:
    """y (N, c_out, *out) = conv(x, w) (+ b) for the plain geometry."""
    batch, G, c_in, c_out, kk, P, _, direct = _sizes(geom)
    if y.size == 0:
        return
    cig, cog = c_in // G, c_out // G
    Kd = cig * kk
    if Kd == 0 or batch == 0:
        y[...] = 0
        if b is not None:
            y += b.reshape((1, -1) + (1,) * (y.ndim - 2))
        return
    dt = y.dtype
    nb, npc = plan_tiles(batch, P, c_in * kk + c_out, _budget(dt.itemsize, ws_bytes))
    whole = nb == 1 and npc == P
    colbuf = None if (direct and whole) else xp.empty(c_in * kk * nb * npc, dtype=dt)
    ybuf = None if whole else xp.empty(c_out * nb * npc, dtype=dt)
    W = w.reshape(G, cog, Kd)
    for n0, nbt, p0, npt in _tiles(batch, P, nb, npc):
        M = nbt * npt
        if direct and nbt == 1 and npt == P:
            colv = x[n0].reshape(G, Kd, P)
        else:
            colv = colbuf[: c_in * kk * M].reshape(G, Kd, M)
            if direct:
                K.cols_from_nchw(x[n0:n0 + nbt], colv, nbt, c_in, P, p0, npt)
            else:
                K.im2col(x[n0:n0 + nbt], colv, nbt, c_in, cig, p0, npt, 0, geom)
        if nbt == 1 and npt == P:
            dst = y[n0].reshape(G, cog, P)
            _mm(xp, W, colv, dst)
            if b is not None:  # in place: src == dst for one whole image
                K.nchw_from_cols(dst, y[n0:n0 + 1], b, 1, c_out, P, 0, P)
        else:
            yv = ybuf[: c_out * M].reshape(G, cog, M)
            _mm(xp, W, colv, yv)
            K.nchw_from_cols(yv, y[n0:n0 + nbt], b, nbt, c_out, P, p0, npt)


def _transposed_weight(xp, w, G, cog, Kd):
    """(G, Kd, cog): a transposed view for one group, a copy otherwise."""
    wt = w.reshape(G, cog, Kd).transpose(0, 2, 1)
    return wt if G == 1 else xp.ascontiguousarray(wt)


def _gy_cols(K, gy, gbuf, n0, nbt, c_out, G, cog, P, p0, npt):
    """gy's tile as (G, cog, nbt*npt): a view for one whole image."""
    if nbt == 1 and npt == P:
        return gy[n0].reshape(G, cog, P)
    gv = gbuf[: c_out * nbt * npt].reshape(G, cog, nbt * npt)
    K.cols_from_nchw(gy[n0:n0 + nbt], gv, nbt, c_out, P, p0, npt)
    return gv


def conv_adj(xp, K, geom, gy, w, b, gx, ws_bytes=None) -> None:
    """gx (N, c_in, *in) = conv_adjoint(gy, w) (+ b[c_in]) for the plain
    geometry: GEMM W^T gy, then col2im as a gather."""
    batch, G, c_in, c_out, kk, P, Iflat, direct = _sizes(geom)
    if gx.size == 0:
        return
    cig, cog = c_in // G, c_out // G
    Kd = cig * kk
    if cog == 0 or batch == 0:
        gx[...] = 0
        if b is not None:
            gx += b.reshape((1, -1) + (1,) * (gx.ndim - 2))
        return
    dt = gx.dtype
    nb, npc = plan_tiles(batch, P, c_in * kk + c_out, _budget(dt.itemsize, ws_bytes))
    whole = nb == 1 and npc == P
    gbuf = None if whole else xp.empty(c_out * nb * npc, dtype=dt)
    colbuf = None if (direct and whole and b is None) else xp.empty(c_in * kk * nb * npc, dtype=dt)
    Wt = _transposed_weight(xp, w, G, cog, Kd)
    for n0, nbt, p0, npt in _tiles(batch, P, nb, npc):
        M = nbt * npt
        Gt = _gy_cols(K, gy, gbuf, n0, nbt, c_out, G, cog, P, p0, npt)
        if direct and nbt == 1 and npt == P and b is None:
            _mm(xp, Wt, Gt, gx[n0].reshape(G, Kd, P))
            continue
        cv = colbuf[: c_in * kk * M].reshape(G, Kd, M)
        _mm(xp, Wt, Gt, cv)
        if direct:
            K.nchw_from_cols(cv, gx[n0:n0 + nbt], b, nbt, c_in, P, p0, npt)
        elif npt == P:
            K.col2im(cv, gx[n0:n0 + nbt], b, nbt, c_in, 0, P, 0, Iflat, False, geom)
        else:  # column tiles of one image: start from 0 (+ b), then accumulate
            if p0 == 0:
                img = gx[n0].reshape(c_in, Iflat)
                if b is None:
                    img[...] = 0
                else:
                    img[...] = b.reshape(c_in, 1)
            q0, nq = image_range(geom, p0, npt)
            if nq:
                K.col2im(cv, gx[n0:n0 + 1], None, 1, c_in, p0, npt, q0, nq, True, geom)


def conv_wgrad(xp, K, geom, x, gy, gw, ws_bytes=None) -> None:
    """gw (c_out, cig, *k) = d<gy, conv(x, w)>/dw: per tile one GEMM gy·colᵀ,
    tiles added in order (deterministic)."""
    batch, G, c_in, c_out, kk, P, _, _ = _sizes(geom)
    if gw.size == 0:
        return
    cig, cog = c_in // G, c_out // G
    Kd = cig * kk
    if batch == 0 or x.size == 0:
        gw[...] = 0
        return
    dt = gw.dtype
    nb, npc = plan_tiles(batch, P, c_in * kk + c_out, _budget(dt.itemsize, ws_bytes))
    whole = nb == 1 and npc == P
    colbuf = xp.empty(c_in * kk * nb * npc, dtype=dt)
    gbuf = None if whole else xp.empty(c_out * nb * npc, dtype=dt)
    layout = 0 if G == 1 else 1
    gw3 = gw.reshape(G, cog, Kd)
    tmp = None
    first = True
    for n0, nbt, p0, npt in _tiles(batch, P, nb, npc):
        M = nbt * npt
        cv = colbuf[: c_in * kk * M]
        K.im2col(x[n0:n0 + nbt], cv, nbt, c_in, cig, p0, npt, layout, geom)
        # (G, M, Kd): the transpose of layout 0 as a view (one group), or layout 1
        B = cv.reshape(1, Kd, M).transpose(0, 2, 1) if layout == 0 else cv.reshape(G, M, Kd)
        Gt = _gy_cols(K, gy, gbuf, n0, nbt, c_out, G, cog, P, p0, npt)
        if first:
            _mm(xp, Gt, B, gw3)
            first = False
        else:
            if tmp is None:
                tmp = xp.empty(gw3.shape, dtype=dt)
            _mm(xp, Gt, B, tmp)
            gw3 += tmp


# The backend API, and its *_with forms that take the array module and the
# kernel front explicitly (the tests pass NumPy and the CPU harness).
forward_with, grad_input_with, grad_weight_with = plain_ops(conv_fwd, conv_adj, conv_wgrad)
forward, grad_input, grad_weight = device_api(forward_with, grad_input_with, grad_weight_with)
