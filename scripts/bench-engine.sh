#!/usr/bin/env bash
# kt-native engine vs llama.cpp's llama-bench on the same GGUF and thread count, alternated round by
# round; prints a Markdown table (see docs/benchmarks.md#cpu-decode-and-prefill). Never part of the test suite.
#
#   scripts/bench-engine.sh [--models q8_0,q4_k_m,deepseek32-q8_0,qwen35moe-q8_0,qwen3next-q8_0,minimax-m2-q8_0|<gguf>,...] [--threads N] [--rounds R]
#                           [--prompt 512] [--gen 128] [--work /tmp/lazarus-bench] [--no-llama] [--fork]
#                           [--warmup-tokens 1024] [--depths 0,8192,32768] [--llama-flags -fa,1,-ub,2048]
#                           [--attention nonflash,flash]
# --depths: prefill and decode also at that many positions of filled context (llama-bench -d).
# --fork: each model and expert mode in a JVM of its own (see EngineBenchMain); without it all share one JVM.
#
# llama.cpp runs from the Debian chroot made by scripts/llama-server-chroot.sh setup (as root);
# LAZARUS_CHROOT points at it (default <repo>/.chroot/sid). The synthetic models are generated into
# --work on first use (q4_k_m through llama-quantize). Extra JVM options: BENCH_JVM_ARGS.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
args="$*"
[[ "$args" == *--threads* ]] || args="$args --threads $(nproc)"
exec ./mvnw -q -pl backend-kt-native/tools -am -Pbench verify -DskipTests \
    -Dbench.args="$args" -Dbench.jvmArgs="${BENCH_JVM_ARGS:--Xmx3g}"
