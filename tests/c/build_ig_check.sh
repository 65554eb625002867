#!/bin/sh
# Build tests/c/ig_check from src/igemm's micro-kernels.
#   build_ig_check.sh native OUT    host compiler; on x86-64 the avx2 and avx512
#                                   files with their own flags
#   build_ig_check.sh simde OUT     x86-64, the AVX-512 kernels on SIMDe's portable
#                                   AVX-512 (simde/x86/avx512.h, Debian's libsimde-dev)
#   build_ig_check.sh aarch64 OUT   aarch64-linux-gnu-gcc (NEON), run under qemu
# CC overrides the compiler.
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ig=$root/src/igemm
mode=$1
out=$2
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -I$root/src -I$ig -I$root/src/depthwise"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objs=""
if [ "$mode" = aarch64 ]; then
    CC=${CC:-aarch64-linux-gnu-gcc}
    srcs="ig_ukr_f32_scalar.c ig_ukr_f64_scalar.c ig_ukr_f32_neon.c ig_ukr_f64_neon.c"
else
    CC=${CC:-gcc}
    srcs="ig_ukr_f32_scalar.c ig_ukr_f64_scalar.c"
    case "$($CC -dumpmachine)" in
    x86_64*)
        CFLAGS="$CFLAGS -DCC_HAVE_X86_SIMD"
        avx512="-mavx512f -mfma"
        if [ "$mode" = simde ]; then
            CFLAGS="$CFLAGS -DCC_SIMDE_AVX512 -Wno-psabi"
            avx512="-mavx2 -mfma -O1"
        fi
        for dt in f32 f64; do
            $CC $CFLAGS -mavx2 -mfma -c "$ig/ig_ukr_${dt}_avx2.c" -o "$tmp/ig_ukr_${dt}_avx2.o"
            $CC $CFLAGS $avx512 -c "$ig/ig_ukr_${dt}_avx512.c" -o "$tmp/ig_ukr_${dt}_avx512.o"
            objs="$objs $tmp/ig_ukr_${dt}_avx2.o $tmp/ig_ukr_${dt}_avx512.o"
        done ;;
    esac
fi
for f in $srcs ../core/isa.c; do
    $CC $CFLAGS -c "$ig/$f" -o "$tmp/$(basename "${f%.c}").o"
    objs="$objs $tmp/$(basename "${f%.c}").o"
done
$CC $CFLAGS "$here/ig_check.c" $objs -o "$out" -lm
