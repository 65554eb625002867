"""The default method the dispatcher picks among the dense GEMM-family
methods (what the plain forward and weight gradient of a non-depthwise
convolution run), in the short names the kernel tests use."""
from __future__ import annotations

import numpy as np

import cconv
from cconv import Backend, _dispatch
from cconv._dispatch import Problem

SHORT = {
    Backend.GEMM_1X1: "gemm",
    Backend.GEMM: "im2col",
    Backend.IMPLICIT_GEMM: "igemm",
    Backend.WINOGRAD_3X3: "winograd",
    Backend.SHIFT: "shift",
}


def _pick(p, op, nthreads, elsize):
    p = p.with_dtype(np.float32 if elsize == 4 else np.float64)
    q = Problem(p, np, op)
    old = cconv.get_num_threads()
    cconv.set_num_threads(nthreads)
    try:
        for b in _dispatch.ORDER:
            if b in SHORT and _dispatch.why_not(b, q) is None:
                mod = _dispatch.backend_module(b)
                if getattr(mod, "wanted", lambda q: True)(q):
                    return SHORT[b]
    finally:
        cconv.set_num_threads(old)
    raise AssertionError("no GEMM-family method")


def fwd_method(p, nthreads: int, elsize: int) -> str:
    """'gemm' (1x1 in place), 'im2col', 'shift', 'igemm' or 'winograd': the
    method the default choice runs the plain forward of ``p`` with."""
    return _pick(p, "forward", nthreads, elsize)


def wgrad_method(p, nthreads: int, elsize: int) -> str:
    """'igemm', 'shift', 'gemm' (1x1 in place) or 'im2col' for the weight gradient."""
    return _pick(p, "grad_weight", nthreads, elsize)
