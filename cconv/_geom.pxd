# The C core's convolution geometry (src/cconv.h) and its filling from the
# tuple ConvParams.geom() returns, shared by the kernel wrappers (_kernels,
# _depthwise, _winograd, _nhwc).
from libc.stdint cimport int64_t

cdef extern from "cconv.h" nogil:
    ctypedef struct cc_geom:
        int64_t batch
        int64_t groups
        int64_t c_in
        int64_t c_out
        int64_t[3] in_ "in"
        int64_t[3] out
        int64_t[3] k
        int64_t[3] stride
        int64_t[3] pad
        int64_t[3] dil
    int CC_OK, CC_ERR_NOMEM, CC_ERR_ARG

cdef inline int fill_geom(cc_geom *g, tuple geom) except -1:
    """geom = (batch, groups, c_in, c_out, in3, out3, k3, stride3, pad3, dil3)."""
    cdef int d
    if len(geom) != 10:
        raise ValueError(f"geom: expected 10 entries, got {len(geom)}")
    g.batch = geom[0]
    g.groups = geom[1]
    g.c_in = geom[2]
    g.c_out = geom[3]
    for d in range(3):
        g.in_[d] = geom[4][d]
        g.out[d] = geom[5][d]
        g.k[d] = geom[6][d]
        g.stride[d] = geom[7][d]
        g.pad[d] = geom[8][d]
        g.dil[d] = geom[9][d]
    return 0
