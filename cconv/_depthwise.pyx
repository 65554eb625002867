# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin nogil wrappers over the depthwise direct kernels
(src/depthwise/depthwise.h): forward, adjoint (grad_input, or the forward
of a transposed depthwise convolution) and grad_weight, float32/float64.

Array arguments are flattened, C-contiguous NumPy arrays of one dtype
(inputs may be read-only);
``geom`` is the tuple ``ConvParams.geom()`` returns (the plain convolution,
padded to three spatial dims).  Sizes are checked against ``geom`` before
any kernel runs.  The instruction set is chosen once, at import, from the
CPU (or ``CCONV_SIMD=scalar|avx2|avx512|neon``); ``set_isa`` forces one
(for tests; not while kernels run in other threads).
"""
import os
import warnings

from libc.stdint cimport int64_t

from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom, real

cdef extern from "depthwise/depthwise.h" nogil:
    int cc_dw_fwd_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                      float *y, int nthreads)
    int cc_dw_fwd_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                      double *y, int nthreads)
    int cc_dw_adj_f32(const cc_geom *g, const float *y, const float *w, const float *bias,
                      float *x, int nthreads)
    int cc_dw_adj_f64(const cc_geom *g, const double *y, const double *w, const double *bias,
                      double *x, int nthreads)
    int cc_dw_wgrad_f32(const cc_geom *g, const float *x, const float *gy, float *gw,
                        int nthreads)
    int cc_dw_wgrad_f64(const cc_geom *g, const double *x, const double *gy, double *gw,
                        int nthreads)
    int cc_dw_geom_ok(const cc_geom *g)
    int cc_dw_init()
    int cc_dw_set_isa(const char *name)
    const char *cc_dw_isa()
    int cc_dw_isa_available(const char *name)

ISAS = ("scalar", "avx2", "avx512", "neon")


cdef int _fill(cc_geom *g, tuple geom) except -1:
    fill_geom(g, geom)
    if not cc_dw_geom_ok(g):
        raise ValueError(f"depthwise kernels cannot run the geometry {geom!r}")
    return 0


def _prod(t):
    r = 1
    for v in t:
        r *= int(v)
    return r


cdef int _size(str name, object a, object n, bint optional=False) except -1:
    if a is None:
        if optional:
            return 0
        raise ValueError(f"{name}: an array is required")
    if a.shape[0] != n:
        raise ValueError(f"{name}: expected {n} elements for this geometry, got {a.shape[0]}")
    return 0


cdef inline void *_p(real[::1] a) noexcept nogil:
    return <void *>&a[0] if a is not None and a.shape[0] > 0 else NULL


cdef inline const void *_pc(const real[::1] a) noexcept nogil:
    return <const void *>&a[0] if a is not None and a.shape[0] > 0 else NULL


cdef int _check(int rc) except -1:
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: out of memory in the depthwise kernel's row buffers")
    if rc != CC_OK:
        raise ValueError("cconv: the depthwise kernel rejected the convolution geometry")
    return 0


def geom_ok(tuple geom):
    """True when the depthwise kernels run this plain geometry."""
    cdef cc_geom g
    try:
        _fill(&g, geom)
    except (ValueError, TypeError, OverflowError, IndexError):
        return False
    return True


def fwd(tuple geom, const real[::1] x, const real[::1] w, const real[::1] b, real[::1] y,
        int nthreads):
    """y = conv(x, w) + b (b over c_out; may be None)."""
    cdef cc_geom g
    cdef int rc
    _fill(&g, geom)
    _size("x", x, geom[0] * geom[2] * _prod(geom[4]))
    _size("w", w, geom[3] * _prod(geom[6]))
    _size("b", b, geom[3], True)
    _size("y", y, geom[0] * geom[3] * _prod(geom[5]))
    cdef const void *px = _pc(x)
    cdef const void *pw = _pc(w)
    cdef const void *pb = _pc(b)
    cdef void *py = _p(y)
    with nogil:
        if real is float:
            rc = cc_dw_fwd_f32(&g, <const float *>px, <const float *>pw, <const float *>pb,
                               <float *>py, nthreads)
        else:
            rc = cc_dw_fwd_f64(&g, <const double *>px, <const double *>pw, <const double *>pb,
                               <double *>py, nthreads)
    _check(rc)


def adj(tuple geom, const real[::1] y, const real[::1] w, const real[::1] b, real[::1] x,
        int nthreads):
    """x = conv_adjoint(y, w) + b (b over c_in; may be None): grad_input, or
    the forward of the transposed convolution."""
    cdef cc_geom g
    cdef int rc
    _fill(&g, geom)
    _size("y", y, geom[0] * geom[3] * _prod(geom[5]))
    _size("w", w, geom[3] * _prod(geom[6]))
    _size("b", b, geom[2], True)
    _size("x", x, geom[0] * geom[2] * _prod(geom[4]))
    cdef const void *py = _pc(y)
    cdef const void *pw = _pc(w)
    cdef const void *pb = _pc(b)
    cdef void *px = _p(x)
    with nogil:
        if real is float:
            rc = cc_dw_adj_f32(&g, <const float *>py, <const float *>pw, <const float *>pb,
                               <float *>px, nthreads)
        else:
            rc = cc_dw_adj_f64(&g, <const double *>py, <const double *>pw, <const double *>pb,
                               <double *>px, nthreads)
    _check(rc)


def wgrad(tuple geom, const real[::1] x, const real[::1] gy, real[::1] gw, int nthreads):
    """gw = gradient of <gy, conv(x, w)> with respect to w; deterministic
    (the same bits for every call and thread count)."""
    cdef cc_geom g
    cdef int rc
    _fill(&g, geom)
    _size("x", x, geom[0] * geom[2] * _prod(geom[4]))
    _size("gy", gy, geom[0] * geom[3] * _prod(geom[5]))
    _size("gw", gw, geom[3] * _prod(geom[6]))
    cdef const void *px = _pc(x)
    cdef const void *pgy = _pc(gy)
    cdef void *pgw = _p(gw)
    with nogil:
        if real is float:
            rc = cc_dw_wgrad_f32(&g, <const float *>px, <const float *>pgy, <float *>pgw, nthreads)
        else:
            rc = cc_dw_wgrad_f64(&g, <const double *>px, <const double *>pgy, <double *>pgw, nthreads)
    _check(rc)


def isa():
    """The instruction set the depthwise kernels use."""
    return cc_dw_isa().decode()


def available_isas():
    """The instruction sets this build and CPU can run, best last."""
    return [n for n in ISAS if cc_dw_isa_available(n.encode())]


def set_isa(name=None):
    """Force an instruction set (None or 'auto': the best available); returns
    the previous one.  ValueError when it cannot run here."""
    prev = isa()
    cdef bytes b = b"auto" if name is None else str(name).encode()
    if cc_dw_set_isa(b) != CC_OK:
        raise ValueError(
            f"set_isa: {name!r} cannot run here; available: {', '.join(available_isas())}")
    return prev


if cc_dw_init() != CC_OK:
    warnings.warn(
        f"CCONV_SIMD={os.environ.get('CCONV_SIMD')!r} is unknown or cannot run here "
        f"(available: {', '.join(available_isas())}); the depthwise kernels use {isa()!r}",
        RuntimeWarning, stacklevel=2)
