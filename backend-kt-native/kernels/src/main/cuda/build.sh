#!/bin/sh
# Compiles kt-native's CUDA kernels (kernels.cu, which includes the other .cu files) to $1/kernels.ptx where nvcc is
# on PATH or in /usr/local/cuda/bin (NVCC overrides), for SM_ARCH (default sm_90). Without nvcc it says so and builds
# nothing: the GPU tier then takes a PTX built elsewhere (the gpu-kernels setting, backend-kt-native/README.md).
set -e
out="$1"
src="$(cd "$(dirname "$0")" && pwd)"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
if [ ! -x "$nvcc" ]; then
    echo "[kt-native] CUDA kernels: not built (no nvcc on PATH or in /usr/local/cuda/bin)"
    exit 0
fi
arch="${SM_ARCH:-sm_90}"
# nvcc takes tens of seconds: an unchanged source for the same target is not compiled again
if [ -f "$out/kernels.ptx" ] && [ "$(cat "$out/kernels.arch" 2>/dev/null)" = "$arch" ] \
        && [ -z "$(find "$src" -newer "$out/kernels.ptx" \( -name '*.cu' -o -name '*.cuh' \))" ]; then
    echo "[kt-native] CUDA kernels: $out/kernels.ptx is up to date"
    exit 0
fi
mkdir -p "$out"
"$nvcc" -ptx -O3 -arch="$arch" -o "$out/kernels.ptx" "$src/kernels.cu"
echo "$arch" > "$out/kernels.arch"
echo "[kt-native] CUDA kernels: built $out/kernels.ptx for $arch with $("$nvcc" --version | tail -1)"
