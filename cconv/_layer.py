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
    padding: int | tuple | str = 0
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

    def pads(self) -> tuple:
        """((before, after), ...) per spatial dimension; ``'same'`` puts the
        odd one after, as PyTorch; ``'valid'`` is none."""
        if self.padding == "valid":
            return ((0, 0),) * self.nsp
        if self.padding == "same":
            d = self.tup(self.dilation)
            tot = [d[i] * (k - 1) for i, k in enumerate(self.kernel)]
            return tuple((t // 2, t - t // 2) for t in tot)
        return tuple((p, p) for p in self.tup(self.padding))

    def out_size(self) -> tuple:
        s, d, op = (self.tup(v) for v in (self.stride, self.dilation, self.output_padding))
        out = []
        for i, (n, (pb, pa)) in enumerate(zip(self.size, self.pads())):
            ext = d[i] * (self.kernel[i] - 1) + 1
            if self.transposed:
                out.append((n - 1) * s[i] - pb - pa + ext + op[i])
            else:
                out.append((n + pb + pa - ext) // s[i] + 1)
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
        """e.g. '4x128x28x28 -> 128 k3x3 p1' (what :func:`parse_spec` reads)."""
        n = self.batch if batch is None else batch
        sz = "x".join(map(str, self.size))
        ks = "x".join(map(str, self.kernel))
        s = f"{n}x{self.c_in}x{sz} -> {self.c_out} k{ks}"
        for tag, v, dflt in (("s", self.stride, 1), ("p", self.padding, 0),
                             ("d", self.dilation, 1), ("g", self.groups, 1),
                             ("op", self.output_padding, 0)):
            if v != dflt and v != (dflt,) * self.nsp:
                s += f" {tag}{'x'.join(map(str, v)) if isinstance(v, tuple) else v}"
        if self.transposed:
            s += " t"
        return s


# --------------------------------------------------------------------------
# layers given by a user: a compact spec or a JSON object
# --------------------------------------------------------------------------
SPEC_HELP = (
    "a layer as 'NxCxHxW COUT kK [sS] [pP|psame|pvalid] [dD] [gG] [opP] [t] [name=NAME]', "
    "e.g. '8x64x56x56 128 k3 p1' (conv2d), '1x256x1000 256 k5 p2 g256' (depthwise conv1d), "
    "'4x256x8x8 128 k4 s2 p1 t' (conv_transpose2d); per-dimension values as AxB; ',' ':' and "
    "'->' also separate (the format the bench prints is accepted)"
)


def _ints(tok: str, what: str, spec: str) -> tuple:
    try:
        vals = tuple(int(v) for v in tok.split("x"))
    except ValueError:
        raise ValueError(f"layer spec {spec!r}: {what} must be an int or AxB.., got {tok!r}") from None
    if any(v < 0 for v in vals):
        raise ValueError(f"layer spec {spec!r}: {what} must not be negative, got {tok!r}")
    return vals


def parse_spec(spec: str, default_name: str | None = None) -> Layer:
    """A :class:`Layer` from a compact spec (see ``SPEC_HELP``).

    ``'8x64x56x56 128 k3 p1'``: batch 8, 64 input channels, 56x56, 128
    output channels, 3x3 kernel, padding 1.  ``ValueError`` names what is
    wrong."""
    toks = spec.replace("->", " ").replace(",", " ").replace(":", " ").split()
    if len(toks) < 3:
        raise ValueError(f"layer spec {spec!r}: expected at least an input shape, the output "
                         f"channels and a kernel, e.g. '8x64x56x56 128 k3 p1'")
    shape = _ints(toks[0], "the input shape", spec)
    if not 3 <= len(shape) <= 5:
        raise ValueError(f"layer spec {spec!r}: the input shape must be N x C x 1 to 3 spatial "
                         f"sizes, got {toks[0]!r}")
    nsp = len(shape) - 2
    try:
        c_out = int(toks[1])
    except ValueError:
        raise ValueError(f"layer spec {spec!r}: the second field is the output channels (an "
                         f"int), got {toks[1]!r}") from None

    def per_dim(tok, what):
        v = _ints(tok, what, spec)
        if len(v) == 1:
            return v[0] if what != "kernel" else v * nsp
        if len(v) != nsp:
            raise ValueError(f"layer spec {spec!r}: {what} {tok!r} has {len(v)} values for "
                             f"{nsp} spatial dimension(s)")
        return v

    kw: dict = {}
    name = default_name
    kernel = None
    for t in toks[2:]:
        if t.startswith("name="):
            name = t[5:]
        elif t in ("t", "transposed"):
            kw["transposed"] = True
        elif t in ("psame", "pvalid"):
            kw["padding"] = t[1:]
        elif t.startswith("op"):
            kw["output_padding"] = per_dim(t[2:], "output_padding")
        elif t[:1] in ("k", "s", "p", "d", "g") and len(t) > 1:
            what = {"k": "kernel", "s": "stride", "p": "padding", "d": "dilation",
                    "g": "groups"}[t[0]]
            if what == "kernel":
                kernel = per_dim(t[1:], "kernel")
            elif what == "groups":
                g = _ints(t[1:], "groups", spec)
                if len(g) != 1 or g[0] < 1:
                    raise ValueError(f"layer spec {spec!r}: groups must be one int >= 1, got {t!r}")
                kw["groups"] = g[0]
            else:
                kw[what] = per_dim(t[1:], what)
        else:
            raise ValueError(f"layer spec {spec!r}: unknown field {t!r} (expected kK, sS, pP, dD, "
                             f"gG, opP, t or name=NAME)")
    if kernel is None:
        raise ValueError(f"layer spec {spec!r}: no kernel size (e.g. k3 or k3x3)")
    layer = Layer(name or "", shape[0], shape[1], c_out, tuple(shape[2:]), tuple(kernel), **kw)
    if not layer.name:
        layer = Layer(**{**layer.__dict__, "name": layer.describe().replace(" ", "")[:40]})
    return layer


_FIELDS = ("name", "batch", "c_in", "c_out", "size", "kernel", "stride", "padding", "dilation",
           "groups", "transposed", "output_padding", "note")


def from_dict(d: dict, default_name: str | None = None) -> Layer:
    """A :class:`Layer` from a JSON object: ``{"spec": "..."}`` (optionally
    with a "name"), or the Layer's fields (lists for tuples)."""
    if not isinstance(d, dict):
        raise ValueError(f"a layer must be a JSON object, got {type(d).__name__}")
    if "spec" in d:
        return parse_spec(str(d["spec"]), d.get("name", default_name))
    unknown = set(d) - set(_FIELDS)
    if unknown:
        raise ValueError(f"layer {d.get('name', default_name)!r}: unknown field(s) "
                         f"{', '.join(sorted(unknown))}; expected 'spec' or {', '.join(_FIELDS)}")
    missing = [f for f in ("batch", "c_in", "c_out", "size", "kernel") if f not in d]
    if missing:
        raise ValueError(f"layer {d.get('name', default_name)!r}: missing field(s) {', '.join(missing)}")
    kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()}
    kw.setdefault("name", default_name or "layer")
    return Layer(**kw)
