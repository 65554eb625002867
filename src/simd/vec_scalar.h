/* The scalar "vector layer" (see vec_common.h): only the element type and
 * the names; the scalar kernels are plain loops. */
#include "vec_common.h"
