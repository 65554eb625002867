/*
 * Owner-first claims of a team's work items.  Items 0 .. n-1 are cut into
 * one contiguous range per thread of the team (thread t: [t n / nt,
 * (t + 1) n / nt)); a thread takes its own range's items in order and,
 * when its range is done, the items left in the others' ranges (each
 * range's counter is shared by its owner and the threads that help it).
 *
 * Why not one shared counter (`schedule(dynamic)`): with one counter the
 * items fall to the threads in a different order on every call, so an
 * output block one core wrote on the last call is written by the other on
 * this one, and the block's lines move between the cores' caches; the
 * counter itself moves with every claim.  Where the cores share no cache
 * (two AMD EPYC Zen 4 cores 170 ns apart, which a virtual machine's two
 * CPUs often are) that ran two threads not much faster than one.  With a
 * range per thread every thread writes the same outputs on every call of
 * the same layer, and claims its own counter's line; a thread slowed down
 * (another program on its CPU) still has its items taken by the others, as
 * with one counter.  Which thread runs an item never changes what the item
 * computes: the results do not depend on the schedule.
 */
#ifndef CC_CORE_CLAIM_H
#define CC_CORE_CLAIM_H

#include <stdint.h>

#include "core/alloc.h"
#include "core/compiler.h"
#include "core/omp_compat.h"

/* A look at a counter before claiming from it (a claim of an exhausted
 * range would write its line for nothing) */
#if defined(__GNUC__) || defined(__clang__)
#define CC_CLAIM_PEEK(v) __atomic_load_n(&(v), __ATOMIC_RELAXED)
#else
#define CC_CLAIM_PEEK(v) (v)
#endif

/* One range: its next unclaimed item and its end, alone in a cache line. */
typedef struct cc_claim_range {
    int64_t next, end;
    char pad_[64 - 2 * sizeof(int64_t)];
} cc_claim_range;

typedef struct cc_claims {
    int nt;
    cc_claim_range *r; /* nt ranges, 64-byte aligned */
} cc_claims;

/* Cut items 0 .. n-1 into nt ranges (nt >= 1); 0, or -1 when the ranges
 * cannot be allocated (c then needs no cc_claims_free). */
static inline int cc_claims_init(cc_claims *c, int nt, int64_t n)
{
    if (nt < 1)
        nt = 1;
    c->nt = nt;
    c->r = (cc_claim_range *)cc_alloc64((int64_t)nt * (int64_t)sizeof(cc_claim_range));
    if (!c->r)
        return -1;
    for (int t = 0; t < nt; t++) {
        c->r[t].next = n * t / nt;
        c->r[t].end = n * (t + 1) / nt;
    }
    return 0;
}

static inline void cc_claims_free(cc_claims *c)
{
    free(c->r);
    c->r = NULL;
}

/* One thread's claims: its home range (tid mod nt) and the range it
 * claims from now. */
typedef struct cc_claimer {
    cc_claims *c;
    int home, from;
} cc_claimer;

/* Thread tid's claimer (a team larger than nt shares the home ranges). */
static inline cc_claimer cc_claimer_of(cc_claims *c, int tid)
{
    const int h = (tid % c->nt + c->nt) % c->nt;
    cc_claimer m = {c, h, h};
    return m;
}

/* The calling OpenMP thread's claimer. */
#define cc_claimer_here(c) cc_claimer_of((c), omp_get_thread_num())

/* The next item for m's thread (its home range first), or -1 when every
 * item is claimed.  The ranges of threads missing from a team smaller
 * than nt are claimed by the others. */
static inline int64_t cc_claim(cc_claimer *m)
{
    const int nt = m->c->nt;
    for (;;) {
        cc_claim_range *r = m->c->r + m->from;
        if (CC_CLAIM_PEEK(r->next) < r->end) {
            const int64_t i = cc_fetch_add64(&r->next, 1);
            if (i < r->end)
                return i;
        }
        const int nx = m->from + 1 == nt ? 0 : m->from + 1;
        if (nx == m->home)
            return -1; /* every range tried after the home one */
        m->from = nx;
    }
}

#endif
