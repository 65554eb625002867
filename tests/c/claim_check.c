/*
 * Checks the owner-first claims of core/claim.h: in OpenMP teams of 1-8
 * threads over ranges cut for 1-8 threads (teams smaller and larger than
 * the cut), for 0-5000 items, every item is claimed exactly once; a thread
 * that claims nothing (stopped at once) has its range finished by the
 * others; a team of one claims the ranges in order, its own first; a
 * thread alone in its range, with the others done, gets its range's items
 * in order; the ranges are contiguous, cover 0 .. n-1 and differ in size
 * by at most one.
 *
 *   claim_check [iterations] [seed]     exit status 0 when all pass
 *
 * Built by meson (tests/c/meson.build), run by tests/test_threads.py
 * (natively and under AddressSanitizer + UBSan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/claim.h"

#define CHECK_RNG_SEED 0xC1A1A5EEDull
#include "check_rng.h"

static int failures = 0;

#define FAIL(...)                                                              \
    do {                                                                       \
        if (failures++ < 20) {                                                 \
            printf("FAIL: ");                                                  \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
        }                                                                      \
    } while (0)

/* Items claimed by a team of `team` threads over ranges cut for nt;
 * thread `lazy` (or -1) claims nothing.  Each item must be claimed once. */
static void check_team(int nt, int team, int64_t n, int lazy)
{
    int *count = (int *)calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (!count) {
        FAIL("out of memory");
        return;
    }
    cc_claims c;
    if (cc_claims_init(&c, nt, n) != 0) {
        FAIL("cc_claims_init(%d, %lld)", nt, (long long)n);
        free(count);
        return;
    }
    int bad = 0;
#pragma omp parallel num_threads(team) reduction(| : bad)
    {
        const int tid = omp_get_thread_num();
        if (tid != lazy) {
            cc_claimer m = cc_claimer_here(&c);
            int64_t it, last = -1;
            while ((it = cc_claim(&m)) >= 0) {
                if (it >= n) {
                    bad = 1;
                    break;
                }
#pragma omp atomic update
                count[it]++;
                last = it;
            }
            (void)last;
            /* exhausted: more calls keep saying so */
            if (cc_claim(&m) != -1 || cc_claim(&m) != -1)
                bad = 1;
        }
    }
    if (bad)
        FAIL("nt %d team %d n %lld: item out of range or a claim after the end", nt, team,
             (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (count[i] != 1) {
            FAIL("nt %d team %d lazy %d n %lld: item %lld claimed %d times", nt, team, lazy,
                 (long long)n, (long long)i, count[i]);
            break;
        }
    cc_claims_free(&c);
    free(count);
}

/* The cut: contiguous ranges covering 0 .. n-1, sizes within one; a
 * single thread gets its own range in order, then the next ranges' in
 * turn, wrapping around. */
static void check_order(int nt, int64_t n)
{
    cc_claims c;
    if (cc_claims_init(&c, nt, n) != 0) {
        FAIL("cc_claims_init(%d, %lld)", nt, (long long)n);
        return;
    }
    int64_t lo = n, hi = 0;
    for (int t = 0; t < nt; t++) {
        const int64_t sz = c.r[t].end - c.r[t].next;
        if (c.r[t].next != (t ? c.r[t - 1].end : 0))
            FAIL("nt %d n %lld: range %d starts at %lld", nt, (long long)n, t,
                 (long long)c.r[t].next);
        lo = sz < lo ? sz : lo;
        hi = sz > hi ? sz : hi;
    }
    if (c.r[nt - 1].end != n || hi - lo > 1)
        FAIL("nt %d n %lld: ranges end at %lld, sizes %lld..%lld", nt, (long long)n,
             (long long)c.r[nt - 1].end, (long long)lo, (long long)hi);
    const int me = nt > 1 ? (int)ri(0, nt - 1) : 0;
    cc_claimer m = cc_claimer_of(&c, me);
    int64_t want = c.r[me].next, it;
    int at = me, k = 0;
    while ((it = cc_claim(&m)) >= 0) {
        while (want == n * (at + 1) / nt) { /* range `at` done: the next one */
            at = at + 1 == nt ? 0 : at + 1;
            want = n * at / nt;
        }
        if (it != want) {
            FAIL("nt %d n %lld thread %d: claim %d is %lld, not %lld", nt, (long long)n, me, k,
                 (long long)it, (long long)want);
            break;
        }
        want++;
        k++;
    }
    if (k != n)
        FAIL("nt %d n %lld: a lone thread claimed %d items", nt, (long long)n, k);
    cc_claims_free(&c);
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 200;
    if (argc > 2)
        rng_state ^= (uint64_t)strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull;
    int runs = 0;
    (void)rud;
    for (int i = 0; i < iters; i++) {
        const int nt = (int)ri(1, 8), team = (int)ri(1, 8);
        const int64_t n = rnd() % 4 ? ri(0, 300) : ri(0, 5000);
        check_team(nt, team, n, -1);
        check_team(nt, team, n, team > 1 ? (int)ri(0, team - 1) : -1);
        check_order(nt, n);
        runs += 3;
    }
    printf("claim_check: %d runs, %d failures\n", runs, failures);
    return failures != 0;
}
