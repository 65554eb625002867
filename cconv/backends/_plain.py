"""The three operations of a plain or transposed convolution mapped onto
the plain geometry's fwd, adj and wgrad (src/cconv.h): a transposed
convolution's forward is the plain adjoint, its grad_input the plain
forward, and in its weight gradient the plain input is our grad_output,
the plain output our input.  ``ops(fwd, adj, wgrad)`` builds a backend
module's ``forward``, ``grad_input`` and ``grad_weight`` from functions of
``(p, a, w, b, out)`` and ``(p, x, gy, out)``; each returns what its
kernel returns (True: stopped at a NaN or an infinity)."""
from __future__ import annotations

__all__ = ["ops"]


def _none(*args):  # pragma: no cover - guarded by supports()
    raise NotImplementedError("this method does not compute this operation")


def ops(fwd=None, adj=None, wgrad=None):
    fwd = fwd or _none
    adj = adj or _none
    wgrad = wgrad or _none

    def forward(p, x, w, b, out):
        return (adj if p.transposed else fwd)(p, x, w, b, out)

    def grad_input(p, gy, w, out):
        return (fwd if p.transposed else adj)(p, gy, w, None, out)

    def grad_weight(p, x, gy, out):
        if p.transposed:
            return wgrad(p, gy, x, out)
        return wgrad(p, x, gy, out)

    return forward, grad_input, grad_weight
