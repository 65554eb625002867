#!/bin/sh
# Build tests/c/dw_check (or $OUT) from src/depthwise.
#   (MAIN=dw_bench builds tests/c/dw_bench.c instead of dw_check.c)
#   build_dw_check.sh native OUT      x86-64 (avx2/avx512 files with their flags) or host
#   build_dw_check.sh aarch64 OUT     cross-compiled with aarch64-linux-gnu-gcc (NEON)
#   build_dw_check.sh simde OUT       x86-64, the AVX-512 kernels built on SIMDe's
#                                     portable AVX-512 (runs on AVX2 CPUs; needs
#                                     simde/x86/avx512.h, Debian's libsimde-dev)
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dw=$root/src/depthwise
mode=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base="dw_dispatch.c dw_fwd.c dw_adj.c dw_wgrad.c dw_rowbuf.c
      dw2d_f32_scalar.c dw2d_f64_scalar.c dwrows_f32_scalar.c dwrows_f64_scalar.c
      dwwg_f32_scalar.c dwwg_f64_scalar.c"
ops="dw2d dwrows dwwg"
CFLAGS="-O3 -std=c11 -D_GNU_SOURCE -fopenmp -Wall -Wextra -Wno-unused-parameter -I$root/src -I$dw"
if [ "$mode" = aarch64 ]; then
    CC=${CC:-aarch64-linux-gnu-gcc}
    srcs="$base"
    for op in $ops; do srcs="$srcs ${op}_f32_neon.c ${op}_f64_neon.c"; done
    objs=""
    for f in $srcs; do $CC $CFLAGS -c "$dw/$f" -o "$tmp/${f%.c}.o"; objs="$objs $tmp/${f%.c}.o"; done
    $CC $CFLAGS "${MAINFILE:-$here/${MAIN:-dw_check}.c}" $objs -o "$out" -lm
    exit 0
fi
CC=${CC:-gcc}
objs=""
arch=$($CC -dumpmachine)
avx512="-mavx512f -mfma"
if [ "$mode" = simde ]; then
    CFLAGS="$CFLAGS -DDW_SIMDE_AVX512 -Wno-psabi"
    avx512="-mavx2 -mfma"
fi
case "$arch" in
x86_64*)
    CFLAGS="$CFLAGS -DCC_HAVE_X86_SIMD"
    for op in $ops; do for dt in f32 f64; do
        $CC $CFLAGS -mavx2 -mfma -c "$dw/${op}_${dt}_avx2.c" -o "$tmp/${op}_${dt}_avx2.o"
        $CC $CFLAGS $avx512 -c "$dw/${op}_${dt}_avx512.c" -o "$tmp/${op}_${dt}_avx512.o"
        objs="$objs $tmp/${op}_${dt}_avx2.o $tmp/${op}_${dt}_avx512.o"
    done; done ;;
aarch64*)
    for op in $ops; do for dt in f32 f64; do base="$base ${op}_${dt}_neon.c"; done; done ;;
esac
for f in $base; do $CC $CFLAGS -c "$dw/$f" -o "$tmp/${f%.c}.o"; objs="$objs $tmp/${f%.c}.o"; done
$CC $CFLAGS "${MAINFILE:-$here/${MAIN:-dw_check}.c}" $objs -o "$out" -lm
