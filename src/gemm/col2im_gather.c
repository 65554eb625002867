/* col2im in gather form (each row of x formed once from the column rows
 * that reach it), float32 and float64.  The body is col2im_gather_impl.h. */
#include "cconv.h"
#include "gemm_plan.h"

#define CC_T float
#define CC_SFX f32
#include "col2im_gather.inc"
#undef CC_T
#undef CC_SFX

#define CC_T double
#define CC_SFX f64
#include "col2im_gather.inc"
#undef CC_T
#undef CC_SFX
