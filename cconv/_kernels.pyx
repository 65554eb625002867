# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin nogil wrappers over the C core (src/cconv.h).

Every array argument is a flattened, C-contiguous NumPy array of float32 or
float64 (the callers in cconv/backends ensure it); ``geom`` is the tuple
``ConvParams.geom()`` returns.  Scratch memory is a uint8 array from
``cconv._config.workspace``.  Errors from the C side come back as
``MemoryError`` (no scratch memory) or ``ValueError``.
"""
from libc.stdint cimport int64_t

cimport numpy as cnp

from ._arrays cimport (
    ARR_WRITE, arr_ptr, conv_arrays, conv_ptrs, real_type, w_elems, ws_ptr, x_elems, y_elems,
)
from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom

cnp.import_array()

cdef extern from "cconv.h" nogil:
    int64_t CC_WORKSPACE_CAP
    int64_t cc_conv_fwd_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int64_t cc_conv_adj_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int64_t cc_conv_wgrad_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_fwd_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                        float *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_fwd_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                        double *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_adj_f32(const cc_geom *g, const float *y, const float *w, const float *bias,
                        float *x, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_adj_f64(const cc_geom *g, const double *y, const double *w, const double *bias,
                        double *x, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_wgrad_f32(const cc_geom *g, const float *x, const float *gy, float *gw,
                          void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_wgrad_f64(const cc_geom *g, const double *x, const double *gy, double *gw,
                          void *ws, int64_t ws_bytes, int nthreads)
    void cc_bias_grad_f32(int64_t batch, int64_t channels, int64_t spatial,
                          const float *gy, float *gb, int nthreads)
    void cc_bias_grad_f64(int64_t batch, int64_t channels, int64_t spatial,
                          const double *gy, double *gb, int nthreads)
    const char *cc_blas_config()
    const char *cc_blas_corename()
    int cc_openmp_max_threads()
    void cc_openmp_set_threads(int n)

    int cc_conv_fwd_method(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_wgrad_method(const cc_geom *g, int nthreads, int64_t elsize)
    int64_t cc_conv_fwd_igemm_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_fwd_igemm_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                              float *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_fwd_igemm_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                              double *y, void *ws, int64_t ws_bytes, int nthreads)
    int64_t cc_conv_fwd_wino_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_fwd_wino_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                             float *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_fwd_wino_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                             double *y, void *ws, int64_t ws_bytes, int nthreads)

WORKSPACE_CAP = CC_WORKSPACE_CAP


cdef int _check(int rc) except -1:
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: the convolution's scratch memory is smaller than the kernel needs")
    if rc != CC_OK:
        raise ValueError("cconv: the C kernel rejected the convolution geometry")
    return 0


def workspace_bytes(str kind, tuple geom, int nthreads, int elsize):
    """Scratch bytes the 'fwd', 'adj' or 'wgrad' kernel needs."""
    cdef cc_geom g
    cdef int64_t n
    fill_geom(&g, geom)
    if kind == "fwd":
        n = cc_conv_fwd_workspace(&g, nthreads, elsize)
    elif kind == "adj":
        n = cc_conv_adj_workspace(&g, nthreads, elsize)
    elif kind == "wgrad":
        n = cc_conv_wgrad_workspace(&g, nthreads, elsize)
    else:
        raise ValueError(kind)
    if n < 0:
        raise ValueError(f"cconv: the C kernels reject the convolution geometry {geom}")
    return n


cdef enum:
    _FWD = 0
    _FWD_IGEMM = 1
    _ADJ = 2
    _FWD_WINO = 3


cdef int _conv(int op, tuple geom, a, w, b, out, ws, int nthreads) except -1:
    """out = op(a, w) + b: the forward (by the method cc_conv_fwd_method picks,
    or the implicit GEMM), or the adjoint.  The forward reads a (batch, c_in,
    *in) and writes out (batch, c_out, *out), b over c_out; the adjoint the
    other way round, b over c_in."""
    cdef cc_geom g
    cdef int rc
    cdef conv_ptrs p
    cdef void *pws
    fill_geom(&g, geom)
    cdef int t = real_type(a, "y" if op == _ADJ else "x")
    conv_arrays(geom, t, op == _ADJ, a, w, b, out, &p)
    cdef int64_t nws = ws_ptr(ws, &pws)
    with nogil:
        if t == cnp.NPY_FLOAT32:
            if op == _FWD:
                rc = cc_conv_fwd_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                     <float *>p.dst, pws, nws, nthreads)
            elif op == _FWD_IGEMM:
                rc = cc_conv_fwd_igemm_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                           <float *>p.dst, pws, nws, nthreads)
            elif op == _FWD_WINO:
                rc = cc_conv_fwd_wino_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                          <float *>p.dst, pws, nws, nthreads)
            else:
                rc = cc_conv_adj_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                     <float *>p.dst, pws, nws, nthreads)
        else:
            if op == _FWD:
                rc = cc_conv_fwd_f64(&g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                     <double *>p.dst, pws, nws, nthreads)
            elif op == _FWD_IGEMM:
                rc = cc_conv_fwd_igemm_f64(&g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                           <double *>p.dst, pws, nws, nthreads)
            elif op == _FWD_WINO:
                rc = cc_conv_fwd_wino_f64(&g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                          <double *>p.dst, pws, nws, nthreads)
            else:
                rc = cc_conv_adj_f64(&g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                     <double *>p.dst, pws, nws, nthreads)
    return _check(rc)


def conv_fwd(tuple geom, x, w, b, y, ws, int nthreads):
    """y = conv(x, w) + b; b may be None.  Arrays: C-contiguous float32 or
    float64 (one dtype) of the sizes ``geom`` gives; ws a uint8 array."""
    _conv(_FWD, geom, x, w, b, y, ws, nthreads)


def igemm_workspace_bytes(tuple geom, int nthreads, int elsize):
    """Scratch bytes of the implicit-GEMM forward, or -1 when it cannot run."""
    cdef cc_geom g
    fill_geom(&g, geom)
    return cc_conv_fwd_igemm_workspace(&g, nthreads, elsize)


def conv_fwd_igemm(tuple geom, x, w, b, y, ws, int nthreads):
    """y = conv(x, w) + b by the implicit GEMM (src/igemm); b may be None."""
    _conv(_FWD_IGEMM, geom, x, w, b, y, ws, nthreads)


def wino_workspace_bytes(tuple geom, int nthreads, int elsize):
    """Scratch bytes of the Winograd F(2x2, 3x3) forward, or -1 when it cannot run."""
    cdef cc_geom g
    fill_geom(&g, geom)
    return cc_conv_fwd_wino_workspace(&g, nthreads, elsize)


def conv_fwd_wino(tuple geom, x, w, b, y, ws, int nthreads):
    """y = conv(x, w) + b by Winograd F(2x2, 3x3) (src/winograd/wino_conv.c): a
    3x3 stride-1 geometry across the planes (2-D, or 3-D with any depth
    taps), else ValueError; b may be None."""
    _conv(_FWD_WINO, geom, x, w, b, y, ws, nthreads)


def conv_adj(tuple geom, y, w, b, x, ws, int nthreads):
    """x = conv_adjoint(y, w) + b (grad_input, or a transposed forward); b may be None."""
    _conv(_ADJ, geom, y, w, b, x, ws, nthreads)


def conv_wgrad(tuple geom, x, gy, gw, ws, int nthreads):
    """gw = d<gy, conv(x, w)>/dw."""
    cdef cc_geom g
    cdef int rc
    cdef void *px
    cdef void *pgy
    cdef void *pgw
    cdef void *pws
    fill_geom(&g, geom)
    cdef int t = real_type(x, "x")
    arr_ptr(x, "x", t, x_elems(geom), 0, &px)
    arr_ptr(gy, "gy", t, y_elems(geom), 0, &pgy)
    arr_ptr(gw, "gw", t, w_elems(geom), ARR_WRITE, &pgw)
    cdef int64_t nws = ws_ptr(ws, &pws)
    with nogil:
        if t == cnp.NPY_FLOAT32:
            rc = cc_conv_wgrad_f32(&g, <const float *>px, <const float *>pgy, <float *>pgw, pws, nws, nthreads)
        else:
            rc = cc_conv_wgrad_f64(&g, <const double *>px, <const double *>pgy, <double *>pgw, pws, nws, nthreads)
    _check(rc)


def bias_grad(int64_t batch, int64_t channels, int64_t spatial, gy, gb, int nthreads):
    """gb[c] = sum over batch and space of gy (batch, channels, spatial)."""
    cdef void *pgy
    cdef void *pgb
    if batch < 0 or channels < 0 or spatial < 0:
        raise ValueError(f"bias_grad: negative size ({batch}, {channels}, {spatial})")
    cdef int t = real_type(gy, "gy")
    arr_ptr(gy, "gy", t, (<object>batch) * channels * spatial, 0, &pgy)
    arr_ptr(gb, "gb", t, channels, ARR_WRITE, &pgb)
    if channels == 0:
        return
    with nogil:
        if t == cnp.NPY_FLOAT32:
            cc_bias_grad_f32(batch, channels, spatial, <const float *>pgy, <float *>pgb, nthreads)
        else:
            cc_bias_grad_f64(batch, channels, spatial, <const double *>pgy, <double *>pgb, nthreads)


def blas_config():
    return (<bytes>cc_blas_config()).decode("ascii", "replace")


def blas_corename():
    return (<bytes>cc_blas_corename()).decode("ascii", "replace")


def openmp_max_threads():
    return cc_openmp_max_threads()


def openmp_set_threads(int n):
    cc_openmp_set_threads(n)


_FWD_METHODS = ("gemm", "im2col", "shift", "igemm", "winograd")


include "_isa.pxi"


def wgrad_method(tuple geom, int nthreads, int elsize):
    """How conv_wgrad computes ``geom``: 'im2col' (im2col + GEMM) or
    'igemm' (grouped, few channels per group: the band read in place)."""
    cdef cc_geom g
    fill_geom(&g, geom)
    cdef int m = cc_conv_wgrad_method(&g, nthreads, elsize)
    if m < 0:
        raise ValueError(f"cconv: the C kernels reject the convolution geometry {geom}")
    return ("im2col", "igemm")[m]


def fwd_method(tuple geom, int nthreads, int elsize):
    """How conv_fwd computes ``geom``: 'gemm' (1x1, no copy), 'im2col',
    'shift' (GEMM per tap over a band), 'igemm' (implicit GEMM) or
    'winograd' (F(2x2, 3x3), 3x3 stride 1)."""
    cdef cc_geom g
    fill_geom(&g, geom)
    cdef int m = cc_conv_fwd_method(&g, nthreads, elsize)
    if m < 0:
        raise ValueError(f"cconv: the C kernels reject the convolution geometry {geom}")
    return _FWD_METHODS[m]

