"""The forward functions on dask arrays: conv1d/2d/3d, conv_transpose1d/2d/3d
and convolution return a lazy dask array.

One task per block of the result.  The result's blocks follow the input's:

* batch: the input's batch chunks;
* channels: chunks of whole groups, the input's channel boundaries rounded
  to group boundaries (one chunk when groups == 1);
* space: a plain convolution's output ``o`` belongs to the input chunk
  holding ``o * stride`` (``_geometry.out_bounds``); a transposed
  convolution's output chunks are its input chunks times the stride
  (``_geometry.in_bounds``).

A plain block reads the input window its outputs reach (the halo:
``padding`` before, ``dilation * (kernel - 1) - padding`` after, zeros past
the array's edges); a transposed block reads the inputs that reach it and
runs a local transposed convolution whose output is the block
(``_geometry.adj_window``).  Any chunking works: a window reads as many
chunks as it overlaps.
"""
from __future__ import annotations

import itertools

import numpy as np

from .._args import compute_dtype, forward_plan
from .._dispatch import Problem, select
from . import _args, _graph, _tasks
from ._geometry import (adj_halo, adj_window, axes_of, bounds, fwd_halo, fwd_window, group_bounds, in_bounds,
                        out_bounds)

__all__ = ["forward", "forward_graph", "pad_args"]


def pad_args(wins, axes, allow_same: bool = True):
    """The padding argument of a local convolution over windows ``wins``
    (``FwdWindow`` per spatial dim) and the zeros to write into the window
    itself, per dim: symmetric padding is passed as it is, 'same' (where
    ``allow_same``: plain convolutions) where the windows' padding is
    exactly 'same''s split, and the rest of an asymmetric padding is
    written as zeros (as is all of it along a dim where the window holds
    nothing of the array)."""
    lr = [(w.lpad, w.rpad) for w in wins]
    empty = [w.r1 == w.r0 for w in wins]
    if not any(empty):
        if all(lo == hi for lo, hi in lr):
            return tuple(lo for lo, _ in lr), [(0, 0)] * len(lr)
        if allow_same and all(ax.stride == 1 and (lo, hi) == (ax.reach // 2, ax.reach - ax.reach // 2)
               for (lo, hi), ax in zip(lr, axes)):
            return "same", [(0, 0)] * len(lr)
    q = [0 if e else min(lo, hi) for (lo, hi), e in zip(lr, empty)]
    return tuple(q), [(lo - qq, hi - qq) for (lo, hi), qq in zip(lr, q)]


def forward(fn, nsp, input, weight, bias, stride, padding, dilation, groups, transposed, output_padding,
            out, backend):
    """``_functional._conv_entry`` for a call with a dask array argument."""
    lay = {}
    if nsp is not None and hasattr(input, "ndim") and input.ndim == nsp + 1:
        lay["input"] = 1
    else:
        lay["input"] = 2
    a = _args.arrays(fn, out, spatial_from=lay, input=input, weight=weight, bias=bias)
    x, w, b = a["input"], a["weight"], a["bias"]
    if x is None or w is None:
        raise TypeError(f"{fn}: input and weight must be arrays")
    plan = forward_plan(fn, nsp, np, x, w, b, stride, padding, dilation, groups, transposed,
                        output_padding)
    p, unbatched = plan.p, plan.unbatched
    dt = np.dtype(x.dtype)
    if backend is not None:
        select(Problem(p.with_dtype(compute_dtype(dt)), np), backend)
    x = _args.as_dask(x)
    if unbatched:
        x = x[None]
    if _args.is_empty(p.input_shape, p.output_shape, w.shape):
        y = _eager(x, w, b, stride, padding, dilation, transposed, output_padding, groups, backend)
    else:
        y = forward_graph(fn, p, x, w, b, backend)
    return y[0] if unbatched else y


def _eager(x, w, b, stride, padding, dilation, transposed, output_padding, groups, backend):
    """A problem with a zero-size array, whose result is empty (a zero
    batch, zero input channels, an empty transposed result): the NumPy
    path's, at the call, on stand-ins for the dask arrays (nothing of them
    is read or computed); the input's batch chunks."""
    import dask.array as da

    from .._functional import convolution
    from . import stand_ins

    y = convolution(*stand_ins(x, w, b), stride, padding, dilation, transposed, output_padding, groups,
                    backend=backend)
    if y.size:   # (not reached: a zero-size array makes the result empty)
        y = convolution(*_args.compute_all(x, w, b), stride, padding, dilation, transposed, output_padding,
                        groups, backend=backend)
    return da.from_array(y, chunks=(x.chunks[0],) + y.shape[1:])


def forward_graph(fn, p, x, w, b, backend, name=None):
    """The lazy forward of ``ConvParams`` ``p`` for a batched dask array ``x``
    and weight/bias ``w``/``b`` (NumPy or dask)."""
    from dask.base import tokenize

    axes = axes_of(p)
    G = p.groups
    cig, cog = p.c_in // G, p.c_out // G
    # chunks smaller than a window's halo: merged with their neighbours
    x = _graph.at_least(x, {2 + i: adj_halo(ax) if p.transposed else fwd_halo(ax) for i, ax in enumerate(axes)})
    xb = [bounds(c) for c in x.chunks]
    gb = group_bounds(xb[1], cig, G)
    wref, wdep = _graph.single(w, "cconv-weight")
    bref, bdep = _graph.single(b, "cconv-bias")
    if name is None:
        name = f"cconv-{fn}-" + tokenize(x.name, wdep.name, None if bdep is None else bdep.name, repr(p),
                                         str(backend))
    layer: dict = {}
    reader = _graph.Reader(x, name, layer)
    if p.transposed:
        sp = [in_bounds(xb[2 + i], ax) for i, ax in enumerate(axes)]
        wins = [[adj_window(lo, hi, ax) for lo, hi in zip(s, s[1:])] for s, ax in zip(sp, axes)]
    else:
        sp = [out_bounds(xb[2 + i], ax) for i, ax in enumerate(axes)]
        wins = [[fwd_window(lo, hi, ax) for lo, hi in zip(s, s[1:])] for s, ax in zip(sp, axes)]
    rows_per_group = cig if p.transposed else cog
    for bi, (n0, n1) in enumerate(zip(xb[0], xb[0][1:])):
        for gi, (g0, g1) in enumerate(zip(gb, gb[1:])):
            cspan = (g0 * cig, g1 * cig, 0, 0)
            for sidx in itertools.product(*(range(len(s) - 1) for s in sp)):
                key = (name, bi, gi) + sidx
                ws = [wins[d][j] for d, j in enumerate(sidx)]
                common = dict(transposed=p.transposed, stride=p.stride, dilation=p.dilation, groups=g1 - g0,
                              backend=backend, wrows=slice(g0 * rows_per_group, g1 * rows_per_group),
                              wcols=None, brows=slice(g0 * cog, g1 * cog))
                if not p.transposed:
                    pad, extra = pad_args(ws, axes)
                    spans = [(n0, n1, 0, 0), cspan] + [
                        (wd.r0, wd.r1, e[0], e[1]) for wd, e in zip(ws, extra)]
                    parts, cut = reader.read(spans)
                    loc = _tasks.Local(padding=pad, output_padding=(0,) * p.nsp, **common)
                    layer[key] = _graph.Task(key, _tasks.forward_block, loc, None, wref, bref, parts, cut)
                    continue
                blk = [(sp[d][j], sp[d][j + 1]) for d, j in enumerate(sidx)]
                shape = (n1 - n0, (g1 - g0) * cog) + tuple(hi - lo for lo, hi in blk)
                if any(wd is None for wd in ws):   # no input reaches the block
                    loc = _tasks.Local(padding=0, output_padding=(0,) * p.nsp, **common)
                    place = _tasks.Place(shape, (), ())
                    layer[key] = _graph.Task(key, _tasks.forward_block, loc, place, wref, bref,
                                             _graph.List(), None)
                    continue
                spans = [(n0, n1, 0, 0), cspan] + [(wd.o0, wd.o1, 0, 0) for wd in ws]
                parts, cut = reader.read(spans)
                loc = _tasks.Local(padding=tuple(wd.pad for wd in ws),
                                   output_padding=tuple(wd.output_padding for wd in ws), **common)
                layer[key] = _graph.Task(key, _tasks.forward_block, loc, frame_place(shape, blk, ws, 2),
                                         wref, bref, parts, cut)
    chunks = (x.chunks[0], tuple((g1 - g0) * cog for g0, g1 in zip(gb, gb[1:]))) + tuple(
        tuple(hi - lo for lo, hi in zip(s, s[1:])) for s in sp)
    reader.finish()
    return _graph.make_array(name, layer, [x, wdep, bdep], chunks, _graph.native(x.dtype))


def frame_place(shape, blk, ws, lead: int, lead_src=None, lead_dst=None):
    """The ``Place`` of a local result whose spatial frames are the
    ``AdjWindow``s ``ws`` in a block of ``shape`` spanning ``blk`` (per
    spatial dim (a0, a1)); None when every frame is the block (and the
    leading ``lead`` axes are taken whole)."""
    exact = all(wd.g0 == a0 and wd.length == a1 - a0 for wd, (a0, a1) in zip(ws, blk))
    if exact and lead_src is None:
        return None
    src = tuple(lead_src) if lead_src is not None else (slice(None),) * lead
    dst = tuple(lead_dst) if lead_dst is not None else (slice(None),) * lead
    for wd, (a0, a1) in zip(ws, blk):
        lo, hi = max(a0, wd.g0), min(a1, wd.g0 + wd.length)
        src += (slice(lo - wd.g0, hi - wd.g0),)
        dst += (slice(lo - a0, hi - a0),)
    return _tasks.Place(shape, src, dst)
