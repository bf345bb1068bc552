#!/usr/bin/env bash
# What holds the gateway's memory under the relay load (issue 13's RSS goal). Never part of the tests.
#
#   scripts/bench-gateway/memory-breakdown.sh WORK JAR SECONDS [JVM options...]
#
# WORK is a work directory left by `scripts/bench-gateway.sh --keep` (its fake upstream's nginx configuration,
# the gateway's configuration and the wrk scripts). Starts that upstream and the gateway from JAR with the JVM
# options and NMT, then wrk -t2 -c32 for SECONDS non-stream, then stream; prints VmRSS when ready and after each
# loop, VmHWM, and `jcmd VM.native_memory summary`; the class-load log (-Xlog:class+load), the class loader
# statistics and the live-object histogram are left in WORK/memory-breakdown/. Port 18702; stops what it started.
set -euo pipefail
work=$(realpath "$1") jar=$(realpath "$2") secs=$3; shift 3
java_home=${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -1)}
out=$work/memory-breakdown; rm -rf "$out"; mkdir -p "$out"
nginx -p "$work" -c "$work/upstream.conf" -e "$work/upstream.err" -g 'daemon off;' >/dev/null 2>&1 & up=$!
cd "$work" # the gateway's relative paths (logs, data) stay in WORK
"$java_home/bin/java" --add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
   -Dlazarus.relaunch=false -XX:NativeMemoryTracking=summary -Xlog:class+load=info:file="$out/classload.txt" "$@" \
   -jar "$jar" --server.port=18702 --spring.config.additional-location="file:$work/gateway.yml" >"$out/gateway.log" 2>&1 &
gw=$!
trap 'kill $gw $up 2>/dev/null || true; wait $gw $up 2>/dev/null || true' EXIT
for _ in $(seq 900); do curl -sf -o /dev/null http://127.0.0.1:18702/actuator/health/readiness && break; sleep 0.2; done
echo "ready: $(grep VmRSS /proc/$gw/status)"
for mode in nonstream stream; do
  wrk -t2 -c32 -d"${secs}s" --latency -s "$work/$mode.lua" http://127.0.0.1:18702/v1/chat/completions >"$out/wrk-$mode.txt"
  echo "after $mode ($(grep Requests/sec "$out/wrk-$mode.txt")): $(grep VmRSS /proc/$gw/status)"
done
grep VmHWM /proc/$gw/status
"$java_home/bin/jcmd" $gw VM.native_memory summary | tee "$out/nmt.txt" | grep -E '^(Total|-)'
"$java_home/bin/jcmd" $gw VM.classloader_stats >"$out/classloader-stats.txt"
"$java_home/bin/jcmd" $gw GC.class_histogram >"$out/histogram.txt"
echo "classes loaded: $(grep -c 'source:' "$out/classload.txt"); live heap: $(tail -1 "$out/histogram.txt")"
