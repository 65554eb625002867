/*
 * Whether an array holds a NaN or an infinity, for the methods that must
 * not run on such data (core/nonfinite.c).  The test is x - x != 0 (0
 * exactly for every finite x), OR-ed over the array so that the compiler
 * vectorises it (a branch per value did not).
 */
#ifndef CC_CORE_NONFINITE_H
#define CC_CORE_NONFINITE_H

#include <stdint.h>

int cc_any_nonfinite_f32(const float *v, int64_t n);
int cc_any_nonfinite_f64(const double *v, int64_t n);

#endif
