# Array arguments of the kernel wrappers (_kernels, _depthwise, _winograd,
# _nhwc), read through NumPy's C API: a type, flag and size check and the
# data pointer, with no memoryview objects and no fused-signature dispatch.
# A call costs about 0.1 us per array instead of the 1-1.5 us of a typed
# memoryview, which matters for the small convolutions an inference loop
# runs back to back.  Every module that cimports this must call
# ``cnp.import_array()`` at import.
cimport numpy as cnp
from libc.stdint cimport int64_t

cdef enum:
    ARR_OPTIONAL = 1   # None is allowed (pointer NULL)
    ARR_WRITE = 2      # the kernel writes the array


cdef inline int real_type(object a, str name) except -1:
    """NPY_FLOAT32 or NPY_FLOAT64: the dtype of array ``a`` that fixes the
    kernel's; TypeError for anything else."""
    if not cnp.PyArray_Check(a):
        raise TypeError(f"{name}: expected a numpy.ndarray, got {type(a).__name__}")
    cdef int t = cnp.PyArray_TYPE(<cnp.ndarray>a)
    if t != cnp.NPY_FLOAT32 and t != cnp.NPY_FLOAT64:
        raise TypeError(f"{name}: expected a float32 or float64 array, got {(<cnp.ndarray>a).dtype}")
    return t


cdef inline object prod3(object t):
    """The product of a 3-tuple of Python ints (no overflow)."""
    return t[0] * t[1] * t[2]


# Element counts of the plain-convolution geometry tuple (ConvParams.geom():
# batch, groups, c_in, c_out, in3, out3, k3, ...), as Python ints.
cdef inline object x_elems(tuple geom):
    """The input side: batch * c_in * prod(in)."""
    return geom[0] * geom[2] * prod3(geom[4])


cdef inline object y_elems(tuple geom):
    """The output side: batch * c_out * prod(out)."""
    return geom[0] * geom[3] * prod3(geom[5])


cdef inline object w_elems(tuple geom):
    """The weight: c_out * (c_in / groups) * prod(k), or None (no check)
    when the groups do not divide c_in: the C kernels then reject the
    geometry before reading anything."""
    cdef object groups = geom[1]
    if groups <= 0 or geom[2] % groups != 0:
        return None
    return geom[3] * (geom[2] // groups) * prod3(geom[6])


cdef inline int arr_ptr(object a, str name, int typenum, object n, int flags,
                        void **p) except -1:
    """p[0] = the data of ``a``, a C-contiguous, aligned array of dtype
    ``typenum`` with ``n`` elements (any n when ``n`` is None), writable
    under ARR_WRITE; NULL when it is empty (or None under ARR_OPTIONAL).
    TypeError for a non-array or another dtype, ValueError otherwise."""
    p[0] = NULL
    if a is None:
        if flags & ARR_OPTIONAL:
            return 0
        raise ValueError(f"{name}: an array is required")
    if not cnp.PyArray_Check(a):
        raise TypeError(f"{name}: expected a numpy.ndarray, got {type(a).__name__}")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if cnp.PyArray_TYPE(arr) != typenum:
        raise TypeError(
            f"{name}: expected a {cnp.PyArray_DescrFromType(typenum)} array, got {arr.dtype}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr):
        raise ValueError(f"{name}: the array must be C-contiguous")
    if not cnp.PyArray_ISALIGNED(arr):
        raise ValueError(f"{name}: the array is not aligned to its dtype")
    if (flags & ARR_WRITE) and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name}: the array is read-only")
    cdef cnp.npy_intp size = cnp.PyArray_SIZE(arr)
    if n is not None and size != n:
        raise ValueError(f"{name}: expected {n} elements for this geometry, got {size}")
    if size > 0:
        p[0] = cnp.PyArray_DATA(arr)
    return 0


cdef inline int64_t ws_ptr(object ws, void **p) except -1:
    """p[0] = the data of the uint8 scratch array ``ws`` (None: none);
    returns its size in bytes."""
    arr_ptr(ws, "ws", cnp.NPY_UINT8, None, ARR_OPTIONAL | ARR_WRITE, p)
    return 0 if ws is None else cnp.PyArray_SIZE(<cnp.ndarray>ws)


# The four arrays of a convolution call, read with arr_ptr: the source, the
# weight, the bias (optional) and the written destination, one dtype t.
cdef struct conv_ptrs:
    void *src
    void *w
    void *b
    void *dst


cdef inline int conv_arrays(tuple geom, int t, int adjoint, src, w, b, dst,
                            conv_ptrs *p) except -1:
    """The forward (adjoint=0): src = x (the input side), b over c_out,
    dst = y (the output side).  The adjoint, grad_input or a transposed
    forward (adjoint=1): src = y, b over c_in, dst = x.  Messages name the
    arrays x, w, b, y as the plain convolution does."""
    if adjoint:
        arr_ptr(src, "y", t, y_elems(geom), 0, &p.src)
        arr_ptr(w, "w", t, w_elems(geom), 0, &p.w)
        arr_ptr(b, "b", t, geom[2], ARR_OPTIONAL, &p.b)
        arr_ptr(dst, "x", t, x_elems(geom), ARR_WRITE, &p.dst)
    else:
        arr_ptr(src, "x", t, x_elems(geom), 0, &p.src)
        arr_ptr(w, "w", t, w_elems(geom), 0, &p.w)
        arr_ptr(b, "b", t, geom[3], ARR_OPTIONAL, &p.b)
        arr_ptr(dst, "y", t, y_elems(geom), ARR_WRITE, &p.dst)
    return 0
