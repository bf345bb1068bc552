#!/usr/bin/env bash
# Builds .device-classpath/ (git-ignored) for scripts/device/gpu-check.sh: kt-native's compiled classes (kernels,
# engine and the tools that run the GPU checks, in one folder)
# (without the embedded test model, which the device run does not use) and the dependency jars its
# placement/GPU path can load (backend-api, Jackson 3, Reactor). Jinjava and its tree serve chat
# templates only and stay behind, to keep what travels to the device machine small.
# Run from the repository root on this (build) machine.
set -euo pipefail
OUT=.device-classpath
[ -f pom.xml ] && [ -d backend-kt-native ] || { echo "run from the repository root" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT/lib"
ALL=$(mktemp -d)
trap 'rm -rf "$ALL"' EXIT
./mvnw -q -pl backend-kt-native/tools -am package -DskipTests \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$ALL"
for jar in host-facts backend-api jackson-core-3 jackson-databind-3 jackson-annotations reactor-core reactive-streams; do
  cp "$ALL"/$jar*.jar "$OUT/lib/"
done
mkdir -p "$OUT/classes"
for module in kernels engine tools; do
  cp -r backend-kt-native/$module/target/classes/. "$OUT/classes/"
done
rm -rf "$OUT/classes/models"
du -sh "$OUT"
