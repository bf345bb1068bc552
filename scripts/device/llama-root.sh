#!/usr/bin/env bash
# A minimal root with Debian's llama-server, llama-quantize and llama-bench (scripts/device/parity-payload.sh's
# engine benchmark) from the project's chroot (the binaries, the
# libraries they link, /bin/sh, the mount points scripts/llama-server-chroot.sh binds), for a machine that has
# neither the chroot nor a network. The ggml CPU variants named are copied in; with none, the variants directory
# stays empty (a caller puts one in per run).
#   llama-root.sh DEST [VARIANT]...
set -euo pipefail
dest=$1; shift
chroot_dir=${LAZARUS_CHROOT:-$(cd "$(dirname "$0")/../.." && pwd)/.chroot/sid}
backends=usr/lib/x86_64-linux-gnu/ggml/backends0
mkdir -p "$dest/usr/bin" "$dest/bin" "$dest/lib64" "$dest/$backends" "$dest"/{proc,dev,sys,tmp,var/lib}
cp "$chroot_dir/usr/bin/llama-server" "$chroot_dir/usr/bin/llama-quantize" "$chroot_dir/usr/bin/llama-bench" "$dest/usr/bin/"
cp -L "$chroot_dir/bin/sh" "$dest/bin/sh"
cp -L "$chroot_dir/lib64/ld-linux-x86-64.so.2" "$dest/lib64/"
for bin in /usr/bin/llama-server /usr/bin/llama-quantize /usr/bin/llama-bench /bin/sh "/$backends/libggml-cpu-x64.so"; do
  chroot "$chroot_dir" ldd "$bin" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do cp -L "$chroot_dir$lib" "$dest/usr/lib/x86_64-linux-gnu/"; done
for v in "$@"; do
  cp "$chroot_dir/$backends/libggml-cpu-$v.so" "$dest/$backends/"
done
