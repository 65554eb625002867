/*
 * cconv CUDA kernels: shared definitions.
 *
 * The kernels are compiled at run time by CuPy (NVRTC, cconv/_cuda_kernels.py
 * concatenates this header and the .cu files of this folder into one
 * RawModule), by nvcc in tests/test_cuda_sources.py, and as plain C++ on the
 * CPU by tests/c/cuda_harness.cpp, which defines __global__, blockIdx, ...
 * and runs the grid sequentially.  So:
 *
 *   - no #include of system headers (NVRTC has none), only this file;
 *   - no shared memory, no __syncthreads, no atomics, no warp intrinsics:
 *     every kernel is a grid-stride loop whose iterations are independent,
 *     so any launch configuration (and a sequential loop) gives the same,
 *     bit-identical result;
 *   - every index and size is a 64-bit `long long`; every scalar argument
 *     is a `long long` (the CPU harness passes all arguments as 64-bit
 *     integers).
 *
 * Geometry: that of the *plain* convolution, as in src/cconv.h, padded to
 * three spatial dims with leading 1s:
 *
 *   x : (n, c_in,  I0, I1, I2)      the image side
 *   y : (n, c_out, O0, O1, O2)      the column side
 *   y[n, co, o] = sum_{ci in group(co), t} w[co, ci, t] * x[n, ci, o*S - P + t*D]
 *
 * Column buffers for the GEMM path ("col"), for a tile of `nb` images and
 * the flattened output positions p0 .. p0+np-1 of each:
 *
 *   layout 0:  (C, kk, nb, np)  = (groups, K, M)   K = cig*kk, M = nb*np
 *   layout 1:  (groups, M, K)                      (the transpose per group)
 */
#ifndef CC_COMMON_CUH
#define CC_COMMON_CUH

typedef long long cc_i64;

/* The 18 geometry scalars every convolution kernel takes, in this order
 * (cconv/_cuda_kernels.py: geom_args builds them). */
#define CC_GEOM_PARAMS                                                       \
    const cc_i64 I0, const cc_i64 I1, const cc_i64 I2,                      \
    const cc_i64 O0, const cc_i64 O1, const cc_i64 O2,                      \
    const cc_i64 K0, const cc_i64 K1, const cc_i64 K2,                      \
    const cc_i64 S0, const cc_i64 S1, const cc_i64 S2,                      \
    const cc_i64 P0, const cc_i64 P1, const cc_i64 P2,                      \
    const cc_i64 D0, const cc_i64 D1, const cc_i64 D2
#define CC_GEOM_ARGS I0, I1, I2, O0, O1, O2, K0, K1, K2, S0, S1, S2, P0, P1, P2, D0, D1, D2

/* Grid-stride loop over [0, n). */
#define CC_FOR_EACH(i, n)                                                    \
    for (cc_i64 i = (cc_i64)blockIdx.x * (cc_i64)blockDim.x + (cc_i64)threadIdx.x; \
         i < (n); i += (cc_i64)blockDim.x * (cc_i64)gridDim.x)

/* The output index o with o*S - P + t*D == i along one dim, or -1 when there
 * is none in [0, O) (the gather form of col2im / the adjoint). */
static __device__ __forceinline__ cc_i64 cc_out_of(cc_i64 i, cc_i64 t, cc_i64 S,
                                                   cc_i64 P, cc_i64 D, cc_i64 O) {
    cc_i64 num = i + P - t * D;
    if (num < 0) return -1;
    cc_i64 o = num / S;
    if (o * S != num || o >= O) return -1;
    return o;
}

/* True when 0 <= i < n. */
static __device__ __forceinline__ bool cc_in(cc_i64 i, cc_i64 n) {
    return (unsigned long long)i < (unsigned long long)n;
}

#endif /* CC_COMMON_CUH */
