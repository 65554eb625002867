#!/bin/sh
# Build tests/c/dw_check (or another main file) from src/depthwise.
#   build_dw_check.sh native OUT      host compiler; on x86-64 the avx2/avx512
#                                     files with their own flags
#   build_dw_check.sh aarch64 OUT     cross-compiled with aarch64-linux-gnu-gcc (NEON)
#   build_dw_check.sh simde OUT       x86-64, the AVX-512 kernels built on SIMDe's
#                                     portable AVX-512 (runs on AVX2 CPUs; needs
#                                     simde/x86/avx512.h, Debian's libsimde-dev)
# MAIN=dw_bench builds tests/c/dw_bench.c instead of dw_check.c; MAINFILE=path
# any other main file.  CC overrides the compiler.  Files compile in parallel.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dw=$root/src/depthwise
mode=$1
out=$2
main=${MAINFILE:-$here/${MAIN:-dw_check}.c}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base="dw_dispatch.c dw_fwd.c dw_cl.c dw_adj.c dw_wgrad.c dw_rowbuf.c
      dw2d_f32_scalar.c dw2d_f64_scalar.c dwrows_f32_scalar.c dwrows_f64_scalar.c
      dwwg_f32_scalar.c dwwg_f64_scalar.c dwadj2_f32_scalar.c dwadj2_f64_scalar.c
      dwcl_f32_scalar.c dwcl_f64_scalar.c"
ops="dw2d dwrows dwwg dwadj2 dwcl"
# the channels-last forward transposes with the layout transpose's tile kernels
tr=$root/src/transpose
trs="tr_dispatch.c tr_scalar.c"
CFLAGS="-O3 -std=c11 -D_GNU_SOURCE -fopenmp -Wall -Wextra -Wno-unused-parameter -I$root/src -I$dw"
pids=""
objs=""
# compile SRC OBJ [flags...] in the background
compile() {
    src=$1 obj=$2
    shift 2
    $CC $CFLAGS "$@" -c "$src" -o "$obj" &
    pids="$pids $!"
    objs="$objs $obj"
}
if [ "$mode" = aarch64 ]; then
    CC=${CC:-aarch64-linux-gnu-gcc}
    for op in $ops; do base="$base ${op}_f32_neon.c ${op}_f64_neon.c"; done
    trs="$trs tr_neon.c"
else
    CC=${CC:-gcc}
    case "$($CC -dumpmachine)" in
    x86_64*)
        CFLAGS="$CFLAGS -DCC_HAVE_X86_SIMD"
        avx512="-mavx512f -mfma"
        if [ "$mode" = simde ]; then
            # SIMDe's emulation compiles slowly at -O3; -O1 checks the same logic
            CFLAGS="$CFLAGS -DCC_SIMDE_AVX512 -Wno-psabi"
            avx512="-mavx2 -mfma -O1"
        fi
        compile "$tr/tr_avx2.c" "$tmp/tr_avx2.o" -mavx2
        compile "$tr/tr_avx512.c" "$tmp/tr_avx512.o" $avx512
        for op in $ops; do for dt in f32 f64; do
            compile "$dw/${op}_${dt}_avx2.c" "$tmp/${op}_${dt}_avx2.o" -mavx2 -mfma
            compile "$dw/${op}_${dt}_avx512.c" "$tmp/${op}_${dt}_avx512.o" $avx512
        done; done ;;
    aarch64*)
        for op in $ops; do base="$base ${op}_f32_neon.c ${op}_f64_neon.c"; done
        trs="$trs tr_neon.c" ;;
    esac
fi
for f in $base; do compile "$dw/$f" "$tmp/${f%.c}.o"; done
for f in $trs; do compile "$tr/$f" "$tmp/${f%.c}.o"; done
compile "$root/src/core/isa.c" "$tmp/simd_isa.o"
fail=0
for p in $pids; do wait "$p" || fail=1; done
[ $fail = 0 ] || { echo "compilation failed" >&2; exit 1; }
$CC $CFLAGS "$main" $objs -o "$out" -lm
