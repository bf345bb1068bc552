#!/usr/bin/env bash
# Builds .device-classpath/ (git-ignored) for scripts/device/gpu-check.sh: the engine's compiled classes
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
./mvnw -q -pl backend-kt-native -am package -DskipTests \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$ALL"
for jar in backend-api jackson-core-3 jackson-databind-3 jackson-annotations reactor-core reactive-streams; do
  cp "$ALL"/$jar*.jar "$OUT/lib/"
done
cp -r backend-kt-native/target/classes "$OUT/classes"
rm -rf "$OUT/classes/models"
du -sh "$OUT"
