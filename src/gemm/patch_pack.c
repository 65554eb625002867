/* The im2col of non-overlapping patches packed into the own GEMM's B
 * micro-panels (patch_pack.h); the body is patch_pack.inc. */
#include "gemm/patch_pack.h"

#include "core/cpu.h"
#include "gemm/gemm_plan.h"

/* below this many taps along the innermost dimension, im2col (its header) */
#define CC_PATCH_PACK_MIN_TAPS 4

int cc_patch_pack_applies(const cc_geom *g, int64_t elsize) {
    return cc_is_patch(g) && g->k[2] >= CC_PATCH_PACK_MIN_TAPS &&
           cc_tr_tile_for(elsize) != NULL && cc_cpu_patch_pack();
}

#define CC_TEMPLATE "gemm/patch_pack.inc"
#include "core/instances.h"
