/*
 * Depthwise kernels: what the drivers (dw_fwd.c, dw_adj.c, dw_wgrad.c), the
 * dispatcher (dw_dispatch.c) and the per-ISA micro-kernels (dw_kernels.c)
 * share.
 *
 * Row buffers.  The drivers copy every input row they need once into a
 * zero-padded, phase-split buffer: for horizontal stride s the buffer holds s
 * phases of J elements, buf[ph*J + q] = row[q*s + ph - pad] (0 outside the
 * row), so horizontal tap kw (offset kw*dil) of output column x is
 * buf[((kw*dil) % s)*J + (kw*dil)/s + x]: a contiguous, unaligned load, for
 * any stride, dilation and padding.  J leaves at least DW_VMAX elements of
 * (zero) slack after the last column a kernel computes, so micro-kernels may
 * read whole vectors past n.  Padding rows point to a shared zero row.
 * Micro-kernels never read their *outputs* or the gradient rows past n.
 *
 * Micro-kernel contracts (T = float or double; f32/f64 twins):
 *
 *   rows   out[x] = (acc ? out[x] : init)
 *                   + sum_{e<ne} sum_{t<nt} wr[e][t] * src[e][off[t] + x],
 *          0 <= x < n.  ne or nt may be 0.  Generic: any taps, any stride
 *          (through off), 3-D (entries = (kd, kh) rows), 1-D long kernels.
 *   plane  a KxK, stride-S, dilation-D depthwise conv of one 2-D input
 *          plane into M output planes, output rows [oh0, oh1):
 *          y[j][oh][ow] = (acc ? y[j][oh][ow] : bias[j])
 *              + sum_{kh,kw<K} w[j*K*K + kh*K + kw]
 *                              x[oh*S-ph+kh*D][ow*S-pw+kw*D]
 *          (x == NULL: an all-zero plane).  It copies the input rows it
 *          needs into the caller's ring of row buffers (dw_plane_<dtype>)
 *          and runs several output rows per step.  K = 3, 5 or 7, S = 1
 *          or 2, D = 1: plane[dw_plane_k(K)][S == 2]; K = 3, S = 1, D = 2
 *          or 4: plane_dil[D == 4] (DW_PLANE_PICK picks).
 *   wg     for taps i = e*nt + t (e < ne, t < nt): the DW_VMAX-element
 *          accumulator vp[i] gets, lane by lane, partial sums of
 *          sum_{r<nrows} sum_{x<n} g[r][x] * src[r*ne+e][off[t] + x]
 *          (lanes >= V of the ISA untouched).  g rows are read only for x < n.
 *   adj2   one grad_input row of a stride-2, dilation-1 conv with K = 2 to 5
 *          horizontal taps (L = (K-1)/2), in one pass:
 *          out[i] = init + sum_{e<ne} sum_{kw<K: i+pw-kw even}
 *                                 wr[e][kw] * g[e][(i + pw - kw)/2 + L],
 *          0 <= i < n; g rows are zero-padded gradient rows (g[e][u] =
 *          gy[u - L]) readable up to u < n/2 + (pw+1)/2 + L + DW_VMAX + 1.
 *          adj2[K - 2].
 *   adj2p  the same for the rows [r0, r1) of a plane, stride 2 and K x K
 *          taps (K = 2 to 5) in both directions (dw_a2p_<dtype>):
 *          y[i][j] = (acc ? y[i][j] : init)
 *              + sum_{kh,kw<K: i+ph-kh, j+pw-kw even}
 *                    w[kh*K + kw] * G[(i+ph-kh)/2][(j+pw-kw)/2 + L],
 *          G[oh] the padded gradient row g + (oh - glo) * gs for glo <= oh
 *          < ghi (as adj2's g rows, readable as far), zeros otherwise (zrow,
 *          gs elements).  adj2p[K - 2].
 *   cl     one output row of a 2-D depthwise conv with multiplier 1, in
 *          channels-last layout over Cp channels (Cp a multiple of
 *          DW_VMAX, buffers padded to it):
 *          out[ow*Cp + c] = init[c] + sum_{e<ne} sum_{kw<KW}
 *                               wr[e][kw*Cp + c] * src[e][ow*sc + kw*dc + c],
 *          ow < OW, c < Cp; src[e] are zero-padded input rows, wr[e] the
 *          (KW, Cp) weight rows that meet them, sc and dc the element
 *          strides of one output pixel and of one tap.  ne may be 0.
 *          With y not NULL a kernel may instead write the row straight
 *          into channels-first memory, y[c*P + ow] for c < cn (the
 *          channels past cn neither computed nor written), and return 1;
 *          it returns 0 when it wrote out.  The answer depends on OW, Cp,
 *          KW, sc and dc only: the same for every row of a call.
 *   split2 even[c] = x[2c], odd[c] = x[2c+1], c < npairs.
 *   join2  out[2c] = even[c], out[2c+1] = odd[c], c < npairs.
 */
#ifndef CC_DW_INTERNAL_H
#define CC_DW_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/compiler.h"
#include "core/cpu.h"
#include "core/isa.h"
#include "depthwise.h"
#include "core/parallel.h"

/* Widest vector (elements) of any instruction set: buffers are sized with it
 * so that switching instruction sets never needs other buffers. */
#define DW_VMAX_F32 16
#define DW_VMAX_F64 8
/* Most output rows per step of any plane kernel. */
#define DW_RMAX 8
/* Cap on the row buffers a geometry may need per thread (cc_dw_geom_ok). */
#define DW_MAX_ROW_BYTES ((double)(256 << 20))
/* Largest kernel of the plane kernels (3x3, 5x5, 7x7). */
#define DW_PLANE_KMAX 7

/* ... of the element type of a template (core/instances.h: CC_T) */
#define DW_VM (sizeof(CC_T) == 4 ? DW_VMAX_F32 : DW_VMAX_F64)

#define DW_KERNEL_TYPES(T, SFX)                                               \
    typedef struct dw_plane_##SFX {                                           \
        const T *x;          /* input plane (IH x IW), or NULL: zeros */     \
        int64_t IH, IW, ph, pw;                                               \
        int64_t oh0, oh1, OW; /* output rows to compute, output width */     \
        int64_t M;           /* output planes */                             \
        const T *w;          /* M filters of K*K */                          \
        const T *bias;       /* M values, or NULL */                         \
        int acc;             /* add to y instead of starting from bias */    \
        T *y;                /* row 0 of output plane 0 */                   \
        int64_t ystride;     /* elements from one output plane to the next */\
        T *ring;             /* span zeroed row buffers of S*J elements */   \
        int64_t span;        /* power of two >= rows one step reads */       \
        int64_t J;           /* phase length, >= OW + (K-1)D/S + DW_VMAX */  \
        const T *zrow;       /* S*J zeros */                                 \
        int pf;              /* prefetch rows ahead (dw_plane_pf) */         \
        int direct;          /* 3x3, stride 1, dilation 1: read x's rows   */\
                             /* where they lie (masked loads at the        */\
                             /* edges), no ring copy, where the kernels    */\
                             /* can (cc_cpu_dw_direct)                     */\
        T *flat;             /* dilated planes: dw_flat_elems zeroed       */\
                             /* elements for the super-row layout, or NULL */\
        int64_t fp;          /* its pitch (dw_flat_pitch)                  */\
        int64_t *have;       /* NULL, or the input rows [have[0], have[1]) */\
                             /* an earlier call left in the ring (span >=  */\
                             /* IH: none overwritten); the kernel skips    */\
                             /* them and updates the range (3-D planes)    */\
    } dw_plane_##SFX;                                                         \
    typedef void (*dw_plane_##SFX##_fn)(const dw_plane_##SFX *a);             \
    typedef void (*dw_rows_##SFX##_fn)(int64_t n, int ne,                     \
                                       const T *const *src,                   \
                                       const T *const *wr, int nt,            \
                                       const int64_t *off, T init, int acc,   \
                                       T *out);                               \
    typedef void (*dw_wg_##SFX##_fn)(int64_t n, int nrows, const T *const *g, \
                                     int ne, const T *const *src, int nt,     \
                                     const int64_t *off, T *const *vp);       \
    typedef void (*dw_adj2_##SFX##_fn)(int64_t n, int ne, const T *const *g,  \
                                       const T *const *wr, int64_t pw, T init,\
                                       T *out);                               \
    typedef struct dw_a2p_##SFX {                                             \
        const T *g;          /* gradient rows glo..ghi-1, gs apart */        \
        int64_t glo, ghi, gs;                                                 \
        const T *zrow;       /* gs zeros */                                  \
        int64_t r0, r1;      /* output rows to write */                      \
        int64_t ph, pw, IW;  /* the forward's padding; the output width */   \
        const T *w;          /* K*K weights */                               \
        T init;              /* every output's start (acc == 0) */           \
        int acc;             /* add to y instead */                          \
        T *y;                /* output row 0; rows IW apart */               \
    } dw_a2p_##SFX;                                                           \
    typedef void (*dw_a2p_##SFX##_fn)(const dw_a2p_##SFX *a);                 \
    typedef int (*dw_cl_##SFX##_fn)(int64_t OW, int64_t Cp, int ne,           \
                                    const T *const *src,                      \
                                    const T *const *wr, int64_t KW,           \
                                    int64_t sc, int64_t dc, const T *init,    \
                                    T *out, T *y, int64_t P, int64_t cn);     \
    typedef void (*dw_split2_##SFX##_fn)(const T *x, int64_t npairs, T *even, \
                                         T *odd);                             \
    typedef void (*dw_join2_##SFX##_fn)(const T *even, const T *odd,          \
                                        int64_t npairs, T *out);              \
    typedef struct dw_kern_##SFX {                                            \
        int rk_r; /* output rows per step of the plane kernels */            \
        int cl_pb; /* widest pixel block of the channels-last kernel */      \
        int lanes; /* elements of the kernels' vectors (1: scalar) */        \
        int direct; /* 1: its 3x3 stride-1 planes honour a->direct */       \
        dw_rows_##SFX##_fn rows;                                              \
        dw_plane_##SFX##_fn plane[3][2]; /* [dw_plane_k(K)][S == 2] */        \
        dw_plane_##SFX##_fn plane_dil[2]; /* 3x3 stride 1, dilation 2, 4 */   \
        dw_wg_##SFX##_fn wg;                                                  \
        dw_adj2_##SFX##_fn adj2[4]; /* [K - 2] */                             \
        dw_a2p_##SFX##_fn adj2p[4]; /* [K - 2] */                             \
        dw_cl_##SFX##_fn cl;                                                  \
        dw_split2_##SFX##_fn split2;                                          \
        dw_join2_##SFX##_fn join2;                                            \
    } dw_kern_##SFX;

DW_KERNEL_TYPES(float, f32)
DW_KERNEL_TYPES(double, f64)

/* The kernels of one instruction set, cc_dw_kern_<f32|f64>_<isa>, made by
 * dw_kernels.c; cc_dw_kern_<f32|f64>(): those of the instruction set in use
 * (core/isa.h). */
CC_ISA_DECLARE(dw_kern_f32, cc_dw_kern_f32)
CC_ISA_DECLARE(dw_kern_f64, cc_dw_kern_f64)
const dw_kern_f32 *cc_dw_kern_f32(void);
const dw_kern_f64 *cc_dw_kern_f64(void);

/* The plane kernels' index of a square kernel of side k (3, 5, 7 -> 0, 1,
 * 2), or -1 where there is none. */
static inline int dw_plane_k(int64_t k) { return k == 3 ? 0 : k == 5 ? 1 : k == 7 ? 2 : -1; }

/* ---- small helpers shared by the drivers -------------------------------- */

static inline int64_t dw_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t dw_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t dw_max(int64_t a, int64_t b) { return a > b ? a : b; }
/* smallest power of two >= v (v >= 1): cache slots are row & (that - 1) */
static inline int64_t dw_pow2(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}
static inline int64_t dw_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

/* *q = a / s when a >= 0 and s divides a (then 1), else 0.  Strides 1 and 2
 * without a division: the drivers call this per row and tap, where an
 * integer division costs more than the row's arithmetic. */
static inline int dw_exact_div(int64_t a, int64_t s, int64_t *q)
{
    if (a < 0)
        return 0;
    if (s == 1) {
        *q = a;
        return 1;
    }
    if (s == 2) {
        *q = a >> 1;
        return !(a & 1);
    }
    *q = a / s;
    return a % s == 0;
}

/* Super-rows of the dilated plane kernels (dw2d.inc: plane_flat): a 3x3
 * stride-1 plane of dilation D (2 or 4) whose output rows fill their last
 * vector badly is run with D consecutive output rows laid end to end at the
 * pitch dw_flat_pitch of a zero-padded copy of its input rows.  Used where
 * that computes at least DW_FLAT_GAIN fewer vectors than row by row; the
 * caller gives each thread dw_flat_elems zeroed elements (a->flat) for a
 * block of up to `rows` output rows. */
#define DW_FLAT_GAIN 1.15
static inline int64_t dw_flat_pitch(int64_t OW, int64_t IW, int64_t pw, int64_t D)
{
    return dw_max(OW + 2 * D, pw + IW);
}
/* The buffer's input part for nsr super-rows: the input rows (two
 * super-rows more) and slack for the taps of the last vector; the results
 * (one super-row per D output rows, and a vector's slack) follow it. */
static inline int64_t dw_flat_in_elems(int64_t nsr, int64_t pitch, int64_t D, int64_t vmax)
{
    return (nsr + 2) * D * pitch + 2 * D + vmax;
}
static inline int64_t dw_flat_elems(int64_t rows, int64_t pitch, int64_t D, int64_t vmax)
{
    const int64_t nsr = dw_cdiv(rows, D); /* super-rows */
    return dw_flat_in_elems(nsr, pitch, D, vmax) + nsr * D * pitch + vmax;
}
/* 1 when the super-rows compute DW_FLAT_GAIN fewer vectors of `lanes` than
 * the rows of OW columns, rows >= 1 output rows */
static inline int dw_flat_wins(int64_t rows, int64_t OW, int64_t pitch, int64_t D, int lanes)
{
    if (lanes < 2 || (D != 2 && D != 4))
        return 0;
    const double by_rows = (double)rows * (double)dw_cdiv(OW, lanes);
    const double by_flat = (double)dw_cdiv(rows, D) * (double)dw_cdiv(D * pitch, lanes);
    return by_flat * DW_FLAT_GAIN <= by_rows;
}

/* Prefetch (for reading) n rows of len bytes, pitch bytes apart, from p;
 * the addresses formed as integers (the last rows' lines past an array
 * end may be touched by a prefetch, never by a C pointer). */
static inline void dw_prefetch_rows(const void *p, int64_t pitch, int64_t n, int64_t len)
{
    const uintptr_t b = (uintptr_t)p;
    for (int64_t i = 0; i < n; i++)
        for (int64_t q = 0; q < len + 63; q += 64)
            __builtin_prefetch((const void *)(b + (uintptr_t)(i * pitch + q)), 0, 3);
}

/* The 3-D plane driver keeps each input plane's rows in a ring of its own
 * (dw_fwd.inc) while its KD rings take at most this many bytes. */
#define DW_KEEP_PLANES_BYTES ((double)(256 << 10))

/* A small cache of row buffers: nslots rows of rowbytes bytes, each tagged
 * with the row it holds (-1: none).  Rows not written by a fill keep their
 * initial zeros, which is what makes the padding of the row buffers. */
typedef struct dw_cache {
    int64_t nslots, rowbytes;
    int64_t *tag;
    char *buf;
} dw_cache;

static inline int dw_cache_init(dw_cache *c, int64_t nslots, int64_t rowbytes)
{
    c->nslots = nslots;
    c->rowbytes = rowbytes;
    c->tag = (int64_t *)malloc((size_t)(nslots > 0 ? nslots : 1) * sizeof(int64_t));
    c->buf = (char *)cc_zalloc64(nslots * rowbytes);
    if (!c->tag || !c->buf || (nslots > 0 && rowbytes > INT64_MAX / nslots)) {
        free(c->tag);
        free(c->buf);
        c->tag = NULL;
        c->buf = NULL;
        return -1;
    }
    for (int64_t i = 0; i < nslots; i++)
        c->tag[i] = -1;
    return 0;
}

static inline void dw_cache_free(dw_cache *c)
{
    free(c->tag);
    free(c->buf);
    c->tag = NULL;
    c->buf = NULL;
}

static inline void dw_cache_clear(dw_cache *c)
{
    for (int64_t i = 0; i < c->nslots; i++)
        c->tag[i] = -1;
}

/* Buffer of the slot; *miss = 1 when it did not hold `tag` (now it is
 * tagged, and the caller fills it). */
static inline void *dw_cache_get(dw_cache *c, int64_t slot, int64_t tag, int *miss)
{
    char *p = c->buf + slot * c->rowbytes;
    *miss = c->tag[slot] != tag;
    c->tag[slot] = tag;
    return p;
}

/* Calls whose cost (dw_cost: about 20 units per microsecond on one core of
 * the AVX2 EPYC, 35-40 on Zen 4's AVX-512) is below this run on one thread,
 * and no thread gets less (parallel.h: CC_GRAIN_DW, which has the figures
 * of its present value).  Measured (AMD EPYC, 2 cores, AVX2, 3x3): with warm OpenMP
 * workers 2 threads win from ~0.2M multiply-adds on (19 -> 15 us), but a
 * worker that has gone to sleep (libgomp spins 0.2-1 ms after a region)
 * costs a futex wake-up, tens of microseconds on an idle VM, and one the OS
 * has not scheduled milliseconds on a busy one; below this cost the gain
 * cannot pay for it. */
#define DW_MIN_PARALLEL_COST CC_GRAIN_DW

/* The geometry, unpacked. */
typedef struct dw_dims {
    int64_t N, C, M, CO;          /* batch, c_in, multiplier, c_out */
    int64_t ID, IH, IW, OD, OH, OW, KD, KH, KW;
    int64_t sd, sh, sw, pd, ph, pw, dd, dh, dw;
} dw_dims;

/* Rings for output depth od's input planes: pslot[kd] the ring of depth
 * tap kd (whose input plane lies inside the volume), a ring that holds that
 * plane already, else one that no tap of od uses, emptied (phave[2 s] =
 * phave[2 s + 1] = 0) and tagged with the plane.  ptag, phave: KD and 2 KD
 * entries kept between the output depths of a channel. */
static inline void dw_keep_assign(const dw_dims *d, int64_t od, int64_t *ptag, int64_t *phave,
                                  int64_t *pslot)
{
    for (int64_t kd = 0; kd < d->KD; kd++) {
        const int64_t id = od * d->sd - d->pd + kd * d->dd;
        pslot[kd] = -1;
        for (int64_t s = 0; s < d->KD && id >= 0 && id < d->ID; s++)
            if (ptag[s] == id)
                pslot[kd] = s;
    }
    for (int64_t kd = 0; kd < d->KD; kd++) {
        const int64_t id = od * d->sd - d->pd + kd * d->dd;
        if (pslot[kd] >= 0 || id < 0 || id >= d->ID)
            continue;
        for (int64_t s = 0; s < d->KD; s++) {
            int used = 0;
            for (int64_t k = 0; k < d->KD; k++)
                used |= pslot[k] == s;
            if (!used) {
                ptag[s] = id, phave[2 * s] = phave[2 * s + 1] = 0, pslot[kd] = s;
                break;
            }
        }
    }
}

static inline void dw_dims_get(const cc_geom *g, dw_dims *d)
{
    d->N = g->batch;
    d->C = g->c_in;
    d->CO = g->c_out;
    d->M = g->c_out / g->c_in;
    d->ID = g->in[0], d->IH = g->in[1], d->IW = g->in[2];
    d->OD = g->out[0], d->OH = g->out[1], d->OW = g->out[2];
    d->KD = g->k[0], d->KH = g->k[1], d->KW = g->k[2];
    d->sd = g->stride[0], d->sh = g->stride[1], d->sw = g->stride[2];
    d->pd = g->pad[0], d->ph = g->pad[1], d->pw = g->pad[2];
    d->dd = g->dil[0], d->dh = g->dil[1], d->dw = g->dil[2];
}

static inline int64_t dw_round_up(int64_t a, int64_t b) { return dw_cdiv(a, b) * b; }

/* 1 when the forward's plane kernels take d's planes: a square 3x3, 5x5
 * or 7x7 kernel across them, stride 1 or 2 (the same both ways), dilation
 * 1; any depth taps, depth stride, dilation and padding (3-D: one plane
 * kernel call per depth tap, the later ones accumulating). */
static inline int dw_plane3_spec(const dw_dims *d)
{
    return d->KH == d->KW && dw_plane_k(d->KH) >= 0 && d->sh == d->sw &&
           (d->sw == 1 || d->sw == 2) && d->dh == 1 && d->dw == 1;
}

/* 1 when the forward's dilated plane kernels take d's planes: 3x3 across
 * them, stride 1, dilation 2 or 4 (the same both ways; DeepLab's dilated
 * depthwise layers). */
static inline int dw_plane_dil_spec(const dw_dims *d)
{
    return d->KH == 3 && d->KW == 3 && d->sh == 1 && d->sw == 1 && d->dh == d->dw &&
           (d->dh == 2 || d->dh == 4);
}

/* 1 when the forward's plane kernels (dilated or not) take d's planes. */
static inline int dw_plane_spec(const dw_dims *d)
{
    return dw_plane3_spec(d) || dw_plane_dil_spec(d);
}

/* The adjoint's plane paths walk an item's input-side rows [*r, r1)
 * (depth-major: row r is row r % IH of plane r / IH) in runs within one
 * plane of at most cap rows: the next run is rows [*ih, *ie) of plane *id,
 * *r moves past it, and the return says whether depth tap kd reaches the
 * plane from a gradient depth (*od, valid only then). */
static inline int dw_adj_run(const dw_dims *d, int64_t kd, int64_t r1, int64_t cap, int64_t *r,
                             int64_t *id, int64_t *ih, int64_t *ie, int64_t *od)
{
    *id = *r / d->IH, *ih = *r % d->IH;
    *ie = dw_min(dw_min(d->IH, *ih + (r1 - *r)), *ih + cap);
    *r += *ie - *ih;
    const int64_t odn = *id + d->pd - kd * d->dd;
    *od = odn / d->sd;
    return odn >= 0 && odn % d->sd == 0 && *od < d->OD;
}

/* Output rows per call of the adjoint's plane form (dw_adj.inc): its
 * gradient rows, (DW_A2P_CHUNK + K) / 2 + 1 <= 31 for K <= 5, stay within
 * the 2 K + 28 rows cc_dw_geom_ok bounds a thread's row buffers by. */
#define DW_A2P_CHUNK 56

/* 1 when the adjoint (dw_adj.inc) runs d's planes by the plane form of the
 * stride-2 kernel (adj2p): stride 2 and K x K taps, K = 2 to 5, dilation 1,
 * in both directions, where core/cpu.h's cc_cpu_dw_a2p says. */
static inline int dw_adj_planes(const dw_dims *d)
{
    return d->sh == 2 && d->sw == 2 && d->dh == 1 && d->dw == 1 && d->KH == d->KW &&
           d->KW >= 2 && d->KW <= 5 && cc_cpu_dw_a2p();
}

/* 1 when the forward's plane path runs d's planes by super-rows, in row
 * blocks of brows output rows, on plane kernels of `lanes` elements */
static inline int dw_flat_use(const dw_dims *d, int64_t brows, int lanes)
{
    return d->KD == 1 && dw_plane_dil_spec(d) &&
           dw_flat_wins(brows, d->OW, dw_flat_pitch(d->OW, d->IW, d->pw, d->dw), d->dw, lanes) &&
           cc_cpu_dw_flat();
}

/* The plane kernel of table kt for d's planes (dw_plane_spec(d)), at
 * horizontal stride 2 when s2. */
#define DW_PLANE_PICK(kt, d, s2)                                               \
    ((d).dh > 1 ? (kt)->plane_dil[(d).dh == 4] : (kt)->plane[dw_plane_k((d).KH)][(s2)])

/* The kernel table whose plane kernels (and rows per step) run d's planes:
 * cc_dw_kern_<dtype>()'s, or under AVX-512 the AVX2 table's for 3x3
 * dilation-1 planes of stride 1 (or 2, rows of 20 outputs and more) where
 * cc_cpu_dw_256() says (dw_dispatch.c).
 * The two compute every output element by the same sequence of
 * multiply-adds, so the results are the same bits either way. */
const dw_kern_f32 *cc_dw_plane_kern_f32(const dw_dims *d);
const dw_kern_f64 *cc_dw_plane_kern_f64(const dw_dims *d);
/* The kernel table of the weight gradient's wg and split2 kernels:
 * cc_dw_kern_<dtype>()'s, or under AVX-512 the AVX2 table's where
 * cc_cpu_dw_256() says (dw_dispatch.c; its lanes' partial sums are added in
 * another order, so the values differ by rounding). */
const dw_kern_f32 *cc_dw_wg_kern_f32(void);
const dw_kern_f64 *cc_dw_wg_kern_f64(void);


/* ---- the channels-last forward (dw_cl.c) -------------------------------- */

/* Channels per work item (2 vectors of the widest ISA), and the largest
 * per-thread buffers (padded input and output of one block) it may use. */
#define DW_CL_CB(vmax) (2 * (vmax))
#define DW_CL_MAX_BYTES ((int64_t)4 << 20)

/* Pixels per row of the padded channels-last input: the padding before,
 * the row, and whatever the last output pixel reads past it. */
static inline int64_t dw_cl_width(const dw_dims *d)
{
    const int64_t need = (d->OW - 1) * d->sw + (d->KW - 1) * d->dw + 1;
    return dw_max(d->pw + d->IW, need);
}

/* Cap of the per-thread buffers of the channels-last-memory forward
 * (dw_nhwc.c); larger geometries take the layout copies instead. */
#define DW_NHWC_MAX_BYTES ((int64_t)64 << 20)

int64_t cc_dw_nhwc_block(int64_t elsize);

/* The channels-last path of the forward: 1 when it can run d (multiplier 1,
 * per-thread buffers within DW_CL_MAX_BYTES); 1 when the defaults want it
 * (dw_cl.c says where it wins). */
int cc_dw_cl_applies(const dw_dims *d, int64_t elsize);
int cc_dw_cl_wanted(const dw_dims *d, int64_t elsize);
int cc_dw_fwd_cl_f32(const dw_dims *d, const float *x, const float *w,
                               const float *bias, float *y, int nthreads);
int cc_dw_fwd_cl_f64(const dw_dims *d, const double *x, const double *w,
                               const double *bias, double *y, int nthreads);

/* Whether the plane kernels prefetch input rows ahead of their copy and
 * the next output rows (dw2d.inc): for calls that move more than this many
 * bytes (input and output), or whose input rows are at least
 * DW_PF_MIN_WIDTH elements wide.  In-process A/B on the AMD EPYC (AVX2,
 * 2 threads, 3x3, time without / with the prefetches): one 56-wide image
 * of 144 channels (3.6 MB) 0.87-1.00 at stride 1 and 0.91-0.95 at
 * stride 2 (5 runs), 28- and 14-wide planes 0.87-0.94, other calls of
 * 4.8-7.2 MB on 28-56 wide planes 0.85-1.00; but 4x144x56x56 (14.5 MB)
 * 1.11, 8x144x56x56 stride 2 1.24, and 112-wide rows 1.03-1.14 even at
 * 1.6 MB of input. */
#define DW_PF_MIN_BYTES ((double)(8 << 20))
#define DW_PF_MIN_WIDTH 64
static inline int dw_plane_pf(double bytes, int64_t in_width)
{
    return bytes > DW_PF_MIN_BYTES || in_width >= DW_PF_MIN_WIDTH;
}

/* Cost of a call in the units of DW_MIN_PARALLEL_COST (in double: no
 * overflow for any geometry): its multiply-adds, 2 per element of input and
 * output (memory traffic) and 300 per output row of one channel (the
 * drivers' per-row work: row buffers, tap lists, kernel calls; small planes
 * of many channels are dominated by it). */
static inline double dw_cost(double macs, double elems, double rows)
{
    return macs + 2.0 * elems + 300.0 * rows;
}

/* OpenMP threads for a call of the given cost spread over `items` items
 * (parallel.h: clamped, none below a grain each). */
static inline int dw_threads(int nthreads, double cost, int64_t items)
{
    return cc_threads_for(cost, DW_MIN_PARALLEL_COST, items, nthreads);
}

/* The thread count a split of work of this cost is planned for: the CPU
 * count, less for a small call, never the caller's count (parallel.h). */
static inline int64_t dw_split(double cost)
{
    return (cc_items_wanted(cost, DW_MIN_PARALLEL_COST) + 1) / 2;
}

/* The forward's cost (dw_fwd.inc) and its row blocks per plane for R
 * output rows a step: work items are (image, channel, block of output
 * rows), as many as 4 * dw_split(cost) where the planes allow (blocks of
 * >= 2 R rows), planned for the problem, not for the caller's thread
 * count. */
static inline double dw_fwd_cost(const dw_dims *d)
{
    const int64_t P = d->OD * d->OH, KK = d->KD * d->KH * d->KW;
    return dw_cost((double)d->N * d->CO * P * d->OW * KK,
                   (double)d->N * (d->C * d->ID * d->IH * d->IW + d->CO * P * d->OW),
                   (double)d->N * d->CO * P);
}

static inline int64_t dw_fwd_blocks(const dw_dims *d, double cost, int R)
{
    const int64_t P = d->OD * d->OH, items0 = d->N * d->C, want = 4 * dw_split(cost);
    int64_t nblk = 1;
    if (items0 < want)
        nblk = dw_max(1, dw_min(dw_cdiv(want, items0), P / (2 * R)));
    const int64_t brows = dw_cdiv(P, dw_max(1, nblk));
    return P > 0 ? dw_cdiv(P, brows) : 1;
}

/* Fill the phase-split, zero-padded row buffer buf (s phases of J) from the
 * input row xr of iw elements: buf[ph*J + q] = xr[q*s + ph - pad] for the
 * positions inside the row; the other positions are left alone (zero). */
void cc_dw_fill_row_f32(float *buf, const float *xr, int64_t iw,
                                  int64_t s, int64_t pad, int64_t J,
                                  dw_split2_f32_fn split2);
void cc_dw_fill_row_f64(double *buf, const double *xr, int64_t iw,
                                  int64_t s, int64_t pad, int64_t J,
                                  dw_split2_f64_fn split2);

#endif
