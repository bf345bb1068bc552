#!/usr/bin/env bash
# The fidelity metric: kt-native against a llama-server ("the oracle") serving the same GGUF, teacher-forced on
# the oracle's greedy path; prints top-1 agreement, |delta logprob| of the oracle's top-5 and the first divergence
# per prompt and overall (see docs/fidelity.md, "The fidelity metric").
#
#   scripts/fidelity.sh --model X.gguf --oracle http://127.0.0.1:PORT [--prompts FILE] [--tokens 64] [--json]
#                       [--min-top1 0.99] [--max-delta X] [--raw] [--one-pass] [--free-running] [--threads N]
#                       [--oracle-fa on|off] [--oracle-threads N] [--oracle-ctk T] [--oracle-ctv T]
#
# Exit: 0 measured (and thresholds met), 1 a threshold missed, 2 bad arguments, 3 the measurement failed.
# Builds the engine with Maven first (MAVEN_ARGS adds options, e.g. -o); extra JVM options: FIDELITY_JVM_ARGS
# (none by default: the weights are memory-mapped, not on the heap).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
launch="$root/backend-kt-native/tools/target/fidelity.launch"
# Maven writes the JDK it selected (25+) and the runtime classpath; Java starts here so its exit code is ours.
(cd "$root" && ./mvnw -q -B -pl backend-kt-native/tools -am -Pfidelity process-classes >&2) \
    || { echo "fidelity: the build failed (see above)" >&2; exit 3; }
{ read -r java_home; read -r classpath; } < "$launch"
# shellcheck disable=SC2086 # FIDELITY_JVM_ARGS is a list of options
exec "$java_home/bin/java" --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
    ${FIDELITY_JVM_ARGS:-} -cp "$classpath" dev.lazarus.kt.fidelity.FidelityMain "$@"
