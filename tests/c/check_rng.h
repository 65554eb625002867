/* The xorshift64 generator the C check programs in tests/c share.
 * Define CHECK_RNG_SEED before including to choose the starting state. */
#ifndef CHECK_RNG_H
#define CHECK_RNG_H
#include <stdint.h>

#ifndef CHECK_RNG_SEED
#define CHECK_RNG_SEED 88172645463325252ull
#endif

static uint64_t rng_state = CHECK_RNG_SEED;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
/* uniform integer in [lo, hi] */
static int64_t ri(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }
/* uniform double in [-1, 1) */
static double rud(void) { return (double)(rnd() >> 11) / 9007199254740992.0 * 2.0 - 1.0; }
#endif
