# Sourced by scripts/device/gpu-vs-llama.sh and gpu-prefill.sh once their options are read: what both do before
# their rows. In: PRESET (SyntheticModelsMain's preset), TYPE (Q8_0 or Q4_K), OUTNAME (the log's file name). Sets
# WORK (default target/device, out of the sources), JAVA and CP (.jdk-runtime/ and .device-classpath/ from
# scripts/device/make-runtime.sh and make-classpath.sh; EXTRA_CP: class path entries put first), OUTFILE and log()
# (lines also appended there, copied to $OUT on exit when set), KERNELS (backend-kt-native/kernels/src/main/cuda compiled to
# one PTX module by nvcc for sm_90, SM_ARCH overrides), MODEL (the preset in TYPE, written once), BENCH (llama-bench
# as scripts/device/gpu-vs-llama.sh --llama-src builds it, possibly absent) and machine() (the line naming the model,
# the GPU and the CPU).
# shellcheck shell=bash
[ -d backend-kt-native/kernels/src/main/cuda ] || { echo "run from the repository root" >&2; exit 2; }
WORK=${WORK:-target/device}
mkdir -p "$WORK"
JAVA=.jdk-runtime/bin/java
CP="${EXTRA_CP:+$EXTRA_CP:}.device-classpath/classes:.device-classpath/lib/*"
OUTFILE="$WORK/$OUTNAME"
log() { echo "$@" | tee -a "$OUTFILE"; }
trap '[ -n "${OUT:-}" ] && cp "$OUTFILE" "$OUT/" 2>/dev/null || true' EXIT

KERNELS="$WORK/kernels.ptx"
nvcc -ptx -O3 -arch="${SM_ARCH:-sm_90}" -o "$KERNELS" backend-kt-native/kernels/src/main/cuda/kernels.cu
MODEL="$WORK/$PRESET-${TYPE,,}.gguf"
[ -f "$MODEL" ] || "$JAVA" --add-modules jdk.incubator.vector -cp "$CP" dev.lazarus.kt.synthetic.SyntheticModelsMain \
  "$PRESET" "$MODEL" "$TYPE" 2>/dev/null
BENCH="$WORK/llama-build/bin/llama-bench"

machine() {
  echo "model $PRESET ($(du -h "$MODEL" | cut -f1)), GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)," \
    "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) threads"
}
