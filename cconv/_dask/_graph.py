"""Building the task graphs: windows cut from the chunks of a source array,
a single task holding a weight, fixed-order tree sums, the result array.

A block task reads a *window* of a source array: per dimension a range
``[r0, r1)`` of the array plus ``lpad``/``rpad`` zeros outside it.  The
window is assembled inside the task from the source blocks it overlaps;
the small parts of a block that neighbouring windows need (halo strips)
are first copied out by one task per block, so that the whole block need
not stay in memory until every reader has run (as dask's own overlap cuts
its strips), and a 2-D chunk grid costs one strip task per block, not
eight.
"""
from __future__ import annotations

import bisect
import itertools
import math
from typing import NamedTuple, Sequence

import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph
from dask.task_spec import List, Task, TaskRef

import dask.array as da

from ._geometry import bounds, merged

__all__ = ["Cut", "Reader", "single", "at_least", "native", "make_array", "tree_sum", "add_in_order", "assemble"]


class Cut(NamedTuple):
    """How a task assembles one window from its ``parts`` (a list of source
    blocks or of a block's cut strips): ``layout[i] = (src, dst, pick)``:
    the part is ``parts[i][pick]`` (a block's strips come as one tuple) or
    ``parts[i]`` (pick None), of which the slices ``src`` (None: all of it)
    fill the slices ``dst`` of the window; the window's ``shape`` and
    ``dtype``; ``padded``: whether it holds zeros (padding) anywhere."""

    layout: tuple
    shape: tuple
    dtype: np.dtype
    padded: bool


def cut_parts(block, srcs):
    """Copies of ``block[s]`` for each slice tuple ``s`` (the halo strips
    that neighbouring windows need), so the block can be freed."""
    return tuple(np.array(block[s], copy=True) for s in srcs)


class Reader:
    """Cuts windows from a dask array ``src`` for the tasks of one layer.
    The small parts of a block that windows need (halo strips) are copied
    by one task per block, which ``finish`` puts into ``layer``."""

    def __init__(self, src, name: str, layer: dict):
        self.src = src
        self.bounds = [bounds(c) for c in src.chunks]
        self.name = f"{name}-cut-{src.name}"
        self.layer = layer
        self.cuts: dict = {}     # block index -> (key, {slices: pick}, [slices])

    def _cut(self, idx: tuple, src: tuple):
        """(key of the block's strips task, pick) for the strip ``src``."""
        entry = self.cuts.get(idx)
        if entry is None:
            entry = self.cuts[idx] = ((self.name, len(self.cuts)), {}, [])
        key, picks, order = entry
        sk = tuple((c.start, c.stop) for c in src)   # (slices hash from 3.12 only)
        pick = picks.get(sk)
        if pick is None:
            pick = picks[sk] = len(order)
            order.append(src)
        return key, pick

    def read(self, spans: Sequence[tuple]) -> tuple[List, Cut]:
        """The parts (``List`` of TaskRefs) and ``Cut`` of the window with
        ``spans[dim] = (r0, r1, lpad, rpad)``."""
        per_dim = []
        shape = []
        padded = False
        for b, (r0, r1, lp, rp) in zip(self.bounds, spans):
            shape.append(lp + (r1 - r0) + rp)
            padded = padded or lp > 0 or rp > 0
            items = []
            if r1 > r0:
                j = bisect.bisect_right(b, r0) - 1
                while j < len(b) - 1 and b[j] < r1:
                    lo, hi = max(r0, b[j]), min(r1, b[j + 1])
                    if hi > lo:
                        whole = lo == b[j] and hi == b[j + 1]
                        items.append((j, slice(lo - b[j], hi - b[j]), slice(lp + lo - r0, lp + hi - r0),
                                      whole, hi - lo, b[j + 1] - b[j]))
                    j += 1
            per_dim.append(items)
        refs, layout = [], []
        if all(per_dim):
            for combo in itertools.product(*per_dim):
                idx = tuple(c[0] for c in combo)
                src = tuple(c[1] for c in combo)
                dst = tuple(c[2] for c in combo)
                key = (self.src.name,) + idx
                if all(c[3] for c in combo):
                    refs.append(TaskRef(key))
                    layout.append((None, dst, None))
                elif 2 * math.prod(c[4] for c in combo) <= math.prod(c[5] for c in combo):
                    ck, pick = self._cut(idx, src)
                    refs.append(TaskRef(ck))
                    layout.append((None, dst, pick))
                else:
                    refs.append(TaskRef(key))
                    layout.append((src, dst, None))
        else:
            padded = True   # nothing of the array: all padding
        return List(*refs), Cut(tuple(layout), tuple(shape), np.dtype(self.src.dtype), padded)

    def finish(self) -> None:
        """Put the strip-cutting tasks into the layer."""
        for idx, (key, _, order) in self.cuts.items():
            self.layer[key] = Task(key, cut_parts, TaskRef((self.src.name,) + idx), tuple(order))


def assemble(parts, cut: Cut):
    """The window ``cut`` describes, from its parts (a view where one part
    is the whole window)."""
    if len(parts) == 1 and not cut.padded:
        src, dst, pick = cut.layout[0]
        a = parts[0] if pick is None else parts[0][pick]
        if all(d.start == 0 and d.stop == n for d, n in zip(dst, cut.shape)):
            return a if src is None else a[src]
    out = (np.zeros if cut.padded else np.empty)(cut.shape, dtype=cut.dtype)
    for a, (src, dst, pick) in zip(parts, cut.layout):
        if pick is not None:
            a = a[pick]
        out[dst] = a if src is None else a[src]
    return out


def single(a, name: str):
    """(TaskRef, dask array) of one task holding all of ``a`` (a NumPy or
    dask array): a weight or bias computed once and handed to every task
    that reads it.  (None, None) for None."""
    if a is None:
        return None, None
    if not hasattr(a, "dask"):
        a = da.from_array(a, chunks=a.shape, name=f"{name}-{tokenize(a)}")
    elif any(n != 1 for n in a.numblocks):
        a = a.rechunk(a.shape)
    return TaskRef((a.name,) + (0,) * a.ndim), a


def at_least(a, sizes: dict):
    """``a`` rechunked so that along each axis ``i`` of ``sizes`` every chunk
    holds at least ``sizes[i]`` positions (``_geometry.merged``); ``a``
    itself when it already does."""
    new = tuple(merged(c, sizes[i]) if i in sizes else c for i, c in enumerate(a.chunks))
    return a if new == a.chunks else a.rechunk(new)


def native(dtype) -> np.dtype:
    """``dtype`` in the machine's byte order (results are, as on NumPy)."""
    return np.dtype(dtype).newbyteorder("=")


def make_array(name: str, layer: dict, deps: list, chunks, dtype):
    """The dask array of the tasks ``layer`` (keys ``(name, *block index)``)."""
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[d for d in deps if d is not None])
    meta = np.empty((0,) * len(chunks), dtype=dtype)
    return da.Array(graph, name, tuple(tuple(int(c) for c in cs) for cs in chunks), meta=meta)


def add_in_order(index, *parts):
    """parts[0] + parts[1] + ... in this order (``parts[i][index]`` when
    ``index`` is not None): a fixed summation order whatever the scheduler;
    NaN and inf as the sums make them, without NumPy's warnings."""
    arrs = [p if index is None else p[index] for p in parts]
    if len(arrs) == 1:
        return arrs[0]
    acc = np.array(arrs[0], copy=True)
    with np.errstate(invalid="ignore", over="ignore"):
        for a in arrs[1:]:
            acc += a
    return acc


def tree_sum(layer: dict, name: str, refs: list, index=None, fan: int = 8) -> TaskRef:
    """A TaskRef to the sum of ``refs`` (their ``[index]`` item when index is
    not None), a tree of ``add_in_order`` tasks of at most ``fan`` operands
    over the refs in the order given: the order of every addition is fixed
    by the graph."""
    level = 0
    cur = list(refs)
    while True:
        nxt = []
        for i in range(0, len(cur), fan):
            key = (f"{name}-sum{level}", len(nxt))
            layer[key] = Task(key, add_in_order, index if level == 0 else None, *cur[i:i + fan])
            nxt.append(TaskRef(key))
        cur, level = nxt, level + 1
        if len(cur) == 1:
            return cur[0]
