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

from libc.math cimport isfinite
from libc.stdint cimport int64_t

cimport numpy as cnp

from ._arrays cimport ARR_WRITE, arr_ptr, conv_arrays, conv_ptrs, real_type, w_elems, x_elems, y_elems
from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom

cnp.import_array()

include "_par.pxi"

cdef extern from "depthwise/depthwise.h" nogil:
    int cc_dw_fwd_f32(const cc_geom *g, int path, const float *x, const float *w,
                      const float *bias, float *y, int nthreads)
    int cc_dw_fwd_f64(const cc_geom *g, int path, const double *x, const double *w,
                      const double *bias, double *y, int nthreads)
    int cc_dw_adj_f32(const cc_geom *g, const float *y, const float *w, const float *bias,
                      float *x, int nthreads)
    int cc_dw_adj_f64(const cc_geom *g, const double *y, const double *w, const double *bias,
                      double *x, int nthreads)
    int cc_dw_wgrad_f32(const cc_geom *g, const float *x, const float *gy, float *gw,
                        int nthreads)
    int cc_dw_wgrad_f64(const cc_geom *g, const double *x, const double *gy, double *gw,
                        int nthreads)
    int cc_dw_fwd_nhwc_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                           float *y, int nthreads)
    int cc_dw_fwd_nhwc_f64(const cc_geom *g, const double *x, const double *w,
                           const double *bias, double *y, int nthreads)
    int cc_dw_nhwc_ok(const cc_geom *g, int64_t elsize)
    int cc_dw_geom_ok(const cc_geom *g)
    int cc_dw_fwd_applies(int path, const cc_geom *g, int64_t elsize)
    int cc_dw_fwd_wanted(int path, const cc_geom *g, int64_t elsize)
    int cc_dw_fwd_parallel(const cc_geom *g)
    int cc_dw_fwd_flat(const cc_geom *g, int64_t elsize)
    int cc_dw_fwd_direct(const cc_geom *g, int64_t elsize)
    int cc_dw_adj_planes(const cc_geom *g)

include "_isa.pxi"

from . import _trace

# the forward's paths (src/depthwise/depthwise.h CC_DW_PATH_*), by name, and
# the methods they are (cconv.Backend values) in the kernel trace
PATHS = ("plane", "rows", "channels_last")
_TRACED = ("depthwise_plane", "depthwise", "depthwise_channel_blocks")


cdef int _fill(cc_geom *g, tuple geom) except -1:
    fill_geom(g, geom)
    if not cc_dw_geom_ok(g):
        raise ValueError(f"depthwise kernels cannot run the geometry {geom!r}")
    return 0


cdef bint _filled(cc_geom *g, tuple geom):
    """Fill g from geom for the predicates below: False where geom is not a
    geometry at all (their answer is then no)."""
    try:
        fill_geom(g, geom)
    except (ValueError, TypeError, OverflowError, IndexError):
        return False
    return True


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


cdef int _path(str name) except -1:
    try:
        return PATHS.index(name)
    except ValueError:
        raise ValueError(f"depthwise: unknown forward path {name!r}; expected one of {PATHS}") from None


def fwd_applies(str path, tuple geom, int elsize):
    """True when the forward's ``path`` ('plane', 'rows', 'channels_last')
    can run ``geom`` for elements of ``elsize`` bytes."""
    cdef cc_geom g
    cdef int m = _path(path)
    return _filled(&g, geom) and bool(cc_dw_fwd_applies(m, &g, elsize))


def fwd_wanted(str path, tuple geom, int elsize):
    """True when ``path`` applies and the default choice prefers it (the
    caller tries 'channels_last', 'plane', 'rows' in that order)."""
    cdef cc_geom g
    cdef int m = _path(path)
    return _filled(&g, geom) and bool(cc_dw_fwd_wanted(m, &g, elsize))


def fwd_parallel(tuple geom):
    """True when the forward splits ``geom`` into at least as many work
    items (image, channel, block of output rows) as the threads its split
    is planned for on this CPU (a 1-D layer: one item per image and
    channel)."""
    cdef cc_geom g
    return _filled(&g, geom) and bool(cc_dw_fwd_parallel(&g))


def fwd_flat(tuple geom, int itemsize):
    """True when the forward's plane path (DEPTHWISE_PLANE) runs ``geom``'s
    dilated 3x3 planes of elements of ``itemsize`` bytes by super-rows (D
    output rows laid end to end: src/depthwise/dw2d.inc, plane_flat)."""
    cdef cc_geom g
    return _filled(&g, geom) and bool(cc_dw_fwd_flat(&g, itemsize))


def fwd_direct(tuple geom, int itemsize):
    """True when the forward's plane path (DEPTHWISE_PLANE) reads ``geom``'s
    3x3 stride-1 planes of elements of ``itemsize`` bytes where they lie
    in x (src/depthwise/dw2d.inc, plane_direct) on the kernel set in use;
    paddings wider than two vectors take the row buffers still."""
    cdef cc_geom g
    return _filled(&g, geom) and bool(cc_dw_fwd_direct(&g, itemsize))


def adj_planes(tuple geom):
    """True when the adjoint (grad_input of ``geom``'s convolution; the
    forward of its transposed one) runs the planes by the plane form of the
    stride-2 kernel (src/depthwise/dwadj2.inc, adj2p): stride 2 and K x K
    taps, K = 2 to 5, dilation 1, in both directions."""
    cdef cc_geom g
    return _filled(&g, geom) and bool(cc_dw_adj_planes(&g))


cdef int _fwd(tuple geom, x, w, b, y, int nthreads, int path) except -1:
    """The forward by ``path`` on channels-first memory (cc_dw_fwd), or on
    channels-last memory (cc_dw_fwd_nhwc) for path -1, after the size checks."""
    cdef cc_geom g
    cdef int rc
    cdef conv_ptrs p
    cdef bint nhwc = path < 0
    _fill(&g, geom)
    cdef int t = real_type(x, "x")
    conv_arrays(geom, t, 0, x, w, b, y, &p)
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            rc = _fwd_c(&g, t, &p, nthreads, nhwc, path)
        tok = watch_end(tok)
    _check(rc)
    if _trace.events is not None:
        _trace.events.append(("fwd", "depthwise_nhwc" if nhwc else _TRACED[path]))
    return 0


cdef int _fwd_c(const cc_geom *g, int t, conv_ptrs *p, int nthreads, bint nhwc,
                int path) noexcept nogil:
    """The C call of _fwd (without the interpreter's lock)."""
    cdef int rc
    if t == cnp.NPY_FLOAT32:
        if nhwc:
            rc = cc_dw_fwd_nhwc_f32(g, <const float *>p.src, <const float *>p.w,
                                    <const float *>p.b, <float *>p.dst, nthreads)
        else:
            rc = cc_dw_fwd_f32(g, path, <const float *>p.src, <const float *>p.w,
                               <const float *>p.b, <float *>p.dst, nthreads)
    else:
        if nhwc:
            rc = cc_dw_fwd_nhwc_f64(g, <const double *>p.src, <const double *>p.w,
                                    <const double *>p.b, <double *>p.dst, nthreads)
        else:
            rc = cc_dw_fwd_f64(g, path, <const double *>p.src, <const double *>p.w,
                               <const double *>p.b, <double *>p.dst, nthreads)
    return rc


def fwd(str path, tuple geom, x, w, b, y, int nthreads):
    """y = conv(x, w) + b (b over c_out; may be None) by the forward's
    ``path`` (``fwd_applies``).  x, w, b, y: C-contiguous float32 or float64
    arrays (one dtype) of the sizes ``geom`` gives."""
    _fwd(geom, x, w, b, y, nthreads, _path(path))


def nhwc_ok(tuple geom, int elsize):
    """True when ``fwd_nhwc`` runs ``geom`` for elements of ``elsize`` bytes
    (multiplier 1, row buffers within their cap)."""
    cdef cc_geom g
    return _filled(&g, geom) and bool(cc_dw_nhwc_ok(&g, elsize))


def fwd_nhwc(tuple geom, x, w, b, y, int nthreads):
    """y = conv(x, w) + b on channels-last memory: x is the (N, *in, C) and
    y the (N, *out, C) C-contiguous buffer, flattened; w (C, 1, *k) and b
    (C,) as for ``fwd``; multiplier 1 (``nhwc_ok``)."""
    _fwd(geom, x, w, b, y, nthreads, -1)


def adj(tuple geom, y, w, b, x, int nthreads):
    """x = conv_adjoint(y, w) + b (b over c_in; may be None): grad_input, or
    the forward of the transposed convolution."""
    cdef cc_geom g
    cdef int rc
    cdef conv_ptrs p
    _fill(&g, geom)
    cdef int t = real_type(y, "y")
    conv_arrays(geom, t, 1, y, w, b, x, &p)
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            if t == cnp.NPY_FLOAT32:
                rc = cc_dw_adj_f32(&g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                   <float *>p.dst, nthreads)
            else:
                rc = cc_dw_adj_f64(&g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                   <double *>p.dst, nthreads)
        tok = watch_end(tok)
    _check(rc)
    if _trace.events is not None:
        _trace.events.append(("adj", "depthwise"))


def wgrad(tuple geom, x, gy, gw, int nthreads):
    """gw = gradient of <gy, conv(x, w)> with respect to w; deterministic
    (the same bits for every call and thread count)."""
    cdef cc_geom g
    cdef int rc
    cdef void *px
    cdef void *pgy
    cdef void *pgw
    _fill(&g, geom)
    cdef int t = real_type(x, "x")
    arr_ptr(x, "x", t, x_elems(geom), 0, &px)
    arr_ptr(gy, "gy", t, y_elems(geom), 0, &pgy)
    arr_ptr(gw, "gw", t, w_elems(geom), ARR_WRITE, &pgw)
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            if t == cnp.NPY_FLOAT32:
                rc = cc_dw_wgrad_f32(&g, <const float *>px, <const float *>pgy, <float *>pgw, nthreads)
            else:
                rc = cc_dw_wgrad_f64(&g, <const double *>px, <const double *>pgy, <double *>pgw,
                                     nthreads)
        tok = watch_end(tok)
    _check(rc)
    if _trace.events is not None:
        _trace.events.append(("wgrad", "depthwise"))


def all_finite(a):
    """True when every element of the float32/float64 array ``a`` (any
    strides: a non-contiguous one is copied) is finite.  For weights, which
    are small: about 1 us a call for 144 x 3 x 3, the call included
    (numpy.isfinite(a).all() took 30 us there)."""
    cdef int t = real_type(a, "a")
    cdef cnp.ndarray c = <cnp.ndarray>a
    if not cnp.PyArray_IS_C_CONTIGUOUS(c):
        c = cnp.PyArray_GETCONTIGUOUS(c)
    cdef int64_t n = cnp.PyArray_SIZE(c), i
    cdef const float *f = <const float *>cnp.PyArray_DATA(c)
    cdef const double *d = <const double *>cnp.PyArray_DATA(c)
    cdef bint ok = True
    with nogil:
        if t == cnp.NPY_FLOAT32:
            for i in range(n):
                if not isfinite(f[i]):
                    ok = False
                    break
        else:
            for i in range(n):
                if not isfinite(d[i]):
                    ok = False
                    break
    return ok
