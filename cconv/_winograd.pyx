# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Thin nogil wrappers over the depthwise 3x3 Winograd F(2x2,3x3) kernels
(src/winograd/winograd.h): float32 forward only (inference).

Array arguments are flattened, C-contiguous float32 NumPy arrays; ``geom``
is the tuple ``ConvParams.geom()`` returns (the plain convolution, padded to
three spatial dims).  Sizes are checked against ``geom`` before any kernel
runs.  The instruction set is chosen once, at import, from the CPU (or
``CCONV_SIMD=scalar|avx2|avx512|neon``); ``set_isa`` forces one (for tests;
not while kernels run in other threads).
"""
import os
import warnings

from libc.stdint cimport int64_t

from ._geom cimport CC_ERR_ARG, CC_ERR_NOMEM, CC_OK, cc_geom, fill_geom, real

cdef extern from "winograd/winograd.h" nogil:
    int cc_wdw_fwd_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                       float *y, int nthreads)
    int cc_wdw_geom_ok(const cc_geom *g)
    void cc_wdw_filter_f32(const float *g, float *u)
    int cc_wdw_init()
    int cc_wdw_set_isa(const char *name)
    const char *cc_wdw_isa()
    int cc_wdw_isa_available(const char *name)

ISAS = ("scalar", "avx2", "avx512", "neon")


cdef int _fill(cc_geom *g, tuple geom) except -1:
    fill_geom(g, geom)
    if not cc_wdw_geom_ok(g):
        raise ValueError(f"the depthwise 3x3 Winograd kernel cannot run the geometry {geom!r}")
    return 0


def _prod(t):
    r = 1
    for v in t:
        r *= int(v)
    return r


cdef int _size(str name, const float[::1] a, object n, bint optional=False) except -1:
    if a is None:
        if optional:
            return 0
        raise ValueError(f"{name}: an array is required")
    if a.shape[0] != n:
        raise ValueError(f"{name}: expected {n} elements for this geometry, got {a.shape[0]}")
    return 0


cdef inline const float *_p(const float[::1] a) noexcept nogil:
    return &a[0] if a is not None and a.shape[0] > 0 else NULL


def geom_ok(tuple geom):
    """True when the Winograd kernel runs this plain geometry."""
    cdef cc_geom g
    try:
        _fill(&g, geom)
    except (ValueError, TypeError, OverflowError, IndexError):
        return False
    return True


def fwd(tuple geom, const float[::1] x, const float[::1] w, const float[::1] b, float[::1] y,
        int nthreads):
    """y = depthwise conv3x3(x, w) + b (b over channels; may be None)."""
    cdef cc_geom g
    cdef int rc
    _fill(&g, geom)
    _size("x", x, geom[0] * geom[2] * _prod(geom[4]))
    _size("w", w, geom[3] * _prod(geom[6]))
    _size("b", b, geom[3], True)
    _size("y", y, geom[0] * geom[3] * _prod(geom[5]))
    if geom[0] * geom[3] * _prod(geom[5]) == 0:
        return
    cdef const float *px = _p(x)
    cdef const float *pw = _p(w)
    cdef const float *pb = _p(b)
    cdef float *py = <float *>_p(y)
    with nogil:
        rc = cc_wdw_fwd_f32(&g, px, pw, pb, py, nthreads)
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: out of memory in the Winograd kernel's row buffers")
    if rc != CC_OK:
        raise ValueError("cconv: the Winograd kernel rejected the convolution geometry")


def filter_transform(const float[::1] g, float[::1] u):
    """u (16) = G g G^T of one 3x3 filter g (9), row-major."""
    if g.shape[0] != 9 or u.shape[0] != 16:
        raise ValueError("filter_transform: g needs 9 elements and u 16")
    cc_wdw_filter_f32(&g[0], &u[0])


def isa():
    """The instruction set the Winograd kernels use."""
    return cc_wdw_isa().decode()


def available_isas():
    """The instruction sets this build and CPU can run, best last."""
    return [n for n in ISAS if cc_wdw_isa_available(n.encode())]


def set_isa(name=None):
    """Force an instruction set (None or 'auto': the best available); returns
    the previous one.  ValueError when it cannot run here."""
    prev = isa()
    cdef bytes bn = b"auto" if name is None else str(name).encode()
    if cc_wdw_set_isa(bn) != CC_OK:
        raise ValueError(
            f"set_isa: {name!r} cannot run here; available: {', '.join(available_isas())}")
    return prev


if cc_wdw_init() != CC_OK:
    warnings.warn(
        f"CCONV_SIMD={os.environ.get('CCONV_SIMD')!r} is unknown or cannot run here "
        f"(available: {', '.join(available_isas())}); the Winograd kernels use {isa()!r}",
        RuntimeWarning, stacklevel=2)
