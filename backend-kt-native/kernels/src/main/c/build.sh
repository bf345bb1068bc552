#!/bin/sh
# Builds kt-native's native kernels (liblazarus-kt.so) into $1 with the system C compiler, one translation unit per
# instruction set; the Java side picks one by the CPU's flags. Without a C compiler, or off Linux x86-64, it says so
# and builds nothing: the engine then runs its Java kernels.
set -e
out="$1"
src="$(cd "$(dirname "$0")" && pwd)"
cc="${CC:-cc}"
if [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
    echo "[kt-native] native kernels: not built ($(uname -s) $(uname -m) is not Linux x86-64); the Java kernels run"
    exit 0
fi
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "[kt-native] native kernels: not built (no C compiler '$cc' on PATH); the Java kernels run"
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# -O3: GCC -O2 does not unroll the loops over a group's activations, whose accumulators then live on the stack
# (Q6_K/Q8_0 GEMM of 16 vectors 1.8-2.7x slower); -ffp-contract=off and no fast-math keep every float fold's order
flags="-O3 -fPIC -ffp-contract=off -fno-fast-math -std=c11 -Wall -Werror"
"$cc" $flags -mavx2 -mfma -mf16c -c "$src/lz_avx2.c" -o "$tmp/avx2.o"
"$cc" $flags -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512vnni -c "$src/lz_avx512.c" -o "$tmp/avx512.o"
"$cc" $flags -c "$src/lz_grids.c" -o "$tmp/grids.o"
"$cc" $flags -c "$src/lz_libm.c" -o "$tmp/libm.o"
"$cc" $flags -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -c "$src/lz_flash_avx512.c" -o "$tmp/flash_avx512.o"
mkdir -p "$out"
"$cc" -shared -o "$out/liblazarus-kt.so" "$tmp/avx2.o" "$tmp/avx512.o" "$tmp/grids.o" "$tmp/libm.o" "$tmp/flash_avx512.o" -lm
echo "[kt-native] native kernels: built $out/liblazarus-kt.so with $("$cc" --version | head -1)"
