/* im2col / col2im for 1-D, 2-D and 3-D (1-D and 2-D as 3-D with leading
 * dimensions of size 1), float32 and float64.  The body is im2col.inc. */
#include <string.h>

#include "cconv.h"
#include "gemm_plan.h"
#include "igemm/igemm.h"
#include "transpose/tr_internal.h"

#define CC_TEMPLATE "gemm/im2col.inc"
#include "core/instances.h"
