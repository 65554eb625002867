/*
 * Deterministic reductions without atomics: a first kernel writes partial
 * sums (in double) of fixed chunks, one thread per (output, chunk), and
 * cc_reduce_parts adds each output's chunks in index order.  The chunking
 * depends only on the shapes, so results are bit-identical from call to
 * call whatever the launch configuration.
 *
 *   cc_bias_part:    part[c*nchunks + k] = sum of gy[n, c, p] over the
 *                    flattened (n, p) in k*len .. min((k+1)*len, N*P)
 *   cc_reduce_parts: out[e] = (T) sum_k part[e*nparts + k]
 */
#ifndef CC_COMMON_CUH
#include "cc_common.cuh"
#endif

template <typename T>
static __device__ __forceinline__ void cc_bias_part_body(
    const T *__restrict__ gy, double *__restrict__ part, const cc_i64 N,
    const cc_i64 C, const cc_i64 P, const cc_i64 nchunks, const cc_i64 len) {
    const cc_i64 L = N * P;
    const cc_i64 total = C * nchunks;
    CC_FOR_EACH(e, total) {
        const cc_i64 k = e % nchunks;
        const cc_i64 c = e / nchunks;
        const cc_i64 j0 = k * len;
        const cc_i64 j1 = (j0 + len < L) ? j0 + len : L;
        double acc = 0.0;
        if (j0 < j1) {
            cc_i64 n = j0 / P;
            cc_i64 p = j0 - n * P;
            cc_i64 j = j0;
            while (j < j1) {
                cc_i64 cnt = P - p;
                if (cnt > j1 - j) cnt = j1 - j;
                const cc_i64 b = (n * C + c) * P + p;
                for (cc_i64 i = 0; i < cnt; ++i) acc += (double)gy[b + i];
                j += cnt;
                ++n;
                p = 0;
            }
        }
        part[e] = acc;
    }
}

template <typename T>
static __device__ __forceinline__ void cc_reduce_parts_body(
    const double *__restrict__ part, T *__restrict__ out, const cc_i64 nout,
    const cc_i64 nparts) {
    CC_FOR_EACH(e, nout) {
        double s = 0.0;
        for (cc_i64 k = 0; k < nparts; ++k) s += part[e * nparts + k];
        out[e] = (T)s;
    }
}

#define CC_REDUCE_KERNELS(T, SFX)                                                       \
    extern "C" __global__ void cc_bias_part_##SFX(                                      \
        const T *__restrict__ gy, double *__restrict__ part, const cc_i64 N,            \
        const cc_i64 C, const cc_i64 P, const cc_i64 nchunks, const cc_i64 len) {       \
        cc_bias_part_body<T>(gy, part, N, C, P, nchunks, len);                          \
    }                                                                                   \
    extern "C" __global__ void cc_reduce_parts_##SFX(                                   \
        const double *__restrict__ part, T *__restrict__ out, const cc_i64 nout,        \
        const cc_i64 nparts) {                                                          \
        cc_reduce_parts_body<T>(part, out, nout, nparts);                               \
    }

CC_REDUCE_KERNELS(float, f32)
CC_REDUCE_KERNELS(double, f64)
