"""EMPTY: problems with nothing to compute (zero batch, zero channels, an
empty result), as ATen's Empty backend."""
from __future__ import annotations

from .._dispatch import Backend

BACKEND = Backend.EMPTY


def _empty(p) -> bool:
    n_out = p.batch * p.c_out
    n_in = p.batch * p.c_in
    for s in p.out_size:
        n_out *= s
    for s in p.in_size:
        n_in *= s
    return n_out == 0 or n_in == 0


def supports(q) -> str | None:
    p = q.p
    if _empty(p):
        return None
    return (
        f"EMPTY runs only convolutions with an empty input or result "
        f"(input {p.input_shape}, output {p.output_shape})"
    )


def forward(p, x, w, b, out) -> None:
    out[...] = 0
    if b is not None and out.size:
        out += b.reshape((1, -1) + (1,) * p.nsp)


def grad_input(p, gy, w, out) -> None:
    out[...] = 0


def grad_weight(p, x, gy, out) -> None:
    out[...] = 0
