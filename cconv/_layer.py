"""One convolution layer of a well-known network, as the benchmarks see it.

Shared by the ``cconv bench`` command (:mod:`cconv.cli`) and the repository's
benchmarks (benches/benchmarks/_cases.py, benches/compare.py), so that both
describe, size and fill a layer the same way.  Only NumPy is imported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layer:
    """A convolution: input ``(batch, c_in, *size)``, weight
    ``(c_out, c_in // groups, *kernel)`` (transposed: ``(c_in, c_out //
    groups, *kernel)``); stride, padding, dilation and output_padding are
    ints or per-dimension tuples."""

    name: str
    batch: int
    c_in: int
    c_out: int
    size: tuple                 # input spatial size
    kernel: tuple
    stride: int | tuple = 1
    padding: int | tuple = 0
    dilation: int | tuple = 1
    groups: int = 1
    transposed: bool = False
    output_padding: int | tuple = 0
    note: str = ""

    @property
    def nsp(self) -> int:
        return len(self.size)

    @property
    def func_name(self) -> str:
        """conv{n}d or conv_transpose{n}d."""
        return f"conv{'_transpose' if self.transposed else ''}{self.nsp}d"

    def tup(self, v) -> tuple:
        """An int or tuple parameter as one value per spatial dimension."""
        return (v,) * self.nsp if isinstance(v, int) else tuple(v)

    def weight_shape(self) -> tuple:
        if self.transposed:
            return (self.c_in, self.c_out // self.groups) + tuple(self.kernel)
        return (self.c_out, self.c_in // self.groups) + tuple(self.kernel)

    def out_size(self) -> tuple:
        s, p, d, op = (self.tup(v) for v in (self.stride, self.padding, self.dilation,
                                             self.output_padding))
        out = []
        for i, n in enumerate(self.size):
            ext = d[i] * (self.kernel[i] - 1) + 1
            if self.transposed:
                out.append((n - 1) * s[i] - 2 * p[i] + ext + op[i])
            else:
                out.append((n + 2 * p[i] - ext) // s[i] + 1)
        return tuple(out)

    def input_shape(self, batch: int | None = None) -> tuple:
        return (self.batch if batch is None else batch, self.c_in) + tuple(self.size)

    def output_shape(self, batch: int | None = None) -> tuple:
        return (self.batch if batch is None else batch, self.c_out) + self.out_size()

    def flops(self, batch: int | None = None) -> int:
        """2 x multiply-adds of the forward convolution (bias not counted)."""
        n = self.batch if batch is None else batch
        k = math.prod(self.kernel)
        if self.transposed:   # every input sample meets every tap once
            return 2 * n * self.c_in * math.prod(self.size) * (self.c_out // self.groups) * k
        return 2 * n * self.c_out * math.prod(self.out_size()) * (self.c_in // self.groups) * k

    def arrays(self, dtype="float32", batch: int | None = None, seed: int = 0):
        """(x, w, b, grad_output) of dtype, standard normal (w scaled by
        1/sqrt(fan_in)), drawn in float64 in that order from ``seed``."""
        dt = np.dtype(dtype)
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(self.input_shape(batch)).astype(dt)
        w = rng.standard_normal(self.weight_shape()).astype(dt)
        w *= dt.type(1.0 / math.sqrt(math.prod(w.shape[1:])))
        b = rng.standard_normal(self.c_out).astype(dt)
        gy = rng.standard_normal(self.output_shape(batch)).astype(dt)
        return x, w, b, gy

    def kwargs(self) -> dict:
        """Keyword arguments of conv{n}d / conv_transpose{n}d (cconv and torch alike)."""
        kw = dict(stride=self.stride, padding=self.padding, dilation=self.dilation,
                  groups=self.groups)
        if self.transposed:
            kw["output_padding"] = self.output_padding
        return kw

    def conv_args(self) -> tuple:
        """(stride, padding, dilation, transposed, output_padding, groups) as
        torch.convolution / convolution_backward take them (tuples)."""
        return (self.tup(self.stride), self.tup(self.padding), self.tup(self.dilation),
                self.transposed, self.tup(self.output_padding), self.groups)

    def describe(self, batch: int | None = None) -> str:
        """e.g. '4x128x28x28 -> 128 k3x3 p1'."""
        n = self.batch if batch is None else batch
        sz = "x".join(map(str, self.size))
        ks = "x".join(map(str, self.kernel))
        s = f"{n}x{self.c_in}x{sz} -> {self.c_out} k{ks}"
        for tag, v, dflt in (("s", self.stride, 1), ("p", self.padding, 0),
                             ("d", self.dilation, 1), ("g", self.groups, 1),
                             ("op", self.output_padding, 0)):
            if v != dflt:
                s += f" {tag}{v}"
        return s
