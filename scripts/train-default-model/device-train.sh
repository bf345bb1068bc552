#!/usr/bin/env bash
# Runs on the GPU machine (no network, no Java): three trainings side by side on the one GPU (the model is far
# too small to fill it), differing in regularisation, then keeps the one with the lowest validation loss of the
# weights as written. Usage: device-train.sh <payload dir> <out dir> [seconds]
set -euo pipefail
payload=$1 out=$2 seconds=${3:-270}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
declare -A configs=(
  [a]="--dropout 0.1 --epochs 12"
  [b]="--dropout 0.2 --epochs 25"
  [c]="--dropout 0.3 --epochs 40"
)
for name in "${!configs[@]}"; do
  # shellcheck disable=SC2086
  python3 "$here/train.py" "$payload" "$work/$name" --seconds "$seconds" --eval-every 100 --patience 10 \
      ${configs[$name]} > "$work/$name.out" 2>&1 &
done
wait || true
best=$(python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
scores = {}
for name in sorted(os.listdir(work)):
    f = os.path.join(work, name, "samples.json")
    if os.path.exists(f):
        scores[name] = json.load(open(f))["summary"]["val_loss_as_served"]
print(min(scores, key=scores.get) if scores else "")
PY
)
for name in "${!configs[@]}"; do
  cp "$work/$name.out" "$out/train-$name.txt"
done
if [ -z "$best" ]; then
  echo "no training finished"; tail -20 "$work"/*.out; exit 1
fi
echo "kept: $best (${configs[$best]})" | tee "$out/kept.txt"
cp "$work/$best/weights.bin" "$work/$best/samples.json" "$out/"
