"""Gradients on dask arrays: convolution_backward, the cconv.grad helpers and
convolution_double_backward, all lazy.

* grad_input has the input's chunks (when the input is given as a dask
  array; else chunks derived from grad_output's, as a forward would map
  them back).  A block runs the local input gradient of the grad_output
  window that reaches it: a plain convolution's as the adjoint
  (``_geometry.adj_window``), a transposed one's as a forward window.
* grad_weight is a sum over blocks of the convolution's outputs (plain:
  grad_output's blocks; transposed: the input's), each a local weight
  gradient; grad_bias a sum over grad_output's blocks.  The partial sums
  are added by a tree of tasks whose order of additions the graph fixes
  (``_graph.tree_sum``): the result does not depend on the scheduler, the
  number of workers or the order in which blocks finish.
"""
from __future__ import annotations

import itertools

import numpy as np

from .._args import check_dtypes, compute_dtype
from .._backward import _bias_channels, _check_forced, _fmt, _params, backward_core, check_output_mask
from .._dispatch import Problem, select
from . import _args, _graph, _tasks
from ._forward import forward_graph, frame_place, pad_args
from ._geometry import (adj_halo, adj_window, axes_of, bounds, fwd_halo, fwd_window, group_bounds, in_bounds,
                        out_bounds)

__all__ = ["backward", "core", "helper_input", "helper_weight", "double_backward", "grad_input_graph",
           "grad_weight_graph", "grad_bias_graph"]


def _token(*parts) -> str:
    from dask.base import tokenize

    return tokenize(*parts)


# --------------------------------------------------------------------------
# entry points
# --------------------------------------------------------------------------
def backward(fn, grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
             output_padding, groups, output_mask, backend):
    """convolution_backward when an argument is a dask array."""
    a = _args.arrays(fn, None, spatial_from={"grad_output": 2, "input": 2}, grad_output=grad_output,
                     input=input, weight=weight)
    for name in ("grad_output", "input", "weight"):
        if a[name] is None:
            raise TypeError(f"{fn}: {name} must be an array, not None")
    gy, x, w = a["grad_output"], a["input"], a["weight"]
    return core(fn, gy, x, tuple(x.shape), w, tuple(w.shape), bias_sizes, stride, padding, dilation,
                transposed, output_padding, groups, output_mask, backend)


def helper_input(fn, nsp, input_size, weight, grad_output, stride, padding, dilation, groups, backend):
    """cconv.grad.convNd_input when weight or grad_output is a dask array."""
    from ..grad import _size_arg

    a = _args.arrays(fn, None, spatial_from={"grad_output": 2}, weight=weight, grad_output=grad_output)
    w, gy = a["weight"], a["grad_output"]
    if w is None or gy is None:
        raise TypeError(f"{fn}: weight and grad_output must be arrays, not None")
    shape = _size_arg(fn, "input_size", input_size, nsp)
    return core(fn, gy, None, shape, w, tuple(w.shape), None, stride, padding, dilation, False, 0, groups,
                (True, False, False), backend)[0]


def helper_weight(fn, nsp, input, weight_size, grad_output, stride, padding, dilation, groups, backend):
    """cconv.grad.convNd_weight when input or grad_output is a dask array."""
    from ..grad import _size_arg

    a = _args.arrays(fn, None, spatial_from={"grad_output": 2, "input": 2}, input=input,
                     grad_output=grad_output)
    x, gy = a["input"], a["grad_output"]
    if x is None or gy is None:
        raise TypeError(f"{fn}: input and grad_output must be arrays, not None")
    shape = _size_arg(fn, "weight_size", weight_size, nsp)
    return core(fn, gy, x, tuple(x.shape), None, shape, None, stride, padding, dilation, False, 0, groups,
                (False, True, False), backend)[1]


def core(fn, gy, x, x_shape, w, w_shape, bias_sizes, stride, padding, dilation, transposed,
         output_padding, groups, output_mask, backend):
    """``_backward.backward_core`` for arrays some of which are dask arrays;
    ``x`` (or ``w``) may be None when only its shape is known and its
    gradient partner is masked out."""
    mask = check_output_mask(fn, output_mask)
    dt = check_dtypes(fn, grad_output=gy, input=x, weight=w)
    p = _params(fn, x_shape, w_shape, bias_sizes, stride, padding, dilation, transposed, output_padding,
                groups, tuple(gy.shape), dt)
    if not any(mask):
        return None, None, None
    if backend is not None and (mask[0] or mask[1]):
        _check_forced(p.with_dtype(compute_dtype(dt)), np, backend, mask[0], mask[1])
    if _args.is_empty(x_shape, w_shape, gy.shape):
        # nothing flows: grad_input is zeros (lazy, chunked as the input),
        # the others small; the NumPy path's on stand-ins (nothing read)
        from . import stand_ins

        gyn, xn, wn = stand_ins(gy, x, w)
        _, gw, gb = backward_core(fn, np, gyn, xn, x_shape, wn, w_shape, bias_sizes, stride, padding,
                                  dilation, transposed, output_padding, groups, (False, mask[1], mask[2]),
                                  backend)
        gi = None
        if mask[0]:
            gi = _zeros(x_shape, dt, x)
        return gi, None if gw is None else _args.as_dask(gw), None if gb is None else _args.as_dask(gb)
    x_chunks = x.chunks if _args.is_dask(x) else None
    gyd, xd = _args.as_dask(gy), _args.as_dask(x)
    gi = gw = gb = None
    if mask[0]:
        gi = grad_input_graph(p, gyd, w, x_chunks, backend)
    if mask[1]:
        gw = grad_weight_graph(p, gyd, xd, w_shape, backend, by_outer=_by_outer(p, gy, x))
    if mask[2]:
        gb = grad_bias_graph(p, gyd, _bias_channels(p, w_shape))
    return gi, gw, gb


# --------------------------------------------------------------------------
# the three graphs
# --------------------------------------------------------------------------
def _by_outer(p, gy, x) -> bool:
    """Whether a weight gradient takes its blocks from the plain-output side
    (grad_output, or a transposed convolution's input): when that side was
    given as a dask array, or the other was not."""
    outer, inner = (x, gy) if p.transposed else (gy, x)
    return _args.is_dask(outer) or not _args.is_dask(inner)


def _channel_plan(p, c0: int, c1: int):
    """For input channels [c0, c1): (first group, end group, weight rows,
    weight columns or None, local groups, local input channels, channel
    crop of the local result or None)."""
    G = p.groups
    cig, cog = p.c_in // G, p.c_out // G
    g0, g1 = c0 // cig, -(-c1 // cig)
    if g1 - g0 == 1 and c1 - c0 < cig:   # part of one group: those weight columns alone
        if p.transposed:
            return g0, g1, slice(c0, c1), None, 1, c1 - c0, None
        return g0, g1, slice(g0 * cog, g1 * cog), slice(c0 - g0 * cig, c1 - g0 * cig), 1, c1 - c0, None
    rows = slice(g0 * cig, g1 * cig) if p.transposed else slice(g0 * cog, g1 * cog)
    crop = None
    if c0 != g0 * cig or c1 != g1 * cig:
        crop = slice(c0 - g0 * cig, c1 - g0 * cig)
    return g0, g1, rows, None, g1 - g0, (g1 - g0) * cig, crop


def grad_input_graph(p, gy, w, x_chunks, backend, name=None):
    """grad_input of ``p`` for the dask array ``gy`` (grad_output) and weight
    ``w``, chunked as ``x_chunks`` (None: derived from gy's chunks)."""
    axes = axes_of(p)
    G = p.groups
    cig, cog = p.c_in // G, p.c_out // G
    gy = _graph.at_least(gy, {2 + i: fwd_halo(ax) if p.transposed else adj_halo(ax) for i, ax in enumerate(axes)})
    gyb = [bounds(c) for c in gy.chunks]
    if x_chunks is not None:
        xb = [bounds(c) for c in x_chunks]
    else:
        # from grad_output's chunks, as a forward maps the input's onto it
        cb = [g * cig for g in group_bounds(gyb[1], cog, G)] if G > 1 else [0, p.c_in]
        if p.transposed:
            spb = [out_bounds(gyb[2 + i], ax) for i, ax in enumerate(axes)]
        else:
            spb = [in_bounds(gyb[2 + i], ax) for i, ax in enumerate(axes)]
        xb = [gyb[0], cb] + spb
    wref, wdep = _graph.single(w, "cconv-weight")
    if name is None:
        name = "cconv-grad-input-" + _token(gy.name, wdep.name, repr(p), str(backend), xb)
    layer: dict = {}
    reader = _graph.Reader(gy, name, layer)
    sp = xb[2:]
    if p.transposed:
        wins = [[fwd_window(lo, hi, ax) for lo, hi in zip(s, s[1:])] for s, ax in zip(sp, axes)]
    else:
        wins = [[adj_window(lo, hi, ax) for lo, hi in zip(s, s[1:])] for s, ax in zip(sp, axes)]
    for bi, (n0, n1) in enumerate(zip(xb[0], xb[0][1:])):
        for ci, (c0, c1) in enumerate(zip(xb[1], xb[1][1:])):
            g0, g1, wrows, wcols, gl, cl, crop = _channel_plan(p, c0, c1)
            cspan = (g0 * cog, g1 * cog, 0, 0)
            lead_src = (slice(None), slice(None) if crop is None else crop)
            for sidx in itertools.product(*(range(len(s) - 1) for s in sp)):
                key = (name, bi, ci) + sidx
                ws = [wins[d][j] for d, j in enumerate(sidx)]
                blk = [(sp[d][j], sp[d][j + 1]) for d, j in enumerate(sidx)]
                shape = (n1 - n0, c1 - c0) + tuple(hi - lo for lo, hi in blk)
                common = dict(transposed=p.transposed, stride=p.stride, dilation=p.dilation, groups=gl,
                              backend=backend, wrows=wrows, wcols=wcols, brows=slice(0, 0))
                if p.transposed:
                    pad, extra = pad_args(ws, axes, allow_same=False)
                    spans = [(n0, n1, 0, 0), cspan] + [(wd.r0, wd.r1, e[0], e[1]) for wd, e in zip(ws, extra)]
                    parts, cut = reader.read(spans)
                    loc = _tasks.Local(padding=pad, output_padding=(0,) * p.nsp,
                                       in_shape=(n1 - n0, cl) + tuple(hi - lo for lo, hi in blk), **common)
                    place = None
                    if crop is not None:
                        place = _tasks.Place(shape, lead_src, (slice(None),) * len(shape))
                    layer[key] = _graph.Task(key, _tasks.grad_input_block, loc, place, wref, parts, cut)
                    continue
                if any(wd is None for wd in ws):   # no output reaches the block
                    loc = _tasks.Local(padding=0, output_padding=(0,) * p.nsp, **common)
                    layer[key] = _graph.Task(key, _tasks.grad_input_block, loc, _tasks.Place(shape, (), ()),
                                             wref, _graph.List(), None)
                    continue
                spans = [(n0, n1, 0, 0), cspan] + [(wd.o0, wd.o1, 0, 0) for wd in ws]
                parts, cut = reader.read(spans)
                loc = _tasks.Local(padding=tuple(wd.pad for wd in ws), output_padding=(0,) * p.nsp,
                                   in_shape=(n1 - n0, cl) + tuple(wd.length for wd in ws), **common)
                place = frame_place(shape, blk, ws, 2, lead_src=None if crop is None else lead_src)
                layer[key] = _graph.Task(key, _tasks.grad_input_block, loc, place, wref, parts, cut)
    chunks = [tuple(hi - lo for lo, hi in zip(b, b[1:])) for b in xb]
    reader.finish()
    return _graph.make_array(name, layer, [gy, wdep], chunks, _graph.native(gy.dtype))


def grad_weight_graph(p, gy, x, w_shape, backend, by_outer=True, name=None):
    """grad_weight (of ``w_shape``) for dask arrays ``gy`` and ``x``: a sum
    over blocks of the plain convolution's outputs, added in a fixed order;
    one chunk.  The blocks are those of the plain-output side (grad_output,
    or a transposed convolution's input) when ``by_outer``, else those the
    other side's blocks map to (``_geometry.out_bounds``)."""
    axes = axes_of(p)
    G = p.groups
    cig, cog = p.c_in // G, p.c_out // G
    # the plain-output side (its blocks are the partition) and the plain-input side
    if p.transposed:
        outer, inner, out_c, in_c = x, gy, cig, cog
    else:
        outer, inner, out_c, in_c = gy, x, cog, cig
    inner = _graph.at_least(inner, {2 + i: fwd_halo(ax) for i, ax in enumerate(axes)})
    ob = [bounds(c) for c in outer.chunks]
    ib = [bounds(c) for c in inner.chunks]
    if by_outer:
        sp = ob[2:]
        batch = ob[0]
        gb = group_bounds(ob[1], out_c, G)
    else:
        sp = [out_bounds(ib[2 + i], ax) for i, ax in enumerate(axes)]
        batch = ib[0]
        gb = group_bounds(ib[1], in_c, G)
    if name is None:
        name = "cconv-grad-weight-" + _token(gy.name, x.name, repr(p), tuple(w_shape), str(backend))
    layer: dict = {}
    r_out = _graph.Reader(outer, name + "-o", layer)
    r_in = _graph.Reader(inner, name + "-i", layer)
    wins = [[fwd_window(lo, hi, ax) for lo, hi in zip(s, s[1:])] for s, ax in zip(sp, axes)]
    wrow = cig if p.transposed else cog
    pieces = []
    for gi, (g0, g1) in enumerate(zip(gb, gb[1:])):
        refs = []
        wsh = ((g1 - g0) * wrow, w_shape[1]) + tuple(w_shape[2:])
        for bi, (n0, n1) in enumerate(zip(batch, batch[1:])):
            for sidx in itertools.product(*(range(len(s) - 1) for s in sp)):
                ws = [wins[d][j] for d, j in enumerate(sidx)]
                pad, extra = pad_args(ws, axes, allow_same=not p.transposed)
                o_spans = [(n0, n1, 0, 0), (g0 * out_c, g1 * out_c, 0, 0)] + [
                    (sp[d][j], sp[d][j + 1], 0, 0) for d, j in enumerate(sidx)]
                i_spans = [(n0, n1, 0, 0), (g0 * in_c, g1 * in_c, 0, 0)] + [
                    (wd.r0, wd.r1, e[0], e[1]) for wd, e in zip(ws, extra)]
                oparts, ocut = r_out.read(o_spans)
                iparts, icut = r_in.read(i_spans)
                loc = _tasks.Local(transposed=p.transposed, stride=p.stride, padding=pad, dilation=p.dilation,
                                   output_padding=(0,) * p.nsp, groups=g1 - g0, backend=backend,
                                   wrows=slice(None), wcols=None, brows=slice(0, 0), w_shape=wsh)
                key = (name + "-part", gi, bi) + sidx
                if p.transposed:   # gy is the plain-input side
                    layer[key] = _graph.Task(key, _tasks.grad_weight_part, loc, iparts, icut, oparts, ocut)
                else:
                    layer[key] = _graph.Task(key, _tasks.grad_weight_part, loc, oparts, ocut, iparts, icut)
                refs.append(_graph.TaskRef(key))
        pieces.append(_graph.tree_sum(layer, f"{name}-g{gi}", refs))
    r_out.finish()
    r_in.finish()
    key = (name,) + (0,) * len(w_shape)
    layer[key] = _graph.Task(key, _tasks.finish, _graph.native(gy.dtype), *pieces)
    return _graph.make_array(name, layer, [outer, inner], tuple((int(s),) for s in w_shape),
                             _graph.native(gy.dtype))


def grad_bias_graph(p, gy, nbias: int, name=None):
    """grad_bias (length ``nbias`` = grad_output's channels) of the dask
    array ``gy``: per block cconv's own bias reduction, the blocks of a
    channel chunk added in a fixed order; one chunk."""
    if name is None:
        name = "cconv-grad-bias-" + _token(gy.name)
    layer: dict = {}
    nblk = gy.numblocks
    pieces = []
    for ci in range(nblk[1]):
        refs = []
        for idx in itertools.product(*(range(n) for i, n in enumerate(nblk) if i != 1)):
            bkey = (gy.name, idx[0], ci) + idx[1:]
            key = (name + "-part", idx[0], ci) + idx[1:]
            layer[key] = _graph.Task(key, _tasks.grad_bias_part, _graph.TaskRef(bkey))
            refs.append(_graph.TaskRef(key))
        pieces.append(_graph.tree_sum(layer, f"{name}-c{ci}", refs))
    key = (name, 0)
    layer[key] = _graph.Task(key, _tasks.finish, _graph.native(gy.dtype), *pieces)
    return _graph.make_array(name, layer, [gy], ((int(nbias),),), _graph.native(gy.dtype))


# --------------------------------------------------------------------------
# double backward
# --------------------------------------------------------------------------
def double_backward(ggI, ggW, ggb, gO, weight, input, stride, padding, dilation, transposed, output_padding,
                    groups, output_mask, backend):
    """convolution_double_backward when an argument is a dask array: ggO as
    the lazy forwards of (ggI, W) and (input, ggW) plus ggb, gI and gW as
    the lazy gradients (float16 computed in float32 and narrowed once)."""
    import dask.array as da

    fn = "convolution_double_backward"
    a = _args.arrays(fn, None, spatial_from={"ggI": 2, "gO": 2, "input": 2}, ggI=ggI, ggW=ggW, ggb=ggb,
                     gO=gO, weight=weight, input=input)
    ggI, ggW, ggb, gO, weight, input = (a[k] for k in ("ggI", "ggW", "ggb", "gO", "weight", "input"))
    for name, v in (("gO", gO), ("weight", weight), ("input", input)):
        if v is None:
            raise TypeError(f"{fn}: {name} must be an array, not None")
    check_output_mask(fn, output_mask)
    dt = check_dtypes(fn, gO=gO, input=input, weight=weight, ggI=ggI, ggW=ggW, ggb=ggb)
    x_shape, w_shape = tuple(input.shape), tuple(weight.shape)
    p = _params(fn, x_shape, w_shape, None, stride, padding, dilation, transposed, output_padding, groups,
                tuple(gO.shape), dt)
    nb = _bias_channels(p, w_shape)
    for name, v, want in (("ggI", ggI, x_shape), ("ggW", ggW, w_shape), ("ggb", ggb, (nb,))):
        if v is not None and tuple(v.shape) != want:
            what = {"ggI": "input", "ggW": "weight", "ggb": "bias"}[name]
            raise ValueError(
                f"{fn}: expected {name} of size {_fmt(want)} (the {what}'s size), but got {name} "
                f"of size {_fmt(v.shape)}"
            )
    if backend is not None and (ggI is not None or ggW is not None):
        pc = p.with_dtype(compute_dtype(dt))
        select(Problem(pc, np, "forward", need_backward=True), backend)
        _check_forced(pc, np, backend, ggW is not None, ggI is not None)
    if _args.is_empty(x_shape, w_shape, p.output_shape):
        # the result is empty and nothing flows: gI is zeros (lazy, chunked
        # as the input); the rest the NumPy path's on stand-ins
        from .._backward import convolution_double_backward
        from . import stand_ins

        vals = stand_ins(ggI, None, ggb, gO, weight, input)
        ggO, _, gW = convolution_double_backward(*vals, stride, padding, dilation, transposed, output_padding,
                                                 groups, output_mask, backend=backend)
        gI = None if ggW is None else _zeros(x_shape, dt, input)
        return (None if ggO is None else _args.as_dask(ggO), gI, None if gW is None else _args.as_dask(gW))

    def up(v):
        return v.astype(np.float32) if v is not None and dt == np.float16 else v

    ggO = None
    b = up(ggb)
    for u, v in ((ggI, weight), (input, ggW)):
        if u is None or v is None:
            continue
        t = forward_graph(fn, p, _args.as_dask(up(u)), up(v), b if ggO is None else None, backend)
        ggO = t if ggO is None else ggO + t
    if ggO is None and b is not None:
        gOd = _args.as_dask(gO)
        dto = np.float32 if dt == np.float16 else dt
        ggO = da.zeros(p.output_shape, dtype=dto, chunks=gOd.chunks) + _args.as_dask(b).reshape(
            (1, -1) + (1,) * p.nsp)
    if ggO is not None and ggO.dtype != dt:
        ggO = ggO.map_blocks(_narrow_block, dt, dtype=dt)
    gOd = _args.as_dask(gO)
    x_chunks = input.chunks if _args.is_dask(input) else None
    gI = None if ggW is None else grad_input_graph(p, gOd, ggW, x_chunks, backend)
    gW = None
    if ggI is not None:
        gW = grad_weight_graph(p, gOd, _args.as_dask(ggI), w_shape, backend, by_outer=_by_outer(p, gO, ggI))
    return ggO, gI, gW


def _zeros(shape, dt, like):
    """Lazy zeros of ``shape`` in dtype ``dt``, chunked as ``like`` when it is
    a dask array of that shape."""
    import dask.array as da

    if _args.is_dask(like) and tuple(like.shape) == tuple(shape):
        return da.zeros(shape, dtype=_graph.native(dt), chunks=like.chunks)
    return da.zeros(shape, dtype=_graph.native(dt))


def _narrow_block(a, dt):
    with np.errstate(over="ignore"):
        return a.astype(dt)
