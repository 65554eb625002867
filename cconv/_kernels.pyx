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

from . import _trace

cdef extern from "cconv.h" nogil:
    int64_t CC_WORKSPACE_CAP
    int CC_NONFINITE
    int cc_conv_fwd_applies(int m, const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_fwd_wanted(int m, const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_adj_applies(int m, const cc_geom *g)
    int cc_conv_wgrad_applies(int m, const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_wgrad_wanted(int m, const cc_geom *g, int nthreads, int64_t elsize)
    int64_t cc_conv_fwd_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize)
    int cc_conv_fwd_split(const cc_geom *g, int m, int64_t elsize, int64_t split[3])
    int64_t cc_conv_adj_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize)
    int64_t cc_conv_wgrad_workspace(const cc_geom *g, int m, int nthreads, int64_t elsize)
    int cc_conv_fwd_f32(const cc_geom *g, int m, const float *x, const float *w,
                        const float *bias, float *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_fwd_f64(const cc_geom *g, int m, const double *x, const double *w,
                        const double *bias, double *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_adj_f32(const cc_geom *g, int m, const float *y, const float *w,
                        const float *bias, float *x, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_adj_f64(const cc_geom *g, int m, const double *y, const double *w,
                        const double *bias, double *x, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_wgrad_f32(const cc_geom *g, int m, const float *x, const float *gy, float *gw,
                          void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_wgrad_f64(const cc_geom *g, int m, const double *x, const double *gy, double *gw,
                          void *ws, int64_t ws_bytes, int nthreads)
    void cc_bias_grad_f32(int64_t batch, int64_t channels, int64_t spatial,
                          const float *gy, float *gb, int nthreads)
    void cc_bias_grad_f64(int64_t batch, int64_t channels, int64_t spatial,
                          const double *gy, double *gb, int nthreads)
    const char *cc_blas_config()
    const char *cc_blas_corename()
    int cc_openmp_max_threads()
    void cc_openmp_set_threads(int n)

    int64_t cc_conv_fwd_igemm_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_fwd_igemm_inplace(const cc_geom *g, int64_t elsize)
    int cc_conv_fwd_igemm_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                              float *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_fwd_igemm_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                              double *y, void *ws, int64_t ws_bytes, int nthreads)
    int64_t cc_conv_fwd_wino_workspace(const cc_geom *g, int nthreads, int64_t elsize)
    int64_t cc_conv_fwd_wino_phased(const cc_geom *g, int nthreads, int64_t elsize)
    int cc_conv_fwd_wino_f32(const cc_geom *g, const float *x, const float *w, const float *bias,
                             float *y, void *ws, int64_t ws_bytes, int nthreads)
    int cc_conv_fwd_wino_f64(const cc_geom *g, const double *x, const double *w, const double *bias,
                             double *y, void *ws, int64_t ws_bytes, int nthreads)

WORKSPACE_CAP = CC_WORKSPACE_CAP

include "_par.pxi"


cdef int _check(int rc) except -1:
    if rc == CC_ERR_NOMEM:
        raise MemoryError("cconv: the convolution's scratch memory is smaller than the kernel needs")
    if rc != CC_OK:
        raise ValueError("cconv: the C kernel rejected the convolution geometry")
    return 0


# The methods of src/gemm/gemm_conv.c (CC_M_*), by name.
METHODS = ("im2col", "gemm_1x1", "shift", "implicit_gemm", "winograd_3x3")


cdef int _method(str name) except -1:
    try:
        return METHODS.index(name)
    except ValueError:
        raise ValueError(f"unknown GEMM method {name!r}; expected one of {METHODS}") from None


cdef int _geom_or_false(cc_geom *g, tuple geom):
    try:
        fill_geom(g, geom)
    except (ValueError, TypeError, OverflowError, IndexError):
        return 0
    return 1


def applies(str kind, str method, tuple geom, int nthreads, int elsize):
    """True when ``method`` can run the 'fwd', 'adj' or 'wgrad' of ``geom``."""
    cdef cc_geom g
    cdef int m = _method(method)
    if not _geom_or_false(&g, geom):
        return False
    if kind == "fwd":
        return bool(cc_conv_fwd_applies(m, &g, nthreads, elsize))
    if kind == "adj":
        return bool(cc_conv_adj_applies(m, &g))
    if kind == "wgrad":
        return bool(cc_conv_wgrad_applies(m, &g, nthreads, elsize))
    raise ValueError(kind)


def wanted(str kind, str method, tuple geom, int nthreads, int elsize):
    """True when ``method`` applies to the 'fwd' or 'wgrad' of ``geom`` and
    the default choice prefers it (the caller tries the methods in
    _dispatch.ORDER: gemm_1x1, winograd_3x3, implicit_gemm, shift, im2col)."""
    cdef cc_geom g
    cdef int m = _method(method)
    if kind not in ("fwd", "wgrad"):
        raise ValueError(f"wanted: kind {kind!r} is not 'fwd' or 'wgrad'")
    if not _geom_or_false(&g, geom):
        return False
    if kind == "fwd":
        return bool(cc_conv_fwd_wanted(m, &g, nthreads, elsize))
    return bool(cc_conv_wgrad_wanted(m, &g, nthreads, elsize))


def fwd_split(str method, tuple geom, int elsize):
    """(images per block, column tiles per block, chunks of output
    channels): how the forward's GEMM plan of 'im2col' or 'gemm_1x1' (1x1 in
    place) cuts ``geom`` into work items (the same for every thread
    count)."""
    cdef cc_geom g
    cdef int64_t split[3]
    cdef int m = _method(method)
    fill_geom(&g, geom)
    if cc_conv_fwd_split(&g, m, elsize, split) != 0:
        raise ValueError(f"cconv: the {method} forward does not apply to {geom}")
    return (int(split[0]), int(split[1]), int(split[2]))


def workspace_bytes(str kind, str method, tuple geom, int nthreads, int elsize):
    """Scratch bytes the 'fwd', 'adj' or 'wgrad' kernel needs by ``method``."""
    cdef cc_geom g
    cdef int64_t n
    cdef int m = _method(method)
    fill_geom(&g, geom)
    if kind == "fwd":
        n = cc_conv_fwd_workspace(&g, m, nthreads, elsize)
    elif kind == "adj":
        n = cc_conv_adj_workspace(&g, m, nthreads, elsize)
    elif kind == "wgrad":
        n = cc_conv_wgrad_workspace(&g, m, nthreads, elsize)
    else:
        raise ValueError(kind)
    if n < 0:
        raise ValueError(f"cconv: the {method} {kind} kernel rejects the convolution geometry {geom}")
    return n


cdef enum:
    _FWD = 0
    _FWD_IGEMM = 1
    _ADJ = 2
    _FWD_WINO = 3


cdef int _conv(int op, int m, tuple geom, a, w, b, out, ws, int nthreads) except -1:
    """out = op(a, w) + b: the forward by method m (or, unchecked, the
    implicit GEMM or Winograd), or the adjoint by method m.  The forward
    reads a (batch, c_in, *in) and writes out (batch, c_out, *out), b over
    c_out; the adjoint the other way round, b over c_in.  Returns 1 when
    Winograd stopped at a NaN or an infinity (CC_NONFINITE), else 0."""
    cdef cc_geom g
    cdef int rc
    cdef conv_ptrs p
    cdef void *pws
    fill_geom(&g, geom)
    cdef int t = real_type(a, "y" if op == _ADJ else "x")
    conv_arrays(geom, t, op == _ADJ, a, w, b, out, &p)
    cdef int64_t nws = ws_ptr(ws, &pws)
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            rc = _conv_c(op, m, t, &g, &p, pws, nws, nthreads)
        tok = watch_end(tok)
    if rc == CC_NONFINITE and op == _FWD:
        return 1
    _check(rc)
    if _trace.events is not None and (op == _FWD or op == _ADJ):
        _trace.events.append(("adj" if op == _ADJ else "fwd", METHODS[m]))
    return 0


cdef int _conv_c(int op, int m, int t, const cc_geom *g, conv_ptrs *p, void *pws, int64_t nws,
                 int nthreads) noexcept nogil:
    """The C call of _conv (without the interpreter's lock)."""
    cdef int rc
    if t == cnp.NPY_FLOAT32:
        if op == _FWD:
            rc = cc_conv_fwd_f32(g, m, <const float *>p.src, <const float *>p.w,
                                 <const float *>p.b, <float *>p.dst, pws, nws, nthreads)
        elif op == _FWD_IGEMM:
            rc = cc_conv_fwd_igemm_f32(g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                       <float *>p.dst, pws, nws, nthreads)
        elif op == _FWD_WINO:
            rc = cc_conv_fwd_wino_f32(g, <const float *>p.src, <const float *>p.w, <const float *>p.b,
                                      <float *>p.dst, pws, nws, nthreads)
        else:
            rc = cc_conv_adj_f32(g, m, <const float *>p.src, <const float *>p.w,
                                 <const float *>p.b, <float *>p.dst, pws, nws, nthreads)
    else:
        if op == _FWD:
            rc = cc_conv_fwd_f64(g, m, <const double *>p.src, <const double *>p.w,
                                 <const double *>p.b, <double *>p.dst, pws, nws, nthreads)
        elif op == _FWD_IGEMM:
            rc = cc_conv_fwd_igemm_f64(g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                       <double *>p.dst, pws, nws, nthreads)
        elif op == _FWD_WINO:
            rc = cc_conv_fwd_wino_f64(g, <const double *>p.src, <const double *>p.w, <const double *>p.b,
                                      <double *>p.dst, pws, nws, nthreads)
        else:
            rc = cc_conv_adj_f64(g, m, <const double *>p.src, <const double *>p.w,
                                 <const double *>p.b, <double *>p.dst, pws, nws, nthreads)
    return rc


def conv_fwd(str method, tuple geom, x, w, b, y, ws, int nthreads):
    """y = conv(x, w) + b by ``method`` (``applies('fwd', ...)``); b may be
    None.  Arrays: C-contiguous float32 or float64 (one dtype) of the sizes
    ``geom`` gives; ws a uint8 array.  Returns True when the method is
    'winograd_3x3' and it stopped at a NaN or an infinity in x or w (y is
    then partly written: run another method), else False."""
    return _conv(_FWD, _method(method), geom, x, w, b, y, ws, nthreads) == 1


def igemm_workspace_bytes(tuple geom, int nthreads, int elsize):
    """Scratch bytes of the implicit-GEMM forward, or -1 when it cannot run."""
    cdef cc_geom g
    fill_geom(&g, geom)
    return cc_conv_fwd_igemm_workspace(&g, nthreads, elsize)


def igemm_inplace(tuple geom, int elsize):
    """Whether the implicit-GEMM forward of geom writes its output in place
    (its direct mode over one K block: src/igemm/ig_plan.h, inplace)."""
    cdef cc_geom g
    fill_geom(&g, geom)
    return bool(cc_conv_fwd_igemm_inplace(&g, elsize))


def conv_fwd_igemm(tuple geom, x, w, b, y, ws, int nthreads):
    """y = conv(x, w) + b by the implicit GEMM (src/igemm); b may be None."""
    _conv(_FWD_IGEMM, 0, geom, x, w, b, y, ws, nthreads)


def wino_workspace_bytes(tuple geom, int nthreads, int elsize):
    """Scratch bytes of the Winograd F(2x2, 3x3) forward, or -1 when it cannot run."""
    cdef cc_geom g
    fill_geom(&g, geom)
    return cc_conv_fwd_wino_workspace(&g, nthreads, elsize)


def wino_phased_images(tuple geom, int nthreads, int elsize):
    """Images at a time whose input the Winograd forward copies phase by
    phase (dilation above 2), 0 where it splits the rows per run instead."""
    cdef cc_geom g
    fill_geom(&g, geom)
    return cc_conv_fwd_wino_phased(&g, nthreads, elsize)


def conv_fwd_wino(tuple geom, x, w, b, y, ws, int nthreads):
    """y = conv(x, w) + b by Winograd F(2x2, 3x3) (src/winograd/wino_conv.c),
    without the NaN/inf check: a 3x3 stride-1 geometry across the planes
    (2-D, or 3-D with any depth taps), else ValueError; b may be None."""
    _conv(_FWD_WINO, 0, geom, x, w, b, y, ws, nthreads)


def conv_adj(str method, tuple geom, y, w, b, x, ws, int nthreads):
    """x = conv_adjoint(y, w) + b by ``method`` ('im2col': GEMM + col2im, or
    'gemm_1x1'): grad_input, or a transposed forward; b may be None."""
    _conv(_ADJ, _method(method), geom, y, w, b, x, ws, nthreads)


def conv_wgrad(str method, tuple geom, x, gy, gw, ws, int nthreads):
    """gw = d<gy, conv(x, w)>/dw by ``method`` ('im2col', 'gemm_1x1',
    'shift' or 'implicit_gemm').  Returns True when the method is 'shift'
    and x holds a NaN or an infinity (gw then unwritten: run another
    method), else False."""
    cdef cc_geom g
    cdef int m = _method(method)
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
    cdef int tok = 1
    while tok:
        tok = watch_begin(cc_geom_macs(&g))
        with nogil:
            if t == cnp.NPY_FLOAT32:
                rc = cc_conv_wgrad_f32(&g, m, <const float *>px, <const float *>pgy, <float *>pgw,
                                       pws, nws, nthreads)
            else:
                rc = cc_conv_wgrad_f64(&g, m, <const double *>px, <const double *>pgy, <double *>pgw,
                                       pws, nws, nthreads)
        tok = watch_end(tok)
    if rc == CC_NONFINITE:
        return True
    _check(rc)
    if _trace.events is not None:
        _trace.events.append(("wgrad", METHODS[m]))
    return False


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
    cdef int tok = 1
    while tok:
        tok = watch_begin(<double>batch * channels * spatial)
        with nogil:
            if t == cnp.NPY_FLOAT32:
                cc_bias_grad_f32(batch, channels, spatial, <const float *>pgy, <float *>pgb, nthreads)
            else:
                cc_bias_grad_f64(batch, channels, spatial, <const double *>pgy, <double *>pgb, nthreads)
        tok = watch_end(tok)


def blas_config():
    return (<bytes>cc_blas_config()).decode("ascii", "replace")


def blas_corename():
    return (<bytes>cc_blas_corename()).decode("ascii", "replace")


cdef extern from "core/cpu.h" nogil:
    const char *cc_cpu_vendor()
    int cc_cpu_prefetch_rows()
    int cc_cpu_uk_gemm()
    int cc_cpu_family()
    int cc_cpu_dw_256()
    int cc_cpu_wino_small()
    int cc_cpu_long_kc()
    int cc_cpu_uk_long_kc()
    int cc_cpu_uk_spread_pf()
    int cc_cpu_ig_stem_direct()
    int cc_cpu_ig_weight_inplace()
    int cc_cpu_patch_pack()
    int cc_cpu_ig_kw_band()
    int cc_cpu_dw_flat()
    int cc_cpu_dw_direct()
    int cc_cpu_dw_a2p()
    int cc_cpu_ig_inplace()


def cpu_vendor():
    """'amd', 'intel' or 'other', as the C core sees the CPU."""
    return (<bytes>cc_cpu_vendor()).decode("ascii", "replace")


def cpu_family():
    """The CPU's family number (CPUID leaf 1; AMD Zen 4 is 25), -1 off x86-64."""
    return int(cc_cpu_family())


def dw_256():
    """Whether the AVX-512 build runs the depthwise 3x3 plane kernels and
    the depthwise weight gradient on 256-bit vectors (src/core/cpu.h:
    CCONV_DW_256, else AMD family 25, Zen 4).  They do only while the
    AVX-512 kernels are in use."""
    return bool(cc_cpu_dw_256())


def dw_flat():
    """Whether the depthwise forward may run dilated 3x3 planes by
    super-rows (src/core/cpu.h: CCONV_DW_FLAT, else on every CPU; where it
    wins: src/depthwise/dw_internal.h, dw_flat_wins)."""
    return bool(cc_cpu_dw_flat())


def dw_direct():
    """Whether the depthwise 3x3 plane kernels of stride 1 on 256-bit x86
    vectors read the input rows where they lie instead of copying them
    into row buffers (src/core/cpu.h: CCONV_DW_DIRECT, else on every
    CPU)."""
    return bool(cc_cpu_dw_direct())


def dw_a2p():
    """Whether the depthwise adjoint of stride 2 with K x K taps (K = 2 to
    5) runs plane by plane, several rows a step, rather than row by row
    (src/core/cpu.h: CCONV_DW_A2P, else on every CPU)."""
    return bool(cc_cpu_dw_a2p())


def ig_inplace():
    """Where the implicit GEMM's direct mode writes its output in place
    (src/core/cpu.h: CCONV_IG_INPLACE): 'all' kernel sets, 'wide' (the
    default: 64-byte vectors, AVX-512) or 'off'."""
    return ("off", "all", "wide")[cc_cpu_ig_inplace()]


def wino_small():
    """Whether the dense Winograd is the default for the smaller float32 3x3
    layers under 16-lane kernels (>= 32 channels, >= 14x14 outputs, >= 196
    tiles in the batch: src/core/cpu.h: CCONV_WINO_SMALL, else on every
    CPU).  It matters only while the AVX-512 kernels are in use."""
    return bool(cc_cpu_wino_small())


def long_kc():
    """Whether the AVX-512 micro-kernels of the implicit GEMM (and the own
    GEMM's products that pack B) run K blocks of 512 rather than 128
    (src/core/cpu.h: CCONV_LONG_KC, else on every CPU).  It matters only
    while the AVX-512 kernels are in use."""
    return bool(cc_cpu_long_kc())


def uk_long_kc():
    """The same for the own GEMM's products of few A panels, which read B
    in place (src/core/cpu.h: CCONV_UK_LONG_KC, else every vendor but
    Intel); its other products follow long_kc."""
    return bool(cc_cpu_uk_long_kc())


def uk_spread_pf():
    """Whether the own GEMM's products that read B in place prefetch the
    next B micro-panel inside the micro-kernel calls, spread over their
    products, rather than between the calls (src/core/cpu.h:
    CCONV_UK_SPREAD_PF, else on Intel CPUs)."""
    return bool(cc_cpu_uk_spread_pf())


def ig_stem_direct():
    """Whether the implicit GEMM's float32 AVX-512 kernels run strided stems
    (at most 4 input channels, output rows of 48 columns and more) in
    direct mode rather than packing B (src/core/cpu.h:
    CCONV_IG_STEM_DIRECT, else on Intel CPUs)."""
    return bool(cc_cpu_ig_stem_direct())


def ig_weight_inplace():
    """Whether the implicit GEMM's packed mode may read a float32 weight's
    rows where they lie instead of packing them, for products whose packed
    panels would each run a few times (small images; src/core/cpu.h:
    CCONV_IG_WEIGHT_INPLACE, else every CPU)."""
    return bool(cc_cpu_ig_weight_inplace())


def patch_pack():
    """Whether the GEMM convolutions pack the own GEMM's B micro-panels of
    non-overlapping patches (ViT's, ConvNeXt's, k = stride) straight from
    the input rather than through an im2col matrix (src/core/cpu.h:
    CCONV_PATCH_PACK, else every CPU); the same bits either way."""
    return bool(cc_cpu_patch_pack())


def ig_kw_band():
    """Whether the implicit GEMM's direct mode may run a float32 stem's
    tiles over a band of one block per column tap, dropping no computed
    column, where the phase band would drop more than 6% (src/core/cpu.h:
    CCONV_IG_KW_BAND, else every CPU); the same bits either way."""
    return bool(cc_cpu_ig_kw_band())


def prefetch_rows():
    """Whether the implicit GEMM's 16-lane float32 kernels and the dense
    Winograd prefetch the short row streams they read next (src/core/cpu.h:
    CCONV_PREFETCH_ROWS, else every vendor but Intel)."""
    return bool(cc_cpu_prefetch_rows())


def uk_gemm():
    """Whether the GEMM convolutions' float32 products may run on the
    implicit GEMM's micro-kernels where they win (src/gemm/uk_gemm.c)
    rather than OpenBLAS's (src/core/cpu.h: CCONV_UK_GEMM, else on every
    CPU).  They run there only with the 16-lane float32 kernels
    (AVX-512)."""
    return bool(cc_cpu_uk_gemm())


cdef extern from "gemm/uk_gemm.h" nogil:
    int cc_uk_gemm_runs()
    int cc_uk_gemm_f64_runs()
    int cc_uk_gemm_takes_f32(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K)
    int cc_uk_gemm_takes_f64(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K)


def uk_gemm_runs():
    """Whether float32 products run on that GEMM in this process: the vendor
    choice (uk_gemm) with the 16-lane float32 kernels (AVX-512)."""
    return bool(cc_uk_gemm_runs())


def uk_gemm_f64_runs():
    """Whether float64 products that pack B run on that GEMM in this
    process: the vendor choice (src/core/cpu.h: CCONV_UK_GEMM_F64, else on
    Intel CPUs) with the 8-lane float64 kernels (AVX-512)."""
    return bool(cc_uk_gemm_f64_runs())


def uk_gemm_takes(int elsize, bint trans_a, bint trans_b, int64_t M, int64_t N, int64_t K):
    """Whether that GEMM takes a product C (M x N) = op(A) (M x K) op(B)
    (K x N) of elements of elsize bytes (4 or 8) in this process, rather
    than OpenBLAS (src/gemm/uk_gemm.inc: its rule alone)."""
    if elsize == 4:
        return bool(cc_uk_gemm_takes_f32(trans_a, trans_b, M, N, K))
    if elsize == 8:
        return bool(cc_uk_gemm_takes_f64(trans_a, trans_b, M, N, K))
    raise ValueError(f"uk_gemm_takes: elsize must be 4 or 8, but got {elsize}")


cdef extern from "core/fpflags.h" nogil:
    int cc_fp_denormal_seen(int clear)
    int cc_fp_denormal_seen_team(int nthreads, int clear)


def denormal_operand_seen(bint clear=True, int nthreads=1):
    """Whether an instruction read a denormal operand since the flag was
    last cleared (x86's MXCSR), on this thread (nthreads 1) or on any of a
    team of ``nthreads`` OpenMP threads (this one and the workers the
    kernels run on), clearing it when ``clear``; None where the CPU keeps
    no such flag.  The tests read it around a call on scratch memory filled
    with denormals: a kernel that computes on scratch it did not write sets
    it."""
    cdef int r = cc_fp_denormal_seen(clear) if nthreads <= 1 else cc_fp_denormal_seen_team(nthreads, clear)
    return None if r < 0 else bool(r)


def openmp_max_threads():
    return cc_openmp_max_threads()


def openmp_set_threads(int n):
    cc_openmp_set_threads(n)


include "_isa.pxi"
