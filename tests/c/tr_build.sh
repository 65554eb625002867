#!/bin/sh
# Build tests/c/tr_check.c with src/transpose.c and src/transpose/ into $OUT.
#   tr_build.sh native OUT    host: x86-64 with the avx2/avx512 files built
#                             with their own flags, or aarch64
#   tr_build.sh simde OUT     x86-64, the AVX-512 kernels built on SIMDe's
#                             portable AVX-512 (runs on AVX2 CPUs; needs
#                             simde/x86/avx512.h, Debian's libsimde-dev)
#   tr_build.sh aarch64 OUT   cross-compiled with aarch64-linux-gnu-gcc (NEON)
#   tr_build.sh asan OUT      native, with -fsanitize=address,undefined
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
src=$root/src/transpose
mode=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -fopenmp -Wall -Wextra -Werror -I$root/src -I$src"
avx512="-mavx512f"
case "$mode" in
aarch64) CC=${CC:-aarch64-linux-gnu-gcc} ;;
simde) CC=${CC:-gcc}; CFLAGS="$CFLAGS -DCC_SIMDE_AVX512 -Wno-psabi"; avx512="-mavx2" ;;
asan) CC=${CC:-gcc}; CFLAGS="$CFLAGS -g -fsanitize=address,undefined -fno-sanitize-recover=all" ;;
*) CC=${CC:-gcc} ;;
esac
base="tr_dispatch.c tr_scalar.c"
objs=""
case "$($CC -dumpmachine)" in
x86_64*)
    CFLAGS="$CFLAGS -DCC_HAVE_X86_SIMD"
    $CC $CFLAGS -mavx2 -c "$src/tr_avx2.c" -o "$tmp/avx2.o"
    $CC $CFLAGS $avx512 -c "$src/tr_avx512.c" -o "$tmp/avx512.o"
    objs="$tmp/avx2.o $tmp/avx512.o" ;;
aarch64*)
    base="$base tr_neon.c" ;;
esac
for f in $base; do $CC $CFLAGS -c "$src/$f" -o "$tmp/${f%.c}.o"; objs="$objs $tmp/${f%.c}.o"; done
$CC $CFLAGS -c "$root/src/transpose/transpose.c" -o "$tmp/transpose.o"
$CC $CFLAGS -c "$root/src/core/isa.c" -o "$tmp/simd_isa.o"
$CC $CFLAGS "$here/tr_check.c" $tmp/transpose.o $tmp/simd_isa.o $objs -o "$out"
