#!/usr/bin/env bash
# kt-native's GPU placements against llama.cpp's matched ones on the device machine (CUDA, no Java, no network),
# alternated: every round runs each pair (kt-native configuration, then llama-bench with its matched flags)
# in turn, so slow drifts of the machine hit both alike.
#
#   scripts/device/gpu-vs-llama.sh --llama-src DIR_OR_TARBALL --model PRESET [--type Q8_0|Q4_K] [--rounds N] [--tokens N]
#       [--warmup N] [--pairs "KT_CONFIG=LLAMA_FLAGS;..."] [--baseline-cp CP --baseline-cuda DIR]
#
# --llama-src: a llama.cpp source tree (or a .tar.xz of one); it is built here with CUDA for this GPU only
#   (cmake, GGML_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=native, target llama-bench, into $WORK/llama-build, out of
#   the repository); an existing build there is reused; without either, only kt-native rows are measured.
# --model: the synthetic preset written by SyntheticModelsMain (benchQwen3MoeSkewed: skewed routing;
#   benchQwen3MoeFlat: its shapes with flat routing; benchQwen3Moe: small, flat routing) in --type (default Q8_0;
#   Q4_K: every matrix Q4_K, the router F32, like llama-quantize --pure Q4_K_M); both engines read the same GGUF.
# --pairs: kt-native configuration (GpuDecodeBenchmark's) = llama-bench flags, e.g.
#   "layers-uniform:1=-ngl 99;layers-uniform:0=-ngl 99 -ot exps=CPU;layers-dynamic:0.1=-ngl 99 -ncmoe 7".
# --baseline-cp / --baseline-cuda: class path entries and CUDA source folder of an older engine build; its row
#   (kt-base) runs before each kt-native row.
# --warmup: tokens kt-native decodes before timing (default 256), whose routing dynamic placement learns from and
#   re-places once; a server re-places every rebalance-interval from its live traffic, i.e. from thousands of tokens
#   after its first minutes (64 tokens, ~10 routings per expert, left the skewed model's GPU byte hits at 28 % of a
#   possible ~36 %; 256 gave 30 %). The CPU experts sit where a user's configuration puts them by default
#   (cpu-experts: auto, the RAM tier where the copies fit); a configuration ending in :0 keeps them mapped.
# kt-native: GpuDecodeBenchmark, one JVM per row, 16 prompt + N greedy tokens, median of 3 (tok/s counts the
# prompt, which this path feeds token by token at decode speed); llama.cpp: llama-bench -p 0 -n N -r 3
# (generation only). Needs .jdk-runtime/ and .device-classpath/ (scripts/device/make-runtime.sh,
# make-classpath.sh) and nvcc; scripts/device/common.sh does the setup both device scripts share. Output:
# $WORK/vs-llama-PRESET-TYPE.txt (copied to $OUT when set).
set -euo pipefail

ROUNDS=2
TOKENS=64
WARMUP=256
PRESET=benchQwen3MoeSkewed
TYPE=Q8_0
PAIRS="layers-uniform:1=-ngl 99;layers-uniform:0=-ngl 99 -ot exps=CPU;layers-dynamic:0.1=-ngl 99 -ncmoe 7"
LLAMA_SRC=
BASE_CP=
BASE_CUDA=
while [ $# -gt 0 ]; do
  case "$1" in
    --llama-src) LLAMA_SRC=$2; shift 2 ;;
    --model) PRESET=$2; shift 2 ;;
    --type) TYPE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --tokens) TOKENS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --pairs) PAIRS=$2; shift 2 ;;
    --baseline-cp) BASE_CP=$2; shift 2 ;;
    --baseline-cuda) BASE_CUDA=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
OUTNAME="vs-llama-$PRESET-$TYPE.txt"
# shellcheck source=scripts/device/common.sh
. "$(dirname "$0")/common.sh"
BASE_KERNELS="$WORK/kernels-base.ptx"
if [ -n "$BASE_CUDA" ]; then
  nvcc -ptx -O3 -arch="${SM_ARCH:-sm_90}" -o "$BASE_KERNELS" "$BASE_CUDA/kernels.cu"
else
  BASE_KERNELS=$KERNELS
fi

if [ ! -x "$BENCH" ] && [ -n "$LLAMA_SRC" ]; then
  SRC=$LLAMA_SRC
  if [ -f "$LLAMA_SRC" ]; then
    SRC="$WORK/llama-src"
    mkdir -p "$SRC"
    tar xJf "$LLAMA_SRC" -C "$SRC"
  fi
  start=$(date +%s)
  cmake -S "$SRC" -B "$WORK/llama-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=native -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_CCACHE=OFF > "$WORK/llama-cmake.log" 2>&1
  cmake --build "$WORK/llama-build" --target llama-bench -j "$(nproc)" > "$WORK/llama-build.log" 2>&1 \
    || { tail -30 "$WORK/llama-build.log" >&2; exit 3; }
  log "llama-bench built with CUDA in $(( $(date +%s) - start )) s"
fi

log "$(machine)"
kt() { # classpath kernels config
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -cp "$1" \
    dev.lazarus.kt.gpu.GpuDecodeBenchmark "$MODEL" --kernels "$2" --gpu on --configs "$3" --header false \
    --tokens "$TOKENS" --warmup "$WARMUP" --repeat 3 2>/dev/null | awk '{print $4 "  (GPU byte hits " $6 ", CPU experts " $8 ")"}'
}
llama() { # flags...
  [ -x "$BENCH" ] || { echo "n/a (no llama-bench)"; return; }
  "$BENCH" -m "$MODEL" -t "$(nproc)" -p 0 -n "$TOKENS" -r 3 -o csv "$@" 2>/dev/null \
    | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); if (h == "avg_ts") c = i } } NR == 2 { gsub(/"/, "", $c); print $c }'
}
IFS=';' read -r -a pairs <<< "$PAIRS"
for round in $(seq 1 "$ROUNDS"); do
  for pair in "${pairs[@]}"; do
    config=${pair%%=*}
    flags=${pair#*=}
    if [ -n "$BASE_CP" ]; then
      log "round $round  kt-base   $config  $(kt "$BASE_CP" "$BASE_KERNELS" "$config")"
    fi
    log "round $round  kt-native $config  $(kt "$CP" "$KERNELS" "$config")"
    # shellcheck disable=SC2086
    log "round $round  llama.cpp $flags  $(llama $flags)"
  done
done
