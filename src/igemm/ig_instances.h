/* Instantiates the driver template named by IG_IMPL (a quoted file name)
 * for float32 and float64, with the micro-kernel table of each.  Included
 * once by ig_conv.c and by ig_wgrad.c, after their headers.
 *
 * The band's short-row loops (ig_band_impl.h) stay loops: GCC would
 * otherwise turn them back into memset/memcpy calls. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif

#define IG_T float
#define IG_SFX f32
#define IG_KERN cc_ig_kern_f32
#define IG_KERN_T ig_kern_f32
#include IG_IMPL
#undef IG_T
#undef IG_SFX
#undef IG_KERN
#undef IG_KERN_T

#define IG_T double
#define IG_SFX f64
#define IG_KERN cc_ig_kern_f64
#define IG_KERN_T ig_kern_f64
#include IG_IMPL
#undef IG_T
#undef IG_SFX
#undef IG_KERN
#undef IG_KERN_T
