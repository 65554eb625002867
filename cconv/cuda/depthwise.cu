/*
 * Direct depthwise convolution for the CUDA_DEPTHWISE backend: groups ==
 * C (the plain convolution's input channels), channel multiplier Mu, so the
 * weight is (C*Mu, 1, K0, K1, K2) and output channel co reads input channel
 * co / Mu.  Geometry: cc_common.cuh.
 *
 *   cc_dw_fwd:        y  = conv(x, w) (+ bias[co])             one thread per y element
 *   cc_dw_adj:        gx = conv_adjoint(gy, w) (+ bias[c])     one thread per gx element (gather)
 *   cc_dw_wgrad_part: partial sums of gw = d<gy, conv(x, w)>/dw over fixed
 *                     chunks of output rows, in double;        one thread per (weight, chunk)
 *   (cc_reduce_parts in reduce.cu adds the chunks in a fixed order.)
 */
#ifndef CC_COMMON_CUH
#include "cc_common.cuh"
#endif

template <typename T>
static __device__ __forceinline__ void cc_dw_fwd_body(
    const T *__restrict__ x, const T *__restrict__ w, const T *bias,
    const cc_i64 has_bias, T *__restrict__ y, const cc_i64 N, const cc_i64 C,
    const cc_i64 Mu, CC_GEOM_PARAMS) {
    const cc_i64 kk = K0 * K1 * K2;
    const cc_i64 CO = C * Mu;
    const cc_i64 Oflat = O0 * O1 * O2;
    const cc_i64 Iflat = I0 * I1 * I2;
    const cc_i64 total = N * CO * Oflat;
    CC_FOR_EACH(e, total) {
        const cc_i64 o = e % Oflat;
        const cc_i64 r = e / Oflat;
        const cc_i64 co = r % CO;
        const cc_i64 n = r / CO;
        const cc_i64 o2 = o % O2, oq = o / O2;
        const cc_i64 o1 = oq % O1, o0 = oq / O1;
        const cc_i64 xb = (n * C + co / Mu) * Iflat;
        const cc_i64 wb = co * kk;
        T s = (T)0;
        for (cc_i64 t0 = 0; t0 < K0; ++t0) {
            const cc_i64 i0 = o0 * S0 - P0 + t0 * D0;
            if (!cc_in(i0, I0)) continue;
            for (cc_i64 t1 = 0; t1 < K1; ++t1) {
                const cc_i64 i1 = o1 * S1 - P1 + t1 * D1;
                if (!cc_in(i1, I1)) continue;
                const cc_i64 xr = xb + (i0 * I1 + i1) * I2;
                const cc_i64 wr = wb + (t0 * K1 + t1) * K2;
                for (cc_i64 t2 = 0; t2 < K2; ++t2) {
                    const cc_i64 i2 = o2 * S2 - P2 + t2 * D2;
                    if (!cc_in(i2, I2)) continue;
                    s += w[wr + t2] * x[xr + i2];
                }
            }
        }
        if (has_bias) s += bias[co];
        y[e] = s;
    }
}

template <typename T>
static __device__ __forceinline__ void cc_dw_adj_body(
    const T *__restrict__ gy, const T *__restrict__ w, const T *bias,
    const cc_i64 has_bias, T *__restrict__ gx, const cc_i64 N, const cc_i64 C,
    const cc_i64 Mu, CC_GEOM_PARAMS) {
    const cc_i64 kk = K0 * K1 * K2;
    const cc_i64 CO = C * Mu;
    const cc_i64 Oflat = O0 * O1 * O2;
    const cc_i64 Iflat = I0 * I1 * I2;
    const cc_i64 total = N * C * Iflat;
    CC_FOR_EACH(e, total) {
        const cc_i64 q = e % Iflat;
        const cc_i64 r = e / Iflat;
        const cc_i64 c = r % C;
        const cc_i64 n = r / C;
        const cc_i64 i2 = q % I2, qq = q / I2;
        const cc_i64 i1 = qq % I1, i0 = qq / I1;
        T s = (T)0;
        for (cc_i64 j = 0; j < Mu; ++j) {
            const cc_i64 co = c * Mu + j;
            const cc_i64 gb = (n * CO + co) * Oflat;
            const cc_i64 wb = co * kk;
            for (cc_i64 t0 = 0; t0 < K0; ++t0) {
                const cc_i64 o0 = cc_out_of(i0, t0, S0, P0, D0, O0);
                if (o0 < 0) continue;
                for (cc_i64 t1 = 0; t1 < K1; ++t1) {
                    const cc_i64 o1 = cc_out_of(i1, t1, S1, P1, D1, O1);
                    if (o1 < 0) continue;
                    const cc_i64 gr = gb + (o0 * O1 + o1) * O2;
                    const cc_i64 wr = wb + (t0 * K1 + t1) * K2;
                    for (cc_i64 t2 = 0; t2 < K2; ++t2) {
                        const cc_i64 o2 = cc_out_of(i2, t2, S2, P2, D2, O2);
                        if (o2 < 0) continue;
                        s += w[wr + t2] * gy[gr + o2];
                    }
                }
            }
        }
        if (has_bias) s += bias[c];
        gx[e] = s;
    }
}

/* First o in [0, O) with o*S - P + off >= 0, and one past the last
 * with o*S - P + off < len: the outputs of a tap that read inside the image. */
static __device__ __forceinline__ cc_i64 cc_first_out(cc_i64 S, cc_i64 P, cc_i64 off,
                                                      cc_i64 O) {
    const cc_i64 num = P - off;
    const cc_i64 o = num <= 0 ? 0 : (num + S - 1) / S;
    return o < O ? o : O;
}
static __device__ __forceinline__ cc_i64 cc_end_out(cc_i64 S, cc_i64 P, cc_i64 off,
                                                    cc_i64 len, cc_i64 O) {
    const cc_i64 num = len + P - off;
    const cc_i64 o = num <= 0 ? 0 : (num + S - 1) / S;
    return o < O ? o : O;
}

/* part[(co*kk + t)*nchunks + chunk] = sum over output rows (n, o0, o1) in
 * chunk*rpc .. min((chunk+1)*rpc, N*O0*O1) and o2 of
 * gy[n, co, o] * x[n, co/Mu, o*S - P + t*D]; each row summed in T, rows in
 * double. */
template <typename T>
static __device__ __forceinline__ void cc_dw_wgrad_part_body(
    const T *__restrict__ x, const T *__restrict__ gy, double *__restrict__ part,
    const cc_i64 N, const cc_i64 C, const cc_i64 Mu, const cc_i64 nchunks,
    const cc_i64 rpc, CC_GEOM_PARAMS) {
    const cc_i64 kk = K0 * K1 * K2;
    const cc_i64 CO = C * Mu;
    const cc_i64 nrows = N * O0 * O1;
    const cc_i64 total = CO * nchunks * kk;
    CC_FOR_EACH(e, total) {
        const cc_i64 t = e % kk;
        const cc_i64 r = e / kk;
        const cc_i64 chunk = r % nchunks;
        const cc_i64 co = r / nchunks;
        const cc_i64 ci = co / Mu;
        const cc_i64 t2 = t % K2, tq = t / K2;
        const cc_i64 t1 = tq % K1, t0 = tq / K1;
        const cc_i64 off2 = t2 * D2;
        const cc_i64 lo2 = cc_first_out(S2, P2, off2, O2);
        const cc_i64 hi2 = cc_end_out(S2, P2, off2, I2, O2);
        const cc_i64 r0 = chunk * rpc;
        const cc_i64 r1 = (r0 + rpc < nrows) ? r0 + rpc : nrows;
        double acc = 0.0;
        for (cc_i64 row = r0; row < r1; ++row) {
            const cc_i64 o1 = row % O1, rq = row / O1;
            const cc_i64 o0 = rq % O0, n = rq / O0;
            const cc_i64 i0 = o0 * S0 - P0 + t0 * D0;
            const cc_i64 i1 = o1 * S1 - P1 + t1 * D1;
            if (!cc_in(i0, I0) || !cc_in(i1, I1)) continue;
            const cc_i64 gr = (((n * CO + co) * O0 + o0) * O1 + o1) * O2;
            const cc_i64 xr = (((n * C + ci) * I0 + i0) * I1 + i1) * I2 - P2 + off2;
            T rs = (T)0;
            for (cc_i64 o2 = lo2; o2 < hi2; ++o2) rs += gy[gr + o2] * x[xr + o2 * S2];
            acc += (double)rs;
        }
        part[(co * kk + t) * nchunks + chunk] = acc;
    }
}

#define CC_DW_KERNELS(T, SFX)                                                          \
    extern "C" __global__ void cc_dw_fwd_##SFX(                                        \
        const T *__restrict__ x, const T *__restrict__ w, const T *bias,               \
        const cc_i64 has_bias, T *__restrict__ y, const cc_i64 N, const cc_i64 C,      \
        const cc_i64 Mu, CC_GEOM_PARAMS) {                                             \
        cc_dw_fwd_body<T>(x, w, bias, has_bias, y, N, C, Mu, CC_GEOM_ARGS);            \
    }                                                                                  \
    extern "C" __global__ void cc_dw_adj_##SFX(                                        \
        const T *__restrict__ gy, const T *__restrict__ w, const T *bias,              \
        const cc_i64 has_bias, T *__restrict__ gx, const cc_i64 N, const cc_i64 C,     \
        const cc_i64 Mu, CC_GEOM_PARAMS) {                                             \
        cc_dw_adj_body<T>(gy, w, bias, has_bias, gx, N, C, Mu, CC_GEOM_ARGS);          \
    }                                                                                  \
    extern "C" __global__ void cc_dw_wgrad_part_##SFX(                                 \
        const T *__restrict__ x, const T *__restrict__ gy, double *__restrict__ part,  \
        const cc_i64 N, const cc_i64 C, const cc_i64 Mu, const cc_i64 nchunks,         \
        const cc_i64 rpc, CC_GEOM_PARAMS) {                                            \
        cc_dw_wgrad_part_body<T>(x, gy, part, N, C, Mu, nchunks, rpc, CC_GEOM_ARGS);   \
    }

CC_DW_KERNELS(float, f32)
CC_DW_KERNELS(double, f64)
