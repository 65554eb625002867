/*
 * im2col / col2im for the CUDA GEMM backends (cconv/backends/cuda_gemm*.py),
 * and the two layout changes between NCHW images and column buffers.
 * Geometry and buffer layouts: cc_common.cuh.  One thread per element
 * written; col2im is a gather (each image element sums the column entries of
 * the taps that hit it), so there are no atomics and the result does not
 * depend on the launch.
 */
#ifndef CC_COMMON_CUH
#include "cc_common.cuh"
#endif

/* col[e] for e over the whole buffer of nb images (x points at the first),
 * channels C (cig per group), columns p0 .. p0+np-1; layout 0 or 1. */
template <typename T>
static __device__ __forceinline__ void cc_im2col_body(
    const T *__restrict__ x, T *__restrict__ col, const cc_i64 nb,
    const cc_i64 C, const cc_i64 cig, const cc_i64 p0, const cc_i64 np,
    const cc_i64 layout, CC_GEOM_PARAMS) {
    const cc_i64 kk = K0 * K1 * K2;
    const cc_i64 K = cig * kk;
    const cc_i64 M = nb * np;
    const cc_i64 total = C * kk * M;
    (void)O0; /* the outermost output index is what is left of p */
    CC_FOR_EACH(e, total) {
        cc_i64 c, t, m;
        if (layout == 0) {
            m = e % M;
            const cc_i64 r = e / M;
            t = r % kk;
            c = r / kk;
        } else {
            const cc_i64 k = e % K;
            const cc_i64 r = e / K;
            m = r % M;
            const cc_i64 g = r / M;
            t = k % kk;
            c = g * cig + k / kk;
        }
        const cc_i64 n = m / np;
        const cc_i64 p = p0 + (m - n * np);
        const cc_i64 o2 = p % O2, pq = p / O2;
        const cc_i64 o1 = pq % O1, o0 = pq / O1;
        const cc_i64 t2 = t % K2, tq = t / K2;
        const cc_i64 t1 = tq % K1, t0 = tq / K1;
        const cc_i64 i0 = o0 * S0 - P0 + t0 * D0;
        const cc_i64 i1 = o1 * S1 - P1 + t1 * D1;
        const cc_i64 i2 = o2 * S2 - P2 + t2 * D2;
        T v = (T)0;
        if (cc_in(i0, I0) && cc_in(i1, I1) && cc_in(i2, I2))
            v = x[(((n * C + c) * I0 + i0) * I1 + i1) * I2 + i2];
        col[e] = v;
    }
}

/* x[n, c, q] for q in q0 .. q0+nq-1 (flattened image positions) of nb
 * images: the sum over taps of the layout-0 column entries whose column lies
 * in p0 .. p0+np-1, plus bias[c] when has_bias, plus the old x[n, c, q] when
 * accumulate. */
template <typename T>
static __device__ __forceinline__ void cc_col2im_body(
    const T *__restrict__ col, T *x, const T *bias, const cc_i64 has_bias,
    const cc_i64 accumulate, const cc_i64 nb, const cc_i64 C, const cc_i64 p0,
    const cc_i64 np, const cc_i64 q0, const cc_i64 nq, CC_GEOM_PARAMS) {
    const cc_i64 kk = K0 * K1 * K2;
    const cc_i64 M = nb * np;
    const cc_i64 Iflat = I0 * I1 * I2;
    const cc_i64 total = nb * C * nq;
    CC_FOR_EACH(e, total) {
        const cc_i64 q = q0 + e % nq;
        const cc_i64 r = e / nq;
        const cc_i64 c = r % C;
        const cc_i64 n = r / C;
        const cc_i64 i2 = q % I2, qq = q / I2;
        const cc_i64 i1 = qq % I1, i0 = qq / I1;
        const cc_i64 base = c * kk * M + n * np - p0;
        T s = (T)0;
        for (cc_i64 t0 = 0; t0 < K0; ++t0) {
            const cc_i64 o0 = cc_out_of(i0, t0, S0, P0, D0, O0);
            if (o0 < 0) continue;
            for (cc_i64 t1 = 0; t1 < K1; ++t1) {
                const cc_i64 o1 = cc_out_of(i1, t1, S1, P1, D1, O1);
                if (o1 < 0) continue;
                for (cc_i64 t2 = 0; t2 < K2; ++t2) {
                    const cc_i64 o2 = cc_out_of(i2, t2, S2, P2, D2, O2);
                    if (o2 < 0) continue;
                    const cc_i64 p = (o0 * O1 + o1) * O2 + o2;
                    if (!cc_in(p - p0, np)) continue;
                    const cc_i64 t = (t0 * K1 + t1) * K2 + t2;
                    s += col[base + t * M + p];
                }
            }
        }
        if (has_bias) s += bias[c];
        const cc_i64 xi = (n * C + c) * Iflat + q;
        x[xi] = accumulate ? x[xi] + s : s;
    }
}

/* dst (C, nb, np) from columns p0 .. p0+np-1 of src (nb, C, P). */
template <typename T>
static __device__ __forceinline__ void cc_cols_from_nchw_body(
    const T *__restrict__ src, T *__restrict__ dst, const cc_i64 nb,
    const cc_i64 C, const cc_i64 P, const cc_i64 p0, const cc_i64 np) {
    const cc_i64 total = C * nb * np;
    CC_FOR_EACH(e, total) {
        const cc_i64 j = e % np;
        const cc_i64 r = e / np;
        const cc_i64 n = r % nb;
        const cc_i64 c = r / nb;
        dst[e] = src[(n * C + c) * P + p0 + j];
    }
}

/* Columns p0 .. p0+np-1 of dst (nb, C, P) from src (C, nb, np), plus bias[c]
 * when has_bias.  src may be dst itself when nb == 1 and np == P. */
template <typename T>
static __device__ __forceinline__ void cc_nchw_from_cols_body(
    const T *src, T *dst, const T *bias, const cc_i64 has_bias,
    const cc_i64 nb, const cc_i64 C, const cc_i64 P, const cc_i64 p0,
    const cc_i64 np) {
    const cc_i64 total = nb * C * np;
    CC_FOR_EACH(e, total) {
        const cc_i64 j = e % np;
        const cc_i64 r = e / np;
        const cc_i64 c = r % C;
        const cc_i64 n = r / C;
        T v = src[(c * nb + n) * np + j];
        if (has_bias) v += bias[c];
        dst[(n * C + c) * P + p0 + j] = v;
    }
}

#define CC_IM2COL_KERNELS(T, SFX)                                                     \
    extern "C" __global__ void cc_im2col_##SFX(                                       \
        const T *__restrict__ x, T *__restrict__ col, const cc_i64 nb,                \
        const cc_i64 C, const cc_i64 cig, const cc_i64 p0, const cc_i64 np,           \
        const cc_i64 layout, CC_GEOM_PARAMS) {                                        \
        cc_im2col_body<T>(x, col, nb, C, cig, p0, np, layout, CC_GEOM_ARGS);          \
    }                                                                                 \
    extern "C" __global__ void cc_col2im_##SFX(                                       \
        const T *__restrict__ col, T *x, const T *bias, const cc_i64 has_bias,        \
        const cc_i64 accumulate, const cc_i64 nb, const cc_i64 C, const cc_i64 p0,    \
        const cc_i64 np, const cc_i64 q0, const cc_i64 nq, CC_GEOM_PARAMS) {          \
        cc_col2im_body<T>(col, x, bias, has_bias, accumulate, nb, C, p0, np, q0, nq,  \
                          CC_GEOM_ARGS);                                              \
    }                                                                                 \
    extern "C" __global__ void cc_cols_from_nchw_##SFX(                               \
        const T *__restrict__ src, T *__restrict__ dst, const cc_i64 nb,              \
        const cc_i64 C, const cc_i64 P, const cc_i64 p0, const cc_i64 np) {           \
        cc_cols_from_nchw_body<T>(src, dst, nb, C, P, p0, np);                        \
    }                                                                                 \
    extern "C" __global__ void cc_nchw_from_cols_##SFX(                               \
        const T *src, T *dst, const T *bias, const cc_i64 has_bias, const cc_i64 nb,  \
        const cc_i64 C, const cc_i64 P, const cc_i64 p0, const cc_i64 np) {           \
        cc_nchw_from_cols_body<T>(src, dst, bias, has_bias, nb, C, P, p0, np);        \
    }

CC_IM2COL_KERNELS(float, f32)
CC_IM2COL_KERNELS(double, f64)
