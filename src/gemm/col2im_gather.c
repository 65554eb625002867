/* col2im in gather form (each row of x formed once from the column rows
 * that reach it), float32 and float64.  The body is col2im_gather.inc. */
#include "cconv.h"
#include "gemm_plan.h"

#define CC_TEMPLATE "gemm/col2im_gather.inc"
#include "core/instances.h"
