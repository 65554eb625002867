/* The NaN/infinity scan of core/nonfinite.h. */
#include "nonfinite.h"

#define ANY_NONFINITE_(T, name)                                               \
    int name(const T *v, int64_t n)                                           \
    {                                                                         \
        int bad = 0;                                                          \
        for (int64_t i = 0; i < n; ++i)                                       \
            bad |= !(v[i] - v[i] == 0);                                       \
        return bad;                                                           \
    }
ANY_NONFINITE_(float, cc_any_nonfinite_f32)
ANY_NONFINITE_(double, cc_any_nonfinite_f64)
