# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin nogil wrappers over the depthwise 3x3 Winograd F(2x2,3x3) kernels
(src/winograd/wdw.h): float32 forward only (inference).

Array arguments are flattened, C-contiguous float32 NumPy arrays; ``geom``
is the tuple ``ConvParams.geom()`` returns (the plain convolution, padded to
three spatial dims).  Sizes are checked against ``geom`` before any kernel
runs.  The instruction set is chosen once, at import, from the CPU (or
``CCONV_SIMD=scalar|avx2|avx512|neon``); ``set_isa`` forces one (for tests;
not while kernels run in other threads).
"""

from libc.stdint cimport int64_t

cimport numpy as cnp

from ._arrays cimport ARR_WRITE, arr_ptr, conv_arrays, conv_ptrs
from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom

cnp.import_array()

cdef extern from "winograd/wdw.h" nogil:
    int cc_wdw_fwd_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                       float *y, int nthreads, int *nonfinite)
    int cc_wdw_geom_ok(const cc_geom *g)
    void cc_wdw_filter_f32(const float *g, float *u)

include "_isa.pxi"
include "_par.pxi"

from . import _trace


cdef int _fill(cc_geom *g, tuple geom) except -1:
    fill_geom(g, geom)
    if not cc_wdw_geom_ok(g):
        raise ValueError(f"the depthwise 3x3 Winograd kernel cannot run the geometry {geom!r}")
    return 0


def geom_ok(tuple geom):
    """True when the Winograd kernel runs this plain geometry."""
    cdef cc_geom g
    try:
        _fill(&g, geom)
    except (ValueError, TypeError, OverflowError, IndexError):
        return False
    return True


def fwd(tuple geom, x, w, b, y, int nthreads):
    """y = depthwise conv3x3(x, w) + b (b over channels; may be None).
    Arrays: C-contiguous float32 of the sizes ``geom`` gives.  Returns True
    when a weight or an input value is NaN or infinite (y then holds
    Winograd's NaN/inf pattern, not the direct sum's), else False."""
    cdef cc_geom g
    cdef int rc
    cdef int bad = 0
    cdef conv_ptrs p
    _fill(&g, geom)
    conv_arrays(geom, cnp.NPY_FLOAT32, 0, x, w, b, y, &p)
    if p.dst == NULL:  # an empty output
        return False
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            rc = cc_wdw_fwd_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                <float *>p.dst, nthreads, &bad)
        tok = watch_end(tok)
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: out of memory in the Winograd kernel's row buffers")
    if rc != CC_OK:
        raise ValueError("cconv: the Winograd kernel rejected the convolution geometry")
    if bad:
        return True
    if _trace.events is not None:
        _trace.events.append(("fwd", "winograd_depthwise_3x3"))
    return False


def filter_transform(g, u):
    """u (16) = G g G^T of one 3x3 filter g (9), row-major: float32 arrays."""
    cdef void *pg
    cdef void *pu
    arr_ptr(g, "g", cnp.NPY_FLOAT32, 9, 0, &pg)
    arr_ptr(u, "u", cnp.NPY_FLOAT32, 16, ARR_WRITE, &pu)
    cc_wdw_filter_f32(<const float *>pg, <float *>pu)
