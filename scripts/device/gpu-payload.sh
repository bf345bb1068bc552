#!/usr/bin/env bash
# Packs this checkout's GPU path for the device machine when the device copy is another checkout (a helper's
# branch: `run` sends the lead's tree): PAYLOAD/gpu.tar.xz holds a repository-shaped root with a jlinked Java 25
# (.jdk-runtime, uncompressed modules so that xz takes it whole), .device-classpath (this checkout's engine
# classes and jars, scripts/device/make-classpath.sh) and this checkout's CUDA sources and device scripts.
#   scripts/device/gpu-payload.sh /work/main/.gpu2-payload      # here (the folder must be git-ignored there)
#   mkdir -p /tmp/r && tar xJf .gpu2-payload/gpu.tar.xz -C /tmp/r && cd /tmp/r && scripts/device/gpu-check.sh ...
set -euo pipefail
PAYLOAD=${1:?usage: gpu-payload.sh PAYLOAD_DIR}
JDK=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
[ -f pom.xml ] && [ -d backend-kt-native ] || { echo "run from the repository root" >&2; exit 2; }
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
R=$STAGE/root
mkdir -p "$R/backend-kt-native/kernels/src/main" "$R/scripts" "$PAYLOAD"
"$JDK/bin/jlink" --add-modules java.base,java.logging,java.management,jdk.incubator.vector,jdk.unsupported \
  --strip-debug --no-header-files --no-man-pages --compress=zip-0 --output "$R/.jdk-runtime" 2>&1 | grep -v incubator || true
strip --strip-unneeded "$R/.jdk-runtime/lib/server/libjvm.so"
bash scripts/device/make-classpath.sh >/dev/null
cp -r .device-classpath "$R/.device-classpath"
cp -r backend-kt-native/kernels/src/main/cuda "$R/backend-kt-native/kernels/src/main/"
cp -r scripts/device "$R/scripts/"
tar -C "$R" -cf - . | xz -6 -T2 > "$PAYLOAD/gpu.tar.xz"
ls -la "$PAYLOAD/gpu.tar.xz"
