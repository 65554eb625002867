# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin nogil wrapper over the channels-last forward (src/nhwc/nhwc_conv.h).

``x`` is the flattened channels-last input (batch, *in, c_in), ``w`` the
flattened weight as PyTorch stores it, ``y`` the flattened result, channels
last when ``y_cl`` else channels first; ``geom`` is ``ConvParams.geom()``.
Scratch memory is a uint8 array from ``cconv._config.workspace``.  The
layout transpose (``transpose``) has a tile kernel per instruction set,
chosen like the depthwise kernels' (``set_isa`` forces one, for tests).
"""
from libc.stdint cimport int64_t

cimport numpy as cnp

from ._arrays cimport conv_arrays, conv_ptrs, real_type, ws_ptr
from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom

cnp.import_array()

include "_isa.pxi"
include "_par.pxi"

from . import _trace

cdef extern from "nhwc/nhwc_conv.h" nogil:
    int64_t cc_nhwc_fwd_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_nhwc_fwd_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                        float *y, int y_cl, void *ws, int64_t ws_bytes, int nthreads)
    int cc_nhwc_fwd_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                        double *y, int y_cl, void *ws, int64_t ws_bytes, int nthreads)

def fwd_workspace_bytes(tuple geom, int nthreads, int elsize):
    """Scratch bytes the channels-last forward needs."""
    cdef cc_geom g
    fill_geom(&g, geom)
    cdef int64_t n = cc_nhwc_fwd_workspace(&g, nthreads, elsize)
    if n < 0:
        raise ValueError(f"cconv: the channels-last kernel rejects the convolution geometry {geom}")
    return n


def fwd(tuple geom, x, w, b, y, int y_cl, ws, int nthreads):
    """y = conv(x, w) + b for channels-last x; b may be None.  Arrays:
    C-contiguous float32 or float64 (one dtype) of the sizes ``geom`` gives;
    ws a uint8 array."""
    cdef cc_geom g
    cdef int rc
    cdef conv_ptrs p
    cdef void *pws
    fill_geom(&g, geom)
    cdef int t = real_type(x, "x")
    conv_arrays(geom, t, 0, x, w, b, y, &p)
    cdef int64_t nws = ws_ptr(ws, &pws)
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            if t == cnp.NPY_FLOAT32:
                rc = cc_nhwc_fwd_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                     <float *>p.dst, y_cl, pws, nws, nthreads)
            else:
                rc = cc_nhwc_fwd_f64(&g, <const double *>p.src, <const double *>p.w,
                                     <const double *>p.b, <double *>p.dst, y_cl, pws, nws, nthreads)
        tok = watch_end(tok)
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: the convolution's scratch memory is smaller than the kernel needs")
    if rc != CC_OK:
        raise ValueError("cconv: the channels-last kernel rejected the convolution geometry")
    if _trace.events is not None:
        _trace.events.append(("fwd", "nhwc"))


cdef extern from "transpose/transpose.h" nogil:
    int cc_transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
                     const void *src, void *dst, int nthreads)

cdef extern from "gemm/weight_adjoint.h" nogil:
    int cc_weight_adjoint(int64_t groups, int64_t cog, int64_t cig, int64_t kk,
                          int64_t elsize, const void *src, void *dst, int nthreads,
                          int *nonfinite)


cdef bint _sized(str what, int64_t n, const unsigned char[::1] src,
                 const unsigned char[::1] dst) except -1:
    """ValueError unless both raw buffers hold n bytes; False when n is 0
    (nothing to do)."""
    if src.shape[0] != n or dst.shape[0] != n:
        raise ValueError(f"cconv: {what} buffers of the wrong size")
    return n != 0


def transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
              const unsigned char[::1] src, unsigned char[::1] dst, int nthreads):
    """dst[b][c][r] = src[b][r][c] (raw bytes, elements of elsize bytes)."""
    if not _sized("transpose", batch * rows * cols * elsize, src, dst):
        return
    cdef const void *ps = <const void *>&src[0]
    cdef void *pd = <void *>&dst[0]
    cdef int rc
    cdef int tok = 1
    while tok:
        tok = watch_begin(<double>batch * rows * cols * elsize)
        with nogil:
            rc = cc_transpose(batch, rows, cols, elsize, ps, pd, nthreads)
        tok = watch_end(tok)
    if rc != CC_OK:
        raise ValueError(f"cconv: transpose cannot handle elements of {elsize} bytes")


def weight_adjoint(int64_t groups, int64_t cog, int64_t cig, int64_t kk, int64_t elsize,
                   const unsigned char[::1] src, unsigned char[::1] dst, int nthreads):
    """dst[g][ci][co][kk-1-t] = src[g][co][ci][t] (raw bytes, elements of
    elsize bytes): the weight of a stride-1 adjoint run as a forward.
    Returns False when an element (as a float of elsize bytes) is NaN or
    infinite (kk > 1 only), else True."""
    if not _sized("weight_adjoint", groups * cog * cig * kk * elsize, src, dst):
        return True
    cdef const void *ps = <const void *>&src[0]
    cdef void *pd = <void *>&dst[0]
    cdef int rc
    cdef int bad = 0
    with nogil:
        rc = cc_weight_adjoint(groups, cog, cig, kk, elsize, ps, pd, nthreads, &bad)
    if rc != CC_OK:
        raise ValueError(f"cconv: weight_adjoint cannot handle elements of {elsize} bytes")
    return not bad
