#!/usr/bin/env bash
# Builds .jdk-runtime/ (git-ignored): a jlinked Java 25 runtime with only what the device check and
# benchmark need, for a machine that has CUDA but no Java (scripts/device/gpu-check.sh runs it).
#   java.base            the engine (FFM for mmap and the CUDA driver)
#   jdk.incubator.vector the CPU kernels
#   java.logging         System.Logger's backend (placement and GPU detection log through it)
#   jdk.unsupported      sun.misc.Unsafe for the libraries that probe it
# Run from the repository root on this (build) machine. libjvm.so is stripped of its symbol table
# afterwards (jlink keeps it): that takes the runtime from ~44 to ~39 MB, under the 40 MB it must fit.
set -euo pipefail
JDK=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
OUT=.jdk-runtime
[ -f pom.xml ] && [ -d backend-kt-native ] || { echo "run from the repository root" >&2; exit 2; }
rm -rf "$OUT"
"$JDK/bin/jlink" --add-modules java.base,java.logging,java.management,jdk.incubator.vector,jdk.unsupported \
  --strip-debug --no-header-files --no-man-pages --compress=zip-9 \
  --exclude-files="**/lib/classlist,**/public_suffix_list.dat,**/bin/keytool" --output "$OUT" 2>&1 | grep -v "incubator modules" || true
strip --strip-unneeded "$OUT/lib/server/libjvm.so"
"$OUT/bin/java" --add-modules jdk.incubator.vector -version 2>&1 | grep -v "incubator modules" | head -1
du -sh "$OUT"
