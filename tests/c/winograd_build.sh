#!/bin/sh
# Build tests/c/winograd_check.c (or $MAIN.c) with src/winograd into $OUT.
#   winograd_build.sh native OUT    host: x86-64 with the avx2/avx512 files
#                                   built with their own flags, or aarch64
#   winograd_build.sh simde OUT     x86-64, the AVX-512 kernels built on SIMDe's
#                                   portable AVX-512 (runs on AVX2 CPUs; needs
#                                   simde/x86/avx512.h, Debian's libsimde-dev)
#   winograd_build.sh aarch64 OUT   cross-compiled with aarch64-linux-gnu-gcc (NEON)
#   winograd_build.sh asan OUT      native, with -fsanitize=address,undefined
# MAIN=winograd_bench builds tests/c/winograd_bench.c instead; WITH_DW=1 also
# compiles src/depthwise (the direct kernels the bench compares with).
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=$root/src/winograd
mode=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base="wdw_dispatch.c wdw_fwd.c wdw3x3_f32_scalar.c"
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -fopenmp -Wall -Wextra -Werror -I$root/src -I$src"
avx512="-mavx512f -mfma"
case "$mode" in
aarch64) CC=${CC:-aarch64-linux-gnu-gcc} ;;
simde) CC=${CC:-gcc}; CFLAGS="$CFLAGS -DCC_SIMDE_AVX512 -Wno-psabi"; avx512="-mavx2 -mfma" ;;
asan) CC=${CC:-gcc}; CFLAGS="$CFLAGS -g -fsanitize=address,undefined -fno-sanitize-recover=all" ;;
*) CC=${CC:-gcc} ;;
esac
objs=""
case "$($CC -dumpmachine)" in
x86_64*)
    CFLAGS="$CFLAGS -DCC_HAVE_X86_SIMD"
    $CC $CFLAGS -mavx2 -mfma -c "$src/wdw3x3_f32_avx2.c" -o "$tmp/avx2.o"
    $CC $CFLAGS $avx512 -c "$src/wdw3x3_f32_avx512.c" -o "$tmp/avx512.o"
    objs="$tmp/avx2.o $tmp/avx512.o" ;;
aarch64*)
    base="$base wdw3x3_f32_neon.c" ;;
esac
for f in $base; do $CC $CFLAGS -c "$src/$f" -o "$tmp/${f%.c}.o"; objs="$objs $tmp/${f%.c}.o"; done
$CC $CFLAGS -c "$root/src/core/isa.c" -o "$tmp/simd_isa.o"
objs="$objs $tmp/simd_isa.o"
if [ -n "$WITH_DW" ]; then
    dw=$root/src/depthwise
    dwsrc="dw_dispatch.c dw_fwd.c dw_cl.c dw_adj.c dw_wgrad.c dw_rowbuf.c"
    for op in dw2d dwrows dwwg dwadj2 dwcl; do for dt in f32 f64; do
        dwsrc="$dwsrc ${op}_${dt}_scalar.c"
        case "$($CC -dumpmachine)" in
        x86_64*)
            $CC $CFLAGS -I$dw -mavx2 -mfma -c "$dw/${op}_${dt}_avx2.c" -o "$tmp/dw_${op}_${dt}_avx2.o"
            $CC $CFLAGS -I$dw $avx512 -c "$dw/${op}_${dt}_avx512.c" -o "$tmp/dw_${op}_${dt}_avx512.o"
            objs="$objs $tmp/dw_${op}_${dt}_avx2.o $tmp/dw_${op}_${dt}_avx512.o" ;;
        aarch64*) dwsrc="$dwsrc ${op}_${dt}_neon.c" ;;
        esac
    done; done
    for f in $dwsrc; do $CC $CFLAGS -Wno-error -I$dw -c "$dw/$f" -o "$tmp/dw_${f%.c}.o"; objs="$objs $tmp/dw_${f%.c}.o"; done
    # the channels-last depthwise forward calls the layout transpose's kernels
    tr=$root/src/transpose
    trsrc="tr_dispatch.c tr_scalar.c"
    case "$($CC -dumpmachine)" in
    x86_64*)
        $CC $CFLAGS -mavx2 -mfma -c "$tr/tr_avx2.c" -o "$tmp/tr_avx2.o"
        $CC $CFLAGS $avx512 -c "$tr/tr_avx512.c" -o "$tmp/tr_avx512.o"
        objs="$objs $tmp/tr_avx2.o $tmp/tr_avx512.o" ;;
    aarch64*) trsrc="$trsrc tr_neon.c" ;;
    esac
    for f in $trsrc; do $CC $CFLAGS -Wno-error -I$tr -c "$tr/$f" -o "$tmp/${f%.c}.o"; objs="$objs $tmp/${f%.c}.o"; done
fi
$CC $CFLAGS "$here/${MAIN:-winograd_check}.c" $objs -o "$out" -lm
