#!/usr/bin/env bash
# The README's start command against `java -jar` with the documented flags, each started as a user would
# start it, one after the other: time to ready, then a 512-token completion of the embedded model, timed
# first and then --repeat more times. Prints a Markdown table for docs/benchmarks.md#start-up. Never part of the
# test suite.
#
#   scripts/first-run-bench.sh [--rounds 1] [--repeat 3] [--port 18400] [--tokens 512] [--only readme|jar|bare]
#
# "bare" is `java -jar` with no flags at all (the gateway relaunches itself with them). With --rounds R the
# commands alternate R times (the machine's load drifts; compare within a round).
# The gateway jar is built first (./mvnw -q -DskipTests package) when it is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

rounds=1 repeat=3 port=18400 tokens=512 only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --tokens) tokens="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

java_home=""
for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25* /usr/lib/jvm/jdk-25*; do
  if [[ -n "$candidate" && -x "$candidate/bin/java" ]] && "$candidate/bin/java" -version 2>&1 | grep -q '"25'; then
    java_home="$candidate"; break
  fi
done
[[ -n "$java_home" ]] || { echo "no JDK 25 found (set JAVA_HOME)" >&2; exit 1; }
jar=$(ls gateway/target/gateway-*.jar 2>/dev/null | grep -v -e sources -e tests | head -1 || true)
if [[ -z "$jar" ]]; then
  ./mvnw -q -B -DskipTests package
  jar=$(ls gateway/target/gateway-*.jar | grep -v -e sources -e tests | head -1)
fi

base="http://127.0.0.1:$port"
body=$(printf '{"model":"lazarus-tiny-moe","prompt":"Once upon a time","max_tokens":%d,"temperature":0}' "$tokens")
log_dir=$(mktemp -d /tmp/lazarus-first-run.XXXXXX)

# One request: seconds and the completion tokens it generated.
complete() {
  curl -s -o "$log_dir/answer.json" -w '%{time_total}' "$base/v1/completions" \
      -H 'Content-Type: application/json' -d "$body"
  printf ' %s' "$(grep -o '"completion_tokens":[0-9]*' "$log_dir/answer.json" | cut -d: -f2)"
}

# run <label> <command...>: starts it in its own process group, waits for readiness, times the requests.
run() {
  local label="$1"; shift
  local start=$SECONDS out="$log_dir/$label.log"
  SERVER_PORT=$port JAVA_HOME="$java_home" setsid "$@" >"$out" 2>&1 &
  local pid=$!
  until curl -sf -o /dev/null "$base/actuator/health/readiness"; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "$label: exited before ready, log: $out" >&2; tail -5 "$out" >&2; return 1; fi
    if (( SECONDS - start > 600 )); then echo "$label: not ready after 600 s" >&2; kill -- -"$pid"; return 1; fi
    sleep 0.5
  done
  local ready=$((SECONDS - start)) first rest=() t n
  first=$(complete)
  for ((i = 0; i < repeat; i++)); do rest+=("$(complete)"); done
  kill -TERM -- -"$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local summary; summary=$(grep -o 'Lazarus .*ready.*' "$out" | head -1 || true)
  read -r t n <<<"$first"
  printf '| %s | %s s | %.2f s (%s tokens) |' "$label" "$ready" "$t" "$n"
  for r in "${rest[@]}"; do read -r t n <<<"$r"; printf ' %.2f s (%s)' "$t" "$n"; done
  printf ' |\n'
  [[ -z "$summary" ]] || echo "  start-up line: $summary" >&2
}

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(git rev-parse --short HEAD)"
echo
echo "| start command | ready after | first $tokens-token completion | then |"
echo "|---|---|---|---|"
for ((round = 1; round <= rounds; round++)); do
  [[ -n "$only" && "$only" != readme ]] || run readme ./mvnw -q -pl gateway -am spring-boot:run
  [[ -n "$only" && "$only" != jar ]] || run jar "$java_home/bin/java" --add-modules=jdk.incubator.vector \
      --enable-native-access=ALL-UNNAMED -jar "$jar"
  [[ -n "$only" && "$only" != bare ]] || run bare "$java_home/bin/java" -jar "$jar"
done
echo "logs: $log_dir" >&2
