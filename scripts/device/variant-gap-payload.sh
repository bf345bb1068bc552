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
mkdir -p "$stage/root/usr/bin" "$stage/root/lib64" "$stage/root/usr/lib/x86_64-linux-gnu/ggml/backends0" \
  "$stage/root/models" "$stage/root/proc" "$stage/root/dev" "$stage/root/tmp" "$stage/variants"
cp "$chroot_dir/usr/bin/llama-server" "$stage/root/usr/bin/"
for lib in $(chroot "$chroot_dir" ldd /usr/bin/llama-server | awk '$3 ~ /^\// {print $3}'); do
  cp -L "$chroot_dir$lib" "$stage/root/usr/lib/x86_64-linux-gnu/"
done
cp -L "$chroot_dir/lib64/ld-linux-x86-64.so.2" "$stage/root/lib64/"
for lib in libgomp.so.1; do cp -L "$chroot_dir/usr/lib/x86_64-linux-gnu/$lib" "$stage/root/usr/lib/x86_64-linux-gnu/"; done
cp "$chroot_dir"/usr/lib/x86_64-linux-gnu/ggml/backends0/libggml-cpu-*.so "$stage/variants/"
cp "$models"/*.gguf "$models/prompts.json" "$stage/root/models/"
mkdir -p "$out"
tar -C "$stage" -cJf "$out/variant-gap.tar.xz" root variants
ls -la "$out/variant-gap.tar.xz"
