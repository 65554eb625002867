# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin nogil wrapper over the channels-last forward (src/nhwc_conv.h).

``x`` is the flattened channels-last input (batch, *in, c_in), ``w`` the
flattened weight as PyTorch stores it, ``y`` the flattened result, channels
last when ``y_cl`` else channels first; ``geom`` is ``ConvParams.geom()``.
Scratch memory is a uint8 array from ``cconv._config.workspace``.
"""
from libc.stdint cimport int64_t

from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom, real

cdef extern from "nhwc_conv.h" nogil:
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


def fwd(tuple geom, const real[::1] x, const real[::1] w, const real[::1] b, real[::1] y,
        int y_cl, unsigned char[::1] ws, int nthreads):
    """y = conv(x, w) + b for channels-last x; b may be None."""
    cdef cc_geom g
    cdef int rc
    fill_geom(&g, geom)
    cdef const void *px = <const void *>&x[0] if x.shape[0] > 0 else NULL
    cdef const void *pw = <const void *>&w[0] if w.shape[0] > 0 else NULL
    cdef const void *pb = <const void *>&b[0] if b is not None and b.shape[0] > 0 else NULL
    cdef void *py = <void *>&y[0] if y.shape[0] > 0 else NULL
    cdef void *pws = <void *>&ws[0] if ws is not None and ws.shape[0] > 0 else NULL
    cdef int64_t nws = ws.shape[0] if ws is not None else 0
    with nogil:
        if real is float:
            rc = cc_nhwc_fwd_f32(&g, <const float *>px, <const float *>pw, <const float *>pb,
                                 <float *>py, y_cl, pws, nws, nthreads)
        else:
            rc = cc_nhwc_fwd_f64(&g, <const double *>px, <const double *>pw, <const double *>pb,
                                 <double *>py, y_cl, pws, nws, nthreads)
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: the convolution's scratch memory is smaller than the kernel needs")
    if rc != CC_OK:
        raise ValueError("cconv: the channels-last kernel rejected the convolution geometry")


cdef extern from "transpose.h" nogil:
    int cc_transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
                     const void *src, void *dst, int nthreads)


def transpose(int64_t batch, int64_t rows, int64_t cols, int64_t elsize,
              const unsigned char[::1] src, unsigned char[::1] dst, int nthreads):
    """dst[b][c][r] = src[b][r][c] (raw bytes, elements of elsize bytes)."""
    cdef int64_t n = batch * rows * cols * elsize
    if src.shape[0] != n or dst.shape[0] != n:
        raise ValueError("cconv: transpose buffers of the wrong size")
    if n == 0:
        return
    cdef const void *ps = <const void *>&src[0]
    cdef void *pd = <void *>&dst[0]
    cdef int rc
    with nogil:
        rc = cc_transpose(batch, rows, cols, elsize, ps, pd, nthreads)
    if rc != CC_OK:
        raise ValueError(f"cconv: transpose cannot handle elements of {elsize} bytes")
