#!/usr/bin/env bash
# Packs the engine's llama.cpp parity suites for a machine without Java or network (the GPU device: an Intel Xeon
# with AMX), so the suites run there as CI runs them here: .device-payload/itest.tar.xz (git-ignored) holds a
# jlinked Java 25 (uncompressed modules, xz'd whole: ~20 MB), the test classpath with JUnit's console launcher, the
# engine's compiled classes and tests (without the embedded model), and a minimal root with Debian's llama-server and
# llama-quantize from the project's chroot (their libraries, /bin/sh, four ggml CPU variants: zen4, sapphirerapids,
# haswell, skylakex), which scripts/llama-server-chroot.sh runs like the full chroot. Run from the repository root
# after `./mvnw -pl backend-kt-native/tools -am install -DskipTests`; then, on the device (carry .device-payload):
#   tar xJf .device-payload/itest.tar.xz -C /tmp; I=/tmp/itest
#   LAZARUS_CHROOT=$I/root LAZARUS_PROJECT_ROOT=$PWD CI=true $I/jdk/bin/java --add-modules=jdk.incubator.vector \
#     --enable-native-access=ALL-UNNAMED -cp "$I/classes:$I/test-classes:$I/lib/*" \
#     org.junit.platform.console.ConsoleLauncher execute --select-class dev.lazarus.kt.correctness.GreedyParityTest ...
# Built after `./mvnw -pl backend-kt-native/tools -am install -DskipTests` and `./mvnw -pl backend-kt-native/tools -Pbench test-compile`
# (`-Pbench install` would also run the local engine benchmark; `-Dexec.skip` would skip the native library's build
# too and leave a stale one in target/classes), test-classes also hold the engine
# benchmark (src/bench/java), and the root has llama-bench:
#   LAZARUS_CHROOT=$I/root LAZARUS_PROJECT_ROOT=$PWD $I/jdk/bin/java --add-modules=jdk.incubator.vector \
#     --enable-native-access=ALL-UNNAMED -Xmx8g -cp "$I/classes:$I/test-classes:$I/lib/*" \
#     dev.lazarus.kt.bench.EngineBenchMain --models q8_0,q4_k_m --threads 16 --fork --experts default-java,default-native
set -euo pipefail
[ -f pom.xml ] && [ -d backend-kt-native ] || { echo "run from the repository root" >&2; exit 2; }
JDK=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
CHROOT=${LAZARUS_CHROOT:-$PWD/.chroot/sid}
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
I=$STAGE/itest
mkdir -p "$I/lib" .device-payload

"$JDK/bin/jlink" --add-modules java.base,java.logging,java.management,jdk.management,jdk.jfr,jdk.incubator.vector,jdk.unsupported,java.net.http,java.xml,java.desktop,java.sql,java.naming \
  --strip-debug --no-header-files --no-man-pages --compress=zip-0 --output "$I/jdk" 2>&1 | grep -v incubator || true
strip --strip-unneeded "$I/jdk/lib/server/libjvm.so"
# java.desktop is there for java.beans (Jinjava's templates); its graphics libraries are not
rm -f "$I"/jdk/lib/{libfontmanager,libawt_xawt,libsplashscreen,liblcms,libjavajpeg,libmlib_image}.so

./mvnw -q -o -pl backend-kt-native/tools dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$STAGE/cp.txt" >/dev/null
JUNIT=$(tr ':' '\n' < "$STAGE/cp.txt" | sed -n 's#.*/junit-jupiter-api-\(.*\)\.jar#\1#p')
./mvnw -q dependency:get -Dartifact="org.junit.platform:junit-platform-console-standalone:$JUNIT" >/dev/null
for jar in $(tr ':' '\n' < "$STAGE/cp.txt"); do
  case $(basename "$jar") in junit-*|opentest4j*|apiguardian*|byte-buddy*|kt-native-*) ;; *) cp "$jar" "$I/lib/" ;; esac
done
cp "$HOME/.m2/repository/org/junit/platform/junit-platform-console-standalone/$JUNIT/junit-platform-console-standalone-$JUNIT.jar" "$I/lib/"
# the three kt-native modules' classes and tests, each in one folder (the jars of kernels and engine stay out)
mkdir -p "$I/classes" "$I/test-classes"
for module in kernels engine tools; do
  cp -r backend-kt-native/$module/target/classes/. "$I/classes/"
  cp -r backend-kt-native/$module/target/test-classes/. "$I/test-classes/"
done
rm -rf "$I/classes/models"

LAZARUS_CHROOT=$CHROOT bash scripts/device/llama-root.sh "$I/root" zen4 sapphirerapids haswell skylakex

tar -C "$STAGE" -cf - itest | xz -9 -T2 > .device-payload/itest.tar.xz
ls -la .device-payload/itest.tar.xz
