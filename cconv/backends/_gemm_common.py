"""What the methods of src/gemm/gemm_conv.c share: scratch memory from the
per-thread cache, the mapping of an operation onto the plain geometry's
fwd/adj/wgrad, the CPU check, and the adjoint run as a forward convolution
(the stride-1 grad_input or transposed forward of IMPLICIT_GEMM,
WINOGRAD_3X3 and SHIFT)."""
from __future__ import annotations

import numpy as np

from .. import _kernels, _nhwc
from .._config import get_num_threads, result_empty, workspace
from .._params import ConvParams
from ._plain import ops

__all__ = ["check_cpu", "check_real", "elsize", "fwd", "adj", "wgrad", "flipped", "adj_as_fwd",
           "flip_waste_ok", "flip_nonfinite", "flipped_weight", "IM2COL_OPS", "GEMM_1X1_OPS",
           "gemm_method"]


def check_cpu(q, name: str) -> str | None:
    """Why ``name`` cannot run ``q`` on the CPU (CuPy arrays), or None."""
    if q.xp is not np:
        return f"{name} runs NumPy arrays on the CPU (the CUDA_* backends run CuPy arrays)"
    return None


def check_real(q, name: str) -> str | None:
    """Why a float32/float64 kernel cannot compute ``q``'s dtype, or None."""
    dt = q.p.dtype
    if dt is None or np.dtype(dt) not in (np.float32, np.float64):
        return f"{name} computes in float32 or float64, not {'unknown' if dt is None else np.dtype(dt).name}"
    return None


def elsize(p) -> int:
    return np.dtype(p.dtype).itemsize


def _ws(kind: str, method: str, geom: tuple, nt: int, es: int) -> np.ndarray | None:
    return workspace(_kernels.workspace_bytes(kind, method, geom, nt, es))


def fwd(method: str, geom, x, w, b, y) -> bool:
    """y (plain output side) = conv(x, w) + b by ``method``; True when it
    stopped at a NaN or an infinity (Winograd)."""
    nt = get_num_threads()
    return _kernels.conv_fwd(method, geom, x, w, b, y, _ws("fwd", method, geom, nt, y.dtype.itemsize), nt)


def adj(method: str, geom, y, w, b, x) -> None:
    """x (plain input side) = conv_adjoint(y, w) + b by ``method``."""
    nt = get_num_threads()
    _kernels.conv_adj(method, geom, y, w, b, x, _ws("adj", method, geom, nt, x.dtype.itemsize), nt)


def wgrad(method: str, geom, x, gy, gw) -> bool:
    """gw = gradient of <gy, conv(x, w)> with respect to w, by ``method``
    (no method stops at a NaN or an infinity: False)."""
    nt = get_num_threads()
    return _kernels.conv_wgrad(method, geom, x, gy, gw,
                               _ws("wgrad", method, geom, nt, gw.dtype.itemsize), nt)


def _method_ops(method: str, with_adj: bool = True, with_wgrad: bool = True):
    """forward, grad_input, grad_weight of ``method`` (_plain.ops)."""
    return ops(
        lambda p, x, w, b, out: fwd(method, p.geom(), x, w, b, out),
        (lambda p, y, w, b, out: adj(method, p.geom(), y, w, b, out)) if with_adj else None,
        (lambda p, x, gy, out: wgrad(method, p.geom(), x, gy, out)) if with_wgrad else None)


# im2col + GEMM (GEMM, GEMM_TRANSPOSE) and the in-place 1x1 GEMMs (GEMM_1X1)
IM2COL_OPS = _method_ops("im2col")
GEMM_1X1_OPS = _method_ops("gemm_1x1")


# --------------------------------------------------------------------------
# the adjoint as a forward convolution
# --------------------------------------------------------------------------
def flipped(p) -> ConvParams | None:
    """At stride 1 the adjoint of ``p``'s plain geometry is a forward
    convolution of y with the weight transposed per group and flipped,
    padded by d*(k-1) - pad before: that forward's ConvParams (plain, on
    y's side), or None where it does not exist (a stride above 1, or
    padding beyond the kernel's reach)."""
    batch, groups, c_in, c_out, im, co, k, stride, pad, dil = p.geom()
    if any(s != 1 for s in stride):
        return None
    lead = 3 - p.nsp
    im, co, k, pad, dil = (t[lead:] for t in (im, co, k, pad, dil))
    pb = tuple(d * (kk - 1) - pp for d, kk, pp in zip(dil, k, pad))
    if any(v < 0 for v in pb):
        return None
    # the forward maps co positions to im positions: the padding after that
    # implies (negative: the forward leaves the end of y unread)
    pa = tuple(i - c - b + d * (kk - 1) for i, c, b, d, kk in zip(im, co, pb, dil, k))
    return ConvParams(nsp=p.nsp, transposed=False, batch=batch, c_in=c_out, c_out=c_in,
                      groups=groups, in_size=co, out_size=im, kernel=k, stride=(1,) * p.nsp,
                      pad_before=pb, pad_after=pa, dilation=dil, output_padding=(0,) * p.nsp,
                      dtype=p.dtype)


# The forward form computes every input position from all taps of a padded
# y; col2im only the output positions' products.  Above this ratio of
# input to output positions (a 'valid' convolution of a small image with a
# large kernel) col2im is faster: measured, 2 threads, float32, col2im /
# forward-form time: 2-D 0.92-0.94 at 1.56-1.65 positions, 0.40 at 5.4, 1.08
# at 1.62 (28x28 7x7), 1.35-1.50 at 1.08-1.36; 3-D 1.06 at 1.49, 0.58 at
# 2.37, 0.40 at 3.38; 1-D 0.75-0.79 at 1.14-1.31, 0.17 at 16, 1.09-1.26 at
# 1.0 ('same').  Indexed by "only the last dim is > 1".
_ADJ_MAX_WASTE = {False: 1.6, True: 1.1}


def flip_waste_ok(p) -> bool:
    """Whether the adjoint's forward form wastes little enough work on
    ``p`` (the default choice's rule)."""
    g = p.geom()
    im, co = g[4], g[5]
    return im[0] * im[1] * im[2] <= _ADJ_MAX_WASTE[im[0] == 1 and im[1] == 1] * co[0] * co[1] * co[2]


def flipped_weight(geom, w) -> tuple[np.ndarray, bool]:
    """The weight of the adjoint as a forward: per group, the channel axes
    swapped and the taps reversed, (c_in, c_out // groups, *k), by
    src/gemm/weight_adjoint.c (NumPy's copy of the reversed view took 6.6 ms for a
    512x512x3x3 weight, the C loop 1.4); and whether it is all finite
    (taps of one: not looked at, True)."""
    batch, groups, c_in, c_out, im, co, k, stride, pad, dil = geom
    cog, cig = c_out // groups, c_in // groups
    kk = k[0] * k[1] * k[2]
    w = np.ascontiguousarray(w)
    # from the freed-result cache: a fresh 9 MiB array (512x512x3x3) faulted
    # its pages in on every call, 0.8-1.9 ms beside the copy's 1.4
    w2 = result_empty(np, (c_in, cog) + tuple(k), w.dtype)
    finite = _nhwc.weight_adjoint(groups, cog, cig, kk, w.dtype.itemsize,
                                  w.reshape(-1).view(np.uint8), w2.reshape(-1).view(np.uint8),
                                  get_num_threads())
    return w2, finite


def adj_as_fwd(method: str, p, y, w, b, x) -> bool:
    """x = conv_adjoint(y, w) + b of ``p``'s plain geometry, as the forward
    ``flipped(p)`` by ``method``.  True (x unwritten or partly written) when
    a NaN or infinite weight meets the forward's zero padding, whose
    products the adjoint (and PyTorch) does not have: 0 * inf would be NaN
    there (a fuzz against torch: conv_transpose1d(ones((1, 1, 2)),
    [[[1, inf]]], padding=2, dilation=3) gave [[[nan]]], torch [[[0.]]]);
    or when Winograd stopped at one."""
    p2 = flipped(p)
    w2, finite = flipped_weight(p.geom(), w)
    if not finite and any(v > 0 for v in p2.pad_before + p2.pad_after):
        return True
    return fwd(method, p2.geom(), y, w2, b, x)


def gemm_method(member, method: str, refusal, wgrad: bool = False):
    """``(supports, wanted)`` of a GEMM-family method that computes the
    plain forward (C method ``method``) and the adjoint at stride 1 as the
    forward of the flipped weight (IMPLICIT_GEMM, WINOGRAD_3X3, SHIFT), and
    with ``wgrad`` its own weight gradient.  ``refusal(p, kind)`` words why
    the C predicate said no for the forward (kind 'fwd') or the weight
    gradient ('wgrad')."""
    from .._dispatch import select

    name = member.name

    def supports(q) -> str | None:
        why = check_cpu(q, name) or check_real(q, name)
        if why:
            return why
        p, kind, nt = q.p, q.kind, get_num_threads()
        if kind == "wgrad" and not wgrad:
            return f"{name} has no weight gradient"
        geom = p.geom()
        if kind == "adj":
            p2 = flipped(p)
            if p2 is None:
                return (f"{name} runs the adjoint (grad_input, transposed forward) as a forward at "
                        f"stride 1 with padding within the kernel's reach, not stride {p.stride}, "
                        f"padding {p.pad_before}")
            geom, kind = p2.geom(), "fwd"
        if not _kernels.applies(kind, method, geom, nt, elsize(p)):
            return refusal(p, kind)
        return None

    def wanted(q) -> bool:
        p, kind = q.p, q.kind
        if kind == "adj":
            return flip_waste_ok(p) and select(q._replace(p=flipped(p), op="forward",
                                                          channels_last=False))[0] is member
        return _kernels.wanted(kind, method, p.geom(), get_num_threads(), elsize(p))

    return supports, wanted


def flip_nonfinite(p) -> str | None:
    """The ``nonfinite`` rule of the adjoint run as a forward: 'data' when
    the forward pads (a non-finite weight times its zero padding)."""
    p2 = flipped(p)
    return "data" if p2 is not None and any(v > 0 for v in p2.pad_before + p2.pad_after) else None
