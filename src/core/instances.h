/* Instantiates the template named by CC_TEMPLATE (a quoted file name under
 * src/) for float32 and float64: the template sees CC_T, the element type,
 * and CC_SFX, its suffix in the names it defines (f32, f64; CC_CAT builds
 * them).  Every driver template of every family (*.inc) is instantiated
 * here, once per including file. */
#include "core/compiler.h"

#define CC_T float
#define CC_SFX f32
#include CC_TEMPLATE
#undef CC_T
#undef CC_SFX

#define CC_T double
#define CC_SFX f64
#include CC_TEMPLATE
#undef CC_T
#undef CC_SFX

#undef CC_TEMPLATE
