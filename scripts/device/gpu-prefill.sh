#!/usr/bin/env bash
# Prompt (prefill) throughput of kt-native's GPU layer path against llama.cpp's matched placements on the device
# machine (CUDA, no Java, no network), alternated: every round runs each pair (kt-native placement, then
# llama-bench -p N -n 0 with its matched flags) in turn.
#
#   scripts/device/gpu-prefill.sh [--model PRESET] [--prompts 128,512] [--rounds N] [--repeat N]
#       [--pairs "KT_CONFIG=LLAMA_FLAGS;..."] [--baseline-cp CP] [--variants "NAME=JAVA_OPTS;..."]
#
# kt-native: GpuPrefillBenchmark (one JVM per row): each prompt length as one forward pass of random tokens into a
# fresh cache, median of --repeat (default 3). llama.cpp: $WORK/llama-build/bin/llama-bench (built by
# scripts/device/gpu-vs-llama.sh --llama-src; without it only kt-native rows are measured), -p N -n 0 -r 3, the
# same GGUF. --baseline-cp: class path entries of an older engine build measured before each kt-native row
# (kt-base; GpuPrefillBenchmark uses only public API, so put its class first: the older build then runs its own
# prompt path). --variants: extra kt-native rows with JVM options, e.g.
# "cpu-experts=-Dlazarus.kt.gpu.prefill-stage-tokens=100000" (CPU-tier experts computed by the CPU, not staged).
# --model: the synthetic preset written by SyntheticModelsMain (benchQwen3MoeSkewed: skewed routing;
# benchQwen3MoeFlat: its shapes, flat routing), Q8_0. Needs .jdk-runtime/ and .device-classpath/
# (scripts/device/make-runtime.sh, make-classpath.sh; EXTRA_CP: class path entries put first) and nvcc;
# scripts/device/common.sh does the setup both device scripts share. Output: $WORK/prefill-PRESET.txt (copied to
# $OUT when set).
set -euo pipefail

ROUNDS=2
REPEAT=3
PROMPTS=128,512
PRESET=benchQwen3MoeSkewed
PAIRS="layers-uniform:0=-ngl 99 -ot exps=CPU;layers-dynamic:0.1=-ngl 99 -ncmoe 7;layers-uniform:1=-ngl 99"
BASE_CP=
VARIANTS=
while [ $# -gt 0 ]; do
  case "$1" in
    --model) PRESET=$2; shift 2 ;;
    --prompts) PROMPTS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --pairs) PAIRS=$2; shift 2 ;;
    --baseline-cp) BASE_CP=$2; shift 2 ;;
    --variants) VARIANTS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
TYPE=Q8_0
OUTNAME="prefill-$PRESET.txt"
# shellcheck source=scripts/device/common.sh
. "$(dirname "$0")/common.sh"

log "$(machine); tok/s per prompt length $PROMPTS"
kt() { # classpath config [java options]
  local cp=$1 config=$2
  shift 2
  # shellcheck disable=SC2068
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC $@ -cp "$cp" \
    dev.lazarus.kt.gpu.GpuPrefillBenchmark "$MODEL" --kernels "$KERNELS" --config "$config" --prompts "$PROMPTS" \
    --repeat "$REPEAT" 2>/dev/null | awk '{printf "%s ", $3}'
}
llama() { # flags...
  [ -x "$BENCH" ] || { echo "n/a (no llama-bench)"; return; }
  "$BENCH" -m "$MODEL" -t "$(nproc)" -p "$PROMPTS" -n 0 -r 3 -o csv "$@" 2>/dev/null \
    | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); if (h == "avg_ts") c = i } }
               NR > 1 { gsub(/"/, "", $c); printf "%s ", $c }'
}
IFS=';' read -r -a pairs <<< "$PAIRS"
IFS=';' read -r -a variants <<< "$VARIANTS"
for round in $(seq 1 "$ROUNDS"); do
  for pair in "${pairs[@]}"; do
    config=${pair%%=*}
    flags=${pair#*=}
    if [ -n "$BASE_CP" ]; then
      log "round $round  kt-base    $config  $(kt "$BASE_CP" "$config")"
    fi
    log "round $round  kt-native  $config  $(kt "$CP" "$config")"
    for v in "${variants[@]}"; do
      log "round $round  kt-${v%%=*}  $config  $(kt "$CP" "$config" "${v#*=}")"
    done
    # shellcheck disable=SC2086
    log "round $round  llama.cpp  $flags  $(llama $flags)"
  done
done
