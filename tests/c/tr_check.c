/*
 * Checks the layout transpose (src/transpose/transpose.c and its tile kernels in
 * src/transpose/) against a naive element loop written here, bit for bit,
 * for every instruction set this CPU and build can run: random matrices
 * (rows and columns 1..300, with the sizes around every block and tile
 * edge: 1-4, 7-9, 15-17, 31-33, 63-65, 127-129), batch 1-3, element sizes
 * 2, 4, 8 and 16 bytes filled with random bits (NaN payloads included),
 * 1-3 threads; canaries after the destination (no write past it); the
 * argument checks.
 *
 *   tr_check [iterations] [seed]     exit status 0 when all pass
 *
 * Built by meson (tests/c/meson.build), run by tests/test_transpose.py
 * (natively; the AVX-512 kernels on SIMDe's emulation; cross-compiled for
 * aarch64 and run under qemu).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/isa.h"
#include "transpose/transpose.h"

#define CHECK_RNG_SEED 0x9E3779B97F4A7C15ull
#include "check_rng.h"

#define GUARD 256

static const int64_t edges[] = {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};

static int64_t pick_size(void)
{
    if (rnd() % 2)
        return edges[rnd() % (sizeof edges / sizeof edges[0])];
    return ri(1, 300);
}

static int check_one(int64_t batch, int64_t rows, int64_t cols, int64_t es, int nt)
{
    const int64_t n = batch * rows * cols * es;
    unsigned char *src = malloc((size_t)n), *dst = malloc((size_t)(n + GUARD)),
                  *ref = malloc((size_t)n);
    if (!src || !dst || !ref) {
        printf("out of memory\n");
        exit(2);
    }
    for (int64_t i = 0; i < n; i++)
        src[i] = (unsigned char)rnd();
    memset(dst, 0xA5, (size_t)(n + GUARD));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                memcpy(ref + ((b * cols + c) * rows + r) * es,
                       src + ((b * rows + r) * cols + c) * es, (size_t)es);
    int bad = cc_transpose(batch, rows, cols, es, src, dst, nt) != CC_OK;
    bad |= memcmp(dst, ref, (size_t)n) != 0;
    for (int64_t i = n; i < n + GUARD; i++)
        bad |= dst[i] != 0xA5;
    free(src);
    free(dst);
    free(ref);
    return bad;
}

int main(int argc, char **argv)
{
    (void)rud;
    const int iters = argc > 1 ? atoi(argv[1]) : 200;
    if (argc > 2)
        rng_state ^= (uint64_t)strtoull(argv[2], NULL, 10) * 0x2545F4914F6CDD1Dull;
    int fails = 0, cases = 0;
    printf("isas:");
    for (int i = 0; i < CC_ISA_COUNT; i++)
        if (cc_isa_runs_here(i))
            printf(" %s", cc_isa_name(i));
    printf("\n");
    for (int i = 0; i < CC_ISA_COUNT; i++) {
        if (!cc_isa_runs_here(i))
            continue;
        if (cc_isa_set(cc_isa_name(i)) != CC_OK) {
            printf("cannot set %s\n", cc_isa_name(i));
            return 1;
        }
        for (int it = 0; it < iters; it++) {
            static const int64_t sizes[] = {2, 4, 8, 16};
            const int64_t es = sizes[rnd() % 4];
            const int64_t batch = ri(1, 3), rows = pick_size(), cols = pick_size();
            const int nt = (int)ri(1, 3);
            cases++;
            if (check_one(batch, rows, cols, es, nt)) {
                fails++;
                printf("FAIL %s batch %lld rows %lld cols %lld elsize %lld threads %d\n",
                       cc_isa_name(i), (long long)batch, (long long)rows, (long long)cols,
                       (long long)es, nt);
            }
        }
        /* one big enough to run threaded (>= 256 KiB) */
        cases++;
        if (check_one(2, 333, 129, 4, 2)) {
            fails++;
            printf("FAIL %s big\n", cc_isa_name(i));
        }
    }
    /* argument checks */
    unsigned char a[64], b[64];
    cases += 4;
    fails += cc_transpose(1, 2, 2, 3, a, b, 1) != CC_ERR_ARG;
    fails += cc_transpose(-1, 2, 2, 4, a, b, 1) != CC_ERR_ARG;
    fails += cc_transpose(1, 2, 2, 4, NULL, b, 1) != CC_ERR_ARG;
    fails += cc_transpose(0, 2, 2, 4, NULL, NULL, 1) != CC_OK;
    printf("%d cases, %d failures\n", cases, fails);
    return fails != 0;
}
