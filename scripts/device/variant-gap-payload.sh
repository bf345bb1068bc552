#!/usr/bin/env bash
# Packs what scripts/device/ggml-variant-gap.py needs on a machine without Java or network (the GPU device,
# an Intel host with AMX): a minimal root with Debian's llama-server from the project's chroot (the binary, the
# libraries it links, no ggml CPU variant), every variant library beside it, and the models with their prompts.
#   variant-gap-payload.sh OUT_DIR MODELS_DIR     (MODELS_DIR holds *.gguf and prompts.json)
# On the device:  tar xf OUT_DIR/root.tar.xz; copy one libggml-cpu-V.so into usr/lib/x86_64-linux-gnu/ggml/backends0/
# of a copy of the root per variant (see the device command in docs/fidelity.md).
set -euo pipefail
out=$1 models=$2
chroot_dir=${LAZARUS_CHROOT:-$(cd "$(dirname "$0")/../.." && pwd)/.chroot/sid}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
LAZARUS_CHROOT=$chroot_dir bash "$(dirname "$0")/llama-root.sh" "$stage/root"
mkdir -p "$stage/root/models" "$stage/variants"
cp "$chroot_dir"/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-cpu-*.so "$stage/variants/"
cp "$models"/*.gguf "$models/prompts.json" "$stage/root/models/"
mkdir -p "$out"
tar -C "$stage" -cJf "$out/variant-gap.tar.xz" root variants
ls -la "$out/variant-gap.tar.xz"
