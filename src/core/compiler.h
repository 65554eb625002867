/* What every file of the C core may use: always-inline helpers and token
 * pasting (names built from an element type's suffix or an instruction
 * set's name, see core/instances.h and simd/vec_common.h). */
#ifndef CC_COMPILER_H
#define CC_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
#define CC_INLINE static inline __attribute__((always_inline))
#else
#define CC_INLINE static inline
#endif

#define CC_CAT_(a, b) a##b
#define CC_CAT(a, b) CC_CAT_(a, b)

#endif
