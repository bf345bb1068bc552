#!/usr/bin/env bash
# GPU tier check and decode benchmark on a machine with CUDA (driver + nvcc) but no Java.
#
# Prepare on the build machine (both folders are git-ignored, about 45 MB together):
#   scripts/device/make-runtime.sh     # .jdk-runtime/     jlinked Java 25
#   scripts/device/make-classpath.sh   # .device-classpath/ engine classes + dependency jars
# Then, from the repository root on the device machine:
#   scripts/device/gpu-check.sh [--gpu on|off] [--bench on|off] [--model PRESET] [--rounds N] [--tokens N] [--warmup N]
#                               [--repeat N] [--threads N] [--configs LIST]
#
# Steps: (a) nvcc compiles backend-kt-native/kernels/src/main/cuda/kernels.cu (which includes the other .cu files) to
# one PTX module for sm_90 (SM_ARCH overrides); (b) GpuParityCheck compares logits of a tiny qwen3moe (Q8_0)
# against the CPU path: 100 % and 30 % of the expert bytes on the GPU, then the GPU layer path (attention,
# norms, router on the GPU) with 0 %, 30 % and 100 %; the same for a tiny deepseek2 (latent attention, dense
# block, shared expert), then the layer path on a dense tiny llama, then tiny qwen3moe in Q4_K, Q5_K, Q6_K and
# Q4_0 (experts-only and layer path, the K-quants with their wider tolerances), each MoE model's and the dense
# llama's batched prompt (GpuPrefill: 45 tokens as one pass, CPU-tier experts computed by the CPU or staged)
# against the CPU path and the token-by-token GPU path; exit 1 on a mismatch; (c) SyntheticModelsMain writes
# benchQwen3Moe (Q8_0) and GpuDecodeBenchmark prints decode tok/s for all experts on the CPU against 10 % and
# 30 % of the expert bytes on the GPU, uniform against dynamic placement, without and with the GPU layer path
# (configs named layers-...), with the GPU hit rate on expert bytes. --model names the synthetic preset
# (benchQwen3Moe: flat routing; benchQwen3MoeSkewed: realistic sizes and skewed routing, ~2.7 GB, written in
# under a minute). --rounds N runs all configurations N times, alternating (round 1: every configuration,
# then round 2 ...), so slow drifts of the machine hit them alike; every round's ratios are to that round's
# first configuration (the baseline, normally cpu) and a summary prints each configuration's median over rounds.
# EXTRA_CP (class path entries put first) lets a device run try classes newer than .device-classpath.
# --gpu off skips (a) and (b) and benchmarks the CPU only: how the Java parts are tested without a GPU.
# Everything written goes to $WORK (default target/device) and, when set, is copied to $OUT.
set -euo pipefail

GPU=on
BENCH=on
PRESET=benchQwen3Moe
ROUNDS=1
CONFIGS="cpu,uniform:0.1,dynamic:0.1,layers-uniform:0,layers-uniform:0.1,layers-dynamic:0.1,layers-uniform:0.3,layers-dynamic:0.3"
BENCH_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu) GPU=$2; shift 2 ;;
    --bench) BENCH=$2; shift 2 ;;
    --configs) CONFIGS=$2; shift 2 ;;
    --model) PRESET=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --tokens|--warmup|--threads|--repeat) BENCH_ARGS+=("$1" "$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

[ -d backend-kt-native/kernels/src/main/cuda ] || { echo "run from the repository root" >&2; exit 2; }
JAVA=.jdk-runtime/bin/java
[ -x "$JAVA" ] || { echo "$JAVA missing: run scripts/device/make-runtime.sh on the build machine" >&2; exit 2; }
[ -d .device-classpath/classes ] || { echo ".device-classpath missing: run scripts/device/make-classpath.sh" >&2; exit 2; }
WORK=${WORK:-target/device}
mkdir -p "$WORK"
CP="${EXTRA_CP:+$EXTRA_CP:}.device-classpath/classes:.device-classpath/lib/*"
run_java() {
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
    -cp "$CP" "$@" 2> >(grep -v "incubator modules" >&2)
}
status=0
finish() {
  if [ -n "${OUT:-}" ]; then
    cp "$WORK"/*.txt "$WORK"/*.ptx "$OUT"/ 2>/dev/null || true
  fi
}
trap finish EXIT

KERNELS="$WORK/kernels.ptx"
if [ "$GPU" != off ]; then
  echo "== (a) nvcc: CUDA kernels to PTX"
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$NVCC" ] || { echo "nvcc not found (PATH or /usr/local/cuda/bin)" >&2; exit 3; }
  "$NVCC" --version | tail -1
  # one module: kernels.cu includes experts.cu, layers.cu, mla.cu and moe.cu
  "$NVCC" -ptx -O3 -arch="${SM_ARCH:-sm_90}" -o "$KERNELS" backend-kt-native/kernels/src/main/cuda/kernels.cu
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

  echo "== (b) GPU tier against the CPU path"
  if ! run_java dev.lazarus.kt.gpu.GpuParityCheck "$KERNELS" | tee "$WORK/parity.txt"; then
    echo "GPU PARITY CHECK FAILED" >&2
    status=1
  fi
fi

[ "$BENCH" = off ] && exit $status
echo "== (c) decode benchmark on $PRESET"
MODEL="$WORK/$PRESET-q8_0.gguf"
if [ ! -f "$MODEL" ]; then
  start=$(date +%s)
  run_java dev.lazarus.kt.synthetic.SyntheticModelsMain "$PRESET" "$MODEL" Q8_0
  echo "written in $(( $(date +%s) - start )) s"
fi
# One JVM per configuration and round: a shared JIT profile would favour whichever configuration ran first.
: > "$WORK/benchmark.txt"
for round in $(seq 1 "$ROUNDS"); do
  BASELINE=0
  HEADER=$([ "$round" = 1 ] && echo true || echo false)
  echo "-- round $round of $ROUNDS, load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$WORK/benchmark.txt"
  for config in ${CONFIGS//,/ }; do
    line=$(run_java dev.lazarus.kt.gpu.GpuDecodeBenchmark "$MODEL" --kernels "$KERNELS" --gpu "$GPU" \
      --configs "$config" --baseline "$BASELINE" --header "$HEADER" "${BENCH_ARGS[@]}")
    echo "$line" | tee -a "$WORK/benchmark.txt"
    if [ "$BASELINE" = 0 ]; then
      BASELINE=$(echo "$line" | tail -1 | awk '{print $4}')
    fi
    HEADER=false
  done
done
# median over rounds of tok/s, of the ratio to the same round's baseline and of the GPU byte hit rate
echo "-- median of $ROUNDS rounds" | tee -a "$WORK/benchmark.txt"
awk '/^-- /{next} $4 ~ /^[0-9.]+$/ && $5 ~ /x$/ {
       n[$1]++; tps[$1, n[$1]] = $4; r = $5; sub(/x$/, "", r); ratio[$1, n[$1]] = r
       h = $6; sub(/%$/, "", h); hit[$1, n[$1]] = h
       if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
     function median(a, name, m,   v, i, j, t) {
       for (i = 1; i <= m; i++) v[i] = a[name, i]
       for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
       return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
     END { printf "%-28s %7s %9s %9s %16s\n", "config", "rounds", "tok/s", "vs cpu", "gpu byte hits"
           for (i = 1; i <= k; i++) { c = order[i]
             printf "%-28s %7d %9.2f %8.2fx %15.1f%%\n", c, n[c], median(tps, c, n[c]), median(ratio, c, n[c]), median(hit, c, n[c]) } }' \
  "$WORK/benchmark.txt" | tee -a "$WORK/benchmark.txt"
exit $status
