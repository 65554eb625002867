# cython: language_level=3
"""NumPy arrays on cconv's cache of freed result blocks (src/core/outbuf.h).

``empty(shape, dtype)`` is ``numpy.empty`` with the data taken from, and
given back to, that cache: a NumPy memory handler (NEP 49) is set for the
one allocation and restored at once.  The array is an ordinary one (it owns
its data; NumPy keeps the handler alive with it), and when it is freed its
block waits in the cache for the next result of about its size instead of
going back to the system, whose fresh pages cost a fault each on first touch.
"""
from libc.stdint cimport int64_t

cimport numpy as cnp

import numpy as np

cnp.import_array()

cdef extern from "core/outbuf.h" nogil:
    size_t CC_OUTBUF_MIN_BYTES
    size_t CC_OUTBUF_MAX_BYTES
    size_t CC_OUTBUF_CAP_BYTES
    int CC_OUTBUF_SLOTS
    void cc_outbuf_release()
    void cc_outbuf_stats(int64_t *nbytes, int64_t *blocks)

cdef extern from *:
    """
    #include "core/outbuf.h"
    static void *ob_h_malloc(void *ctx, size_t n) { (void)ctx; return cc_outbuf_alloc(n, 0); }
    static void *ob_h_calloc(void *ctx, size_t nelem, size_t elsize) {
        (void)ctx;
        if (elsize && nelem > ((size_t)-1) / elsize) return NULL;
        return cc_outbuf_alloc(nelem * elsize, 1);
    }
    static void *ob_h_realloc(void *ctx, void *p, size_t n) { (void)ctx; return cc_outbuf_realloc(p, n); }
    static void ob_h_free(void *ctx, void *p, size_t n) { (void)ctx; (void)n; cc_outbuf_free(p); }
    static PyDataMem_Handler ob_handler = {
        "cconv_outbuf", 1, {NULL, ob_h_malloc, ob_h_calloc, ob_h_realloc, ob_h_free}};
    static PyObject *ob_capsule(void) { return PyCapsule_New(&ob_handler, "mem_handler", NULL); }
    """
    object ob_capsule()
    object PyDataMem_SetHandler(object handler)

_HANDLER = ob_capsule()

#: the cache's bounds: smallest and largest block kept, bytes and blocks in all
MIN_BYTES = CC_OUTBUF_MIN_BYTES
MAX_BYTES = CC_OUTBUF_MAX_BYTES
CAP_BYTES = CC_OUTBUF_CAP_BYTES
SLOTS = CC_OUTBUF_SLOTS


def empty(shape, dtype) -> np.ndarray:
    """``numpy.empty(shape, dtype)`` on the cache (C order).  A result below
    the cache's smallest block size is a plain ``numpy.empty``: setting the
    handler costs about 1 us, more than such a block gains."""
    cdef double nbytes = (<cnp.dtype>dtype).itemsize if isinstance(dtype, cnp.dtype) else np.dtype(dtype).itemsize
    for s in ((shape,) if isinstance(shape, int) else shape):
        nbytes *= s
    if nbytes < CC_OUTBUF_MIN_BYTES:
        return np.empty(shape, dtype=dtype)
    return empty_pooled(shape, dtype)


def empty_pooled(shape, dtype) -> np.ndarray:
    """``numpy.empty(shape, dtype)`` on the cache whatever its size (for a
    caller that has made ``empty``'s size test once already)."""
    old = PyDataMem_SetHandler(_HANDLER)
    try:
        return np.empty(shape, dtype=dtype)
    finally:
        PyDataMem_SetHandler(old)


def release() -> None:
    """Give every cached block back to the system."""
    cc_outbuf_release()


def stats() -> tuple:
    """(bytes, blocks) held in the cache now."""
    cdef int64_t nbytes = 0, blocks = 0
    cc_outbuf_stats(&nbytes, &blocks)
    return int(nbytes), int(blocks)
