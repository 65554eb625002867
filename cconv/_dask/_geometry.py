"""Chunk arithmetic of a convolution, one spatial dimension at a time.

Every convolution is seen here as a *plain* convolution along each spatial
dimension (``Axis``): output ``o`` reads input ``o*s - pb + t*d`` for taps
``t < k``.  A transposed convolution is the adjoint of one: its input is the
plain output and its result the plain input, with ``pb = padding`` and
``pa = padding - output_padding`` (which may be negative: the last inputs
are then read by no output).

Two directions of computing a chunk:

* *forward*: a chunk ``[o0, o1)`` of plain outputs reads the plain-input
  window of ``fwd_window`` (zero padding outside the array), e.g. a plain
  forward, a plain weight gradient, or a transposed convolution's input
  gradient;
* *adjoint*: a chunk ``[a0, a1)`` of plain inputs receives from the plain
  outputs of ``adj_window``, computed as a local problem whose input frame
  covers the chunk, e.g. a transposed forward or a plain input gradient.

Chunk boundaries are lists ``[0, b1, ..., n]`` of increasing positions.
Nothing here imports dask.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

__all__ = [
    "Axis", "axes_of", "bounds", "out_bounds", "in_bounds", "fwd_window", "adj_window",
    "FwdWindow", "AdjWindow", "group_bounds", "merged", "fwd_halo", "adj_halo",
]


@dataclass(frozen=True)
class Axis:
    """One spatial dimension of a plain convolution (see the module doc)."""

    stride: int
    pad_before: int
    pad_after: int
    dilation: int
    kernel: int
    n_in: int
    n_out: int

    @property
    def reach(self) -> int:
        """dilation * (kernel - 1): how far past its first input an output reads."""
        return self.dilation * (self.kernel - 1)


def axes_of(p) -> tuple[Axis, ...]:
    """The plain-convolution view of each spatial dimension of ``ConvParams`` ``p``."""
    res = []
    for i in range(p.nsp):
        if p.transposed:
            res.append(Axis(p.stride[i], p.pad_before[i], p.pad_before[i] - p.output_padding[i],
                            p.dilation[i], p.kernel[i], p.out_size[i], p.in_size[i]))
        else:
            res.append(Axis(p.stride[i], p.pad_before[i], p.pad_after[i], p.dilation[i],
                            p.kernel[i], p.in_size[i], p.out_size[i]))
    return tuple(res)


def bounds(chunks: Sequence[int]) -> list[int]:
    """Chunk sizes -> boundaries ``[0, c0, c0 + c1, ..., total]``."""
    b = [0]
    for c in chunks:
        b.append(b[-1] + int(c))
    return b


def _dedup(cands: Sequence[int], n: int) -> list[int]:
    """``[0, *cands, n]`` clipped to ``[0, n]``, strictly increasing (empty
    chunks dropped)."""
    res = [0]
    for c in cands:
        c = min(max(int(c), 0), n)
        if c > res[-1]:
            res.append(c)
    if n > res[-1]:
        res.append(n)
    return res


def out_bounds(in_b: Sequence[int], ax: Axis) -> list[int]:
    """Plain-output chunk boundaries for plain-input boundaries ``in_b``: an
    output ``o`` belongs to the input chunk holding position ``o * stride``,
    so output boundaries are input boundaries divided by the stride, rounded
    up (at stride 1 and 'same' padding the chunks are the input's)."""
    s = ax.stride
    return _dedup([-(-a // s) for a in in_b[1:-1]], ax.n_out)


def in_bounds(out_b: Sequence[int], ax: Axis) -> list[int]:
    """Plain-input chunk boundaries for plain-output boundaries ``out_b``
    (the inverse of ``out_bounds``: output boundary times the stride); the
    chunks of a transposed convolution's result."""
    return _dedup([o * ax.stride for o in out_b[1:-1]], ax.n_in)


class FwdWindow(NamedTuple):
    """The plain inputs read by a chunk of plain outputs: positions
    ``[r0, r1)`` of the array, ``lpad`` zeros before and ``rpad`` after
    (outside the array)."""

    r0: int
    r1: int
    lpad: int
    rpad: int


def fwd_window(o0: int, o1: int, ax: Axis) -> FwdWindow:
    """The window of plain inputs that plain outputs ``[o0, o1)`` read:
    ``[o0*s - pb, (o1 - 1)*s - pb + reach + 1)``, split into the part inside
    the array and the zero padding on either side."""
    w0 = o0 * ax.stride - ax.pad_before
    w1 = (o1 - 1) * ax.stride - ax.pad_before + ax.reach + 1
    r0 = min(max(w0, 0), ax.n_in)
    r1 = min(max(w1, r0), ax.n_in)
    lpad = max(0, min(w1, 0) - w0)
    rpad = max(0, w1 - max(w0, ax.n_in))
    return FwdWindow(r0, r1, lpad, rpad)


class AdjWindow(NamedTuple):
    """A local problem for a chunk ``[a0, a1)`` of plain inputs: the plain
    outputs ``[o0, o1)`` that reach it, and a plain convolution of local
    input length ``length`` with symmetric padding ``pad`` whose outputs are
    exactly those (its transposed twin needs ``output_padding``); the local
    input covers positions ``[g0, g0 + length)``, which holds every position
    of the chunk that any of the outputs reaches (the rest of the chunk
    receives nothing)."""

    o0: int
    o1: int
    pad: int
    length: int
    g0: int
    output_padding: int


def adj_window(a0: int, a1: int, ax: Axis) -> AdjWindow | None:
    """The ``AdjWindow`` of plain inputs ``[a0, a1)``, or None when no output
    reaches them (possible when the stride exceeds the kernel's reach)."""
    s, pb, reach = ax.stride, ax.pad_before, ax.reach
    if a0 == 0 and a1 == ax.n_in:
        # the whole dimension: the problem's own geometry where it is one
        # (its padding and, transposed, its output_padding pb - pa), which a
        # local problem would match only in value, not in the kernels'
        # order of additions
        op = ax.n_in - ((ax.n_out - 1) * s + reach + 1 - 2 * pb)
        if 0 <= op < s and (ax.pad_after == pb or op == pb - ax.pad_after):
            return AdjWindow(0, ax.n_out, pb, ax.n_in, 0, op)
    o0 = max(0, -(-(a0 + pb - reach) // s))
    o1 = min(ax.n_out, (a1 - 1 + pb) // s + 1)
    if o1 <= o0:
        return None
    c0 = o0 * s - pb                      # first position the outputs read
    c1 = (o1 - 1) * s - pb + reach + 1    # one past the last
    e0, e1 = max(a0, c0), min(a1, c1)     # the part of the chunk they reach
    if e1 <= e0:
        return None
    # the local padding puts the frame's start at a0 where it can; a local
    # input of length L with padding P has (L + 2P - reach - 1) // s + 1
    # outputs, so L lies in [lo, lo + s - 1]
    pad = min(e0 - c0, c1 - e1 + s - 1)
    g0 = c0 + pad
    lo = c1 - c0 - 2 * pad
    length = min(max(a1 - g0, lo, 1), lo + s - 1)
    return AdjWindow(o0, o1, pad, length, g0, length - lo)


def group_bounds(ch_b: Sequence[int], per_group: int, groups: int) -> list[int]:
    """Group boundaries for channel boundaries ``ch_b`` of channels that come
    ``per_group`` to a group: each channel boundary rounded to the nearest
    group boundary (a whole number of groups per chunk)."""
    if groups <= 1 or per_group <= 0:
        return [0, max(groups, 0)] if groups > 0 else [0]
    return _dedup([(c + per_group // 2) // per_group for c in ch_b[1:-1]], groups)


def fwd_halo(ax: Axis) -> int:
    """How far (in input positions) a forward window reaches past its chunk
    on either side: ``padding`` before, ``reach - padding`` after."""
    return max(ax.pad_before, ax.reach - ax.pad_before, 0)


def adj_halo(ax: Axis) -> int:
    """The same for an adjoint window, in output positions (a bound)."""
    return -(-max(ax.pad_before, ax.reach - ax.pad_before, 0) // ax.stride) + 1


def merged(chunks: Sequence[int], size: int) -> tuple[int, ...]:
    """Chunk sizes of an axis with every chunk at least ``size`` (or the
    whole axis): chunks smaller than a window's halo merged with the next
    (the last with the one before), so that a window reads at most three
    chunks along the axis.  Unchanged when no chunk is smaller."""
    chunks = tuple(int(c) for c in chunks)
    if size <= 1 and all(c > 0 for c in chunks) or all(c >= size for c in chunks):
        return chunks
    out: list[int] = []
    acc = 0
    for c in chunks:
        acc += c
        if acc >= max(size, 1):
            out.append(acc)
            acc = 0
    if acc:
        if out:
            out[-1] += acc
        else:
            out.append(acc)
    return tuple(out) if out else chunks
