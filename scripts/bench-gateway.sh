#!/usr/bin/env bash
# The gateway as a proxy hop, against a plain nginx reverse-proxy hop in front of the same fake OpenAI
# upstream (issue 13). Never part of the test suite. Prints Markdown tables (docs/benchmarks.md#the-gateway-as-a-proxy-hop).
#
#   scripts/bench-gateway.sh [--rounds 3] [--duration 10] [--warmup 30] [--connections 32] [--threads 2]
#                            [--requests 50] [--rate 200] [--rate-duration 10] [--port 18500] [--targets direct,hop,gateway]
#                            [--modes nonstream,stream,stream1w]
#                            [--jar gateway/target/gateway-*.jar] [--baseline-jar OTHER.jar]
#                            [--jfr nonstream|stream|stream1w] [--jfr-duration 20] [--gateway-opts '-Xmx256m'] [--keep]
#                            [--baseline-gateway-opts '-XX:+UseSerialGC -Xmx96m'] [--api-key KEY]
#                            [--backend-setting 'reuse-stream-connections: true' ...]
#                            [--baseline-backend-setting 'reuse-stream-connections: false' ...] [--nice -5]
#
# - upstream: nginx + njs (scripts/bench-gateway/fake-openai.js) on 127.0.0.1:PORT, a canned ~690-byte
#   chat.completion, or for "stream": true a 20-chunk event stream, one write per event as llama-server writes
#   (mode "stream"), or the whole stream in one write (mode "stream1w", asked by an extra request field the
#   gateway passes on untouched);
# - hop: nginx, 1 worker, keep-alive upstream pool, proxy_buffering off, on PORT+1;
# - gateway: the jar with one llamacpp-kind backend pointing at the upstream (max-connections 64, policy
#   store blank), on PORT+2; with --baseline-jar a second gateway from that jar on PORT+3 ("baseline"),
#   so that two builds are compared in one run.
# Round by round, mode by mode (nonstream, stream, stream1w), each target in turn: a closed loop (wrk -tT -cC for D s:
# req/s, p50/p99, CPU µs per request of the proxy's own processes from /proc/PID/stat, RSS at the end),
# then unloaded latency (R sequential keep-alive requests with curl after one to open the connection:
# p50 of the time to the first byte and to the end; "added" is the target's p50 minus direct's of the
# same round), then a fixed-rate run (--rate R req/s for --rate-duration s, 0 to skip: wrk -t2 -c20, each thread sending on fixed
# slots 2000/R ms apart, the threads out of step, through whichever connection is free (wrk's Lua delay() with LuaJIT's
# clock; wrk2 is not in Debian; latency from the request's write, as wrk's), p50/p99 against direct's of the same round). RSS is VmRSS after each closed loop and VmHWM (the peak) at the end. --jfr MODE records a JFR profile (settings=profile) of one more closed loop of that mode
# on the gateway after the rounds, and prints its hottest methods (scripts/bench-gateway/JfrTop.java) and the share
# of samples per gateway feature (breaker, metering, resume capture, API keys...: scripts/bench-gateway/JfrFeatures.java).
#
# --modes picks which of the three modes (nonstream, stream, stream1w) run, in that order.
# --backend-setting adds a setting of the llamacpp backend to both gateways' configuration, and
# --baseline-backend-setting to the baseline's only (to compare two configurations of one build).
# --gateway-opts are JVM options of both gateways; --baseline-gateway-opts are added to the baseline's only (after
# them, so they win), to compare two JVM configurations of one build (the same jar as --jar and --baseline-jar).
# --api-key KEY configures the gateways with that API key (lazarus.security.api-keys) and sends it with every
# request (nginx ignores it), so that a profile shows what API keys cost.
# --nice N runs every process of the benchmark (upstream, hop, gateways, wrk, curl) at that niceness: on a
# machine shared with other work, a negative N keeps the measured processes from being starved (root only).
#
# Installs wrk, nginx-light and libnginx-mod-http-js from Debian when missing (needs root). Listens on
# 127.0.0.1 only; stops only the processes it started, by PID. Work files stay in /tmp/lazarus-bench-gateway.*
# (logs, raw results, the JFR file).
set -euo pipefail
[[ " $* " != *" --nice "* ]] || { n=$(awk -v a="$*" 'BEGIN {split(a, w, " "); for (i in w) if (w[i] == "--nice") print w[i + 1]}'); \
  [[ -n ${LAZARUS_BENCH_NICED:-} ]] || exec env LAZARUS_BENCH_NICED=1 nice -n "$n" "$0" "$@"; }
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

rounds=3 duration=10 warmup=30 jfr_duration=20 connections=32 threads=2 requests=50 port=18500 rate=200 rate_duration=10
targets="direct,hop,gateway" modes="nonstream,stream,stream1w" jar="" baseline_jar="" jfr="" gateway_opts="" baseline_opts="" keep=false backend_settings=() baseline_settings=() nice_level=0 api_key=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --rate-duration) rate_duration="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --modes) modes="$2"; shift 2 ;;
    --jar) jar="$2"; shift 2 ;;
    --baseline-jar) baseline_jar="$2"; shift 2 ;;
    --jfr) jfr="$2"; shift 2 ;;
    --jfr-duration) jfr_duration="$2"; shift 2 ;;
    --gateway-opts) gateway_opts="$2"; shift 2 ;;
    --baseline-gateway-opts) baseline_opts="$2"; shift 2 ;;
    --keep) keep=true; shift ;;
    --backend-setting) backend_settings+=("$2"); shift 2 ;;
    --baseline-backend-setting) baseline_settings+=("$2"); shift 2 ;;
    --nice) nice_level="$2"; shift 2 ;;
    --api-key) api_key="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -z "$jfr" || "$jfr" == nonstream || "$jfr" == stream || "$jfr" == stream1w ]] \
  || { echo "--jfr takes nonstream, stream or stream1w" >&2; exit 2; }
# The baseline is measured when a jar is given for it, whether or not --targets names it (and then once).
if [[ -n "$baseline_jar" ]]; then
  [[ ,$targets, == *,baseline,* ]] || targets="$targets,baseline"
elif [[ ,$targets, == *,baseline,* ]]; then
  echo "--targets names baseline: give its jar with --baseline-jar" >&2; exit 2
fi

# ---- tools -------------------------------------------------------------------------------------------
nginx_bin=/usr/sbin/nginx
njs_module=/usr/lib/nginx/modules/ngx_http_js_module.so
if ! command -v wrk >/dev/null || ! command -v curl >/dev/null || ! command -v pgrep >/dev/null \
    || [[ ! -x $nginx_bin || ! -f $njs_module ]]; then
  [[ $(id -u) == 0 ]] || { echo "wrk, curl, procps, nginx-light and libnginx-mod-http-js are needed (apt-get install as root)" >&2; exit 1; }
  echo "installing wrk, curl, procps, nginx-light, libnginx-mod-http-js from Debian" >&2
  # a fresh machine (or container) may never have fetched the package lists
  [[ -n "$(ls -A /var/lib/apt/lists 2>/dev/null | grep -v -e lock -e partial)" ]] || apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends \
      wrk curl procps nginx-light libnginx-mod-http-js >&2
fi
java_home=""
for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25* /usr/lib/jvm/jdk-25*; do
  if [[ -n "$candidate" && -x "$candidate/bin/java" ]] && "$candidate/bin/java" -version 2>&1 | grep -q '"25'; then
    java_home="$candidate"; break
  fi
done
[[ -n "$java_home" ]] || { echo "no JDK 25 found under /usr/lib/jvm (set JAVA_HOME)" >&2; exit 1; }
if [[ -z "$jar" ]]; then
  jar=$(ls gateway/target/gateway-*.jar 2>/dev/null | grep -v -e sources -e tests -e original | head -1 || true)
  if [[ -z "$jar" ]]; then
    echo "building the gateway jar (./mvnw -q -B -DskipTests package -pl gateway -am)" >&2
    JAVA_HOME="$java_home" ./mvnw -q -B -DskipTests package -pl gateway -am >&2
    jar=$(ls gateway/target/gateway-*.jar | grep -v -e sources -e tests -e original | head -1)
  fi
fi
jar=$(realpath "$jar")
[[ -z "$baseline_jar" ]] || baseline_jar=$(realpath "$baseline_jar")

work=$(mktemp -d /tmp/lazarus-bench-gateway.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/tmp"
up_port=$port hop_port=$((port + 1)) gw_port=$((port + 2)) base_port=$((port + 3))
clk_tck=$(getconf CLK_TCK)

# ---- processes we start, stopped by PID -----------------------------------------------------------------
started=()
stop_all() {
  local pid
  for pid in "${started[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${started[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  $keep || [[ -n "$jfr" ]] || rm -rf "$work/tmp"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

wait_for() { # url pid label
  local deadline=$((SECONDS + 180))
  until curl -sf -o /dev/null "$1"; do
    kill -0 "$2" 2>/dev/null || { echo "$3 exited before it was ready; see $work" >&2; exit 1; }
    (( SECONDS < deadline )) || { echo "$3 not ready after 180 s; see $work" >&2; exit 1; }
    sleep 0.2
  done
}

cat >"$work/upstream.conf" <<EOF
load_module $njs_module;
worker_processes 1;
pid $work/upstream.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/tmp/upstream-body;
  proxy_temp_path $work/tmp/upstream-proxy;
  client_body_buffer_size 64k;
  client_body_in_single_buffer on;
  keepalive_requests 1000000;
  postpone_output 0;
  js_import api from $root/scripts/bench-gateway/fake-openai.js;
  server {
    listen 127.0.0.1:$up_port backlog=4096;
    location = /v1/chat/completions { js_content api.completions; }
    location = /health { js_content api.health; }
    location = /v1/models { js_content api.models; }
    location = /props { js_content api.props; }
    location = /slots { js_content api.slots; }
  }
}
EOF
cat >"$work/hop.conf" <<EOF
worker_processes 1;
pid $work/hop.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/tmp/hop-body;
  proxy_temp_path $work/tmp/hop-proxy;
  keepalive_requests 1000000;
  upstream fake { server 127.0.0.1:$up_port; keepalive 64; }
  server {
    listen 127.0.0.1:$hop_port backlog=4096;
    location / {
      proxy_pass http://fake;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
EOF
gateway_yml() { # extra backend settings ("key: value")... → the gateway's configuration
  cat <<EOF
lazarus:
  backends:
    - id: fake
      kind: llamacpp
      settings:
        url: http://127.0.0.1:$up_port
        model-name: bench-model
        max-connections: 64
$(for setting in "$@"; do echo "        $setting"; done)
  models:
    - name: bench-model
      backends: [fake]
  policy:
    store-path: ""
$([[ -z "$api_key" ]] || printf '  security:\n    api-keys: ["%s"]\n' "$api_key")
  health:
    # a loaded machine must not make the gateway take the upstream for dead (then it answers 503s)
    timeout: 10s
EOF
}
gateway_yml "${backend_settings[@]}" >"$work/gateway.yml"
gateway_yml "${backend_settings[@]}" "${baseline_settings[@]}" >"$work/baseline.yml"

start_nginx() { # name conf → PID of the master
  "$nginx_bin" -p "$work" -c "$work/$2" -e "$work/$1.err" -g 'daemon off;' >"$work/$1.log" 2>&1 &
  echo $!
}
start_gateway() { # name jar port → PID of the java process (configuration: $work/name.yml)
  local opts=(--add-modules=jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Dlazarus.relaunch=false)
  [[ -z "$jfr" ]] || opts+=(-XX:FlightRecorderOptions=stackdepth=256)
  # shellcheck disable=SC2206
  [[ -z "$gateway_opts" ]] || opts+=($gateway_opts)
  # shellcheck disable=SC2206
  [[ $1 != baseline || -z "$baseline_opts" ]] || opts+=($baseline_opts)
  (cd "$work" && exec "$java_home/bin/java" "${opts[@]}" -jar "$2" --server.port="$3" \
      --spring.config.additional-location="file:$work/$1.yml" >"$work/$1.log" 2>&1) &
  echo $!
}

up_pid=$(start_nginx upstream upstream.conf); started+=("$up_pid")
wait_for "http://127.0.0.1:$up_port/health" "$up_pid" upstream
declare -A url pids
url[direct]="http://127.0.0.1:$up_port"
if [[ ,$targets, == *,hop,* ]]; then
  hop_pid=$(start_nginx hop hop.conf); started+=("$hop_pid")
  wait_for "http://127.0.0.1:$hop_port/health" "$hop_pid" hop
  url[hop]="http://127.0.0.1:$hop_port"
  pids[hop]="$hop_pid $(pgrep -P "$hop_pid" | tr '\n' ' ')"
fi
if [[ ,$targets, == *,gateway,* ]]; then
  gw_pid=$(start_gateway gateway "$jar" "$gw_port"); started+=("$gw_pid")
  url[gateway]="http://127.0.0.1:$gw_port"
  pids[gateway]=$gw_pid
fi
if [[ -n "$baseline_jar" ]]; then
  base_pid=$(start_gateway baseline "$baseline_jar" "$base_port"); started+=("$base_pid")
  url[baseline]="http://127.0.0.1:$base_port"
  pids[baseline]=$base_pid
fi
for t in gateway baseline; do
  [[ -n "${pids[$t]:-}" ]] && wait_for "${url[$t]}/actuator/health/readiness" "${pids[$t]}" "$t"
done
pids[direct]="$up_pid $(pgrep -P "$up_pid" | tr '\n' ' ')"
IFS=, read -r -a target_list <<<"$targets"

# ---- requests --------------------------------------------------------------------------------------------
auth=()
[[ -z "$api_key" ]] || auth=(-H "Authorization: Bearer $api_key")
body_nonstream='{"model":"bench-model","messages":[{"role":"user","content":"Say hello, word by word."}],"max_tokens":64}'
body_stream='{"model":"bench-model","messages":[{"role":"user","content":"Say hello, word by word."}],"max_tokens":64,"stream":true}'
body_stream1w='{"model":"bench-model","messages":[{"role":"user","content":"Say hello, word by word."}],"max_tokens":64,"stream":true,"bench_one_write":true}'
modes=${modes//,/ }
for mode in nonstream stream stream1w; do
  body_var="body_$mode"
  printf '%s' "${!body_var}" >"$work/$mode.json"
  cat >"$work/$mode.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
$([[ -z "$api_key" ]] || echo "wrk.headers[\"Authorization\"] = \"Bearer $api_key\"")
wrk.body = [[${!body_var}]]
EOF
  # the fixed-rate run: each wrk thread sends on its own fixed slots, 2000/R ms apart, the two threads 1000/R ms out
  # of step, whichever of its connections is free taking the next slot. A pause after every answer instead kept the
  # connections in step: bursts of 10-20 requests every 100 ms, their queue the p99 (docs/benchmarks.md#fixed-rate-pacing).
  cp "$work/$mode.lua" "$work/$mode-paced.lua"
  [[ $rate == 0 ]] || cat >>"$work/$mode-paced.lua" <<EOF
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *ts);
]]
local ts = ffi.new("bench_timespec")
local function now_ms() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6 end
local threads = 0
function setup(thread) threads = threads + 1; thread:set("slot_offset", (threads - 1) * 1000 / $rate) end
local next_slot
function delay()
  local now = now_ms()
  next_slot = next_slot or now + slot_offset
  local slot = math.max(next_slot, now)
  next_slot = slot + 2000 / $rate
  return math.floor(slot - now + 0.5)
end
EOF
done
for t in "${target_list[@]}"; do
  out=$(curl -sS -H 'Content-Type: application/json' "${auth[@]}" --data-binary @"$work/nonstream.json" "${url[$t]}/v1/chat/completions")
  [[ $out == *'"chat.completion"'* ]] || { echo "$t: unexpected non-stream answer: $out" >&2; exit 1; }
  for mode in stream stream1w; do
    out=$(curl -sS -H 'Content-Type: application/json' "${auth[@]}" --data-binary @"$work/$mode.json" "${url[$t]}/v1/chat/completions")
    [[ $out == *'[DONE]'* && $(grep -c '^data: {' <<<"$out") -ge 20 ]] || { echo "$t: unexpected $mode: $out" >&2; exit 1; }
  done
done

cpu_ticks() { # pids... → utime + stime, summed
  local pid sum=0
  for pid in "$@"; do
    sum=$((sum + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}')))
  done
  echo "$sum"
}
rss_mb() { # pids... → VmRSS summed, MB
  local pid kb=0
  for pid in "$@"; do kb=$((kb + $(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"))); done
  awk -v kb="$kb" 'BEGIN {printf "%.0f", kb / 1024}'
}
to_ms() { awk '{v = $1; if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; printf "%.3f", v}'; }

# closed <target> <mode> <seconds> → "req/s p50ms p99ms proxyµs/req upstreamµs/req rssMB errors"
closed() {
  local t="$1" mode="$2" secs="$3" out="$work/wrk-$1-$2.txt"
  # shellcheck disable=SC2086
  local own_before up_before own_after up_after
  own_before=$(cpu_ticks ${pids[$t]}); up_before=$(cpu_ticks ${pids[direct]})
  wrk -t"$threads" -c"$connections" -d"${secs}s" --latency -s "$work/$mode.lua" "${url[$t]}/v1/chat/completions" >"$out"
  own_after=$(cpu_ticks ${pids[$t]}); up_after=$(cpu_ticks ${pids[direct]})
  local n rps p50 p99 errors rss
  n=$(awk '/requests in/ {print $1}' "$out")
  rps=$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$out")
  p50=$(awk '$1 == "50%" {print $2}' "$out" | to_ms)
  p99=$(awk '$1 == "99%" {print $2}' "$out" | to_ms)
  errors=$(awk '/Non-2xx|Socket errors/ {s = s $0 ";"} END {print (s == "" ? "0" : s)}' "$out" | tr -s ' ' '_')
  # shellcheck disable=SC2086
  rss=$(rss_mb ${pids[$t]})
  local own_us up_us
  own_us=$(awk -v a="$own_before" -v b="$own_after" -v n="$n" -v hz="$clk_tck" 'BEGIN {printf "%.1f", (b - a) * 1e6 / hz / n}')
  up_us=$(awk -v a="$up_before" -v b="$up_after" -v n="$n" -v hz="$clk_tck" 'BEGIN {printf "%.1f", (b - a) * 1e6 / hz / n}')
  echo "$rps $p50 $p99 $own_us $up_us $rss $errors"
}

# paced <target> <mode> → "req/s p50ms p99ms errors": the fixed-rate run
paced() {
  local t="$1" mode="$2" out="$work/paced-$1-$2.txt"
  wrk -t2 -c20 -d"${rate_duration}s" --latency -s "$work/$mode-paced.lua" "${url[$t]}/v1/chat/completions" >"$out"
  local rps p50 p99 errors
  rps=$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$out")
  p50=$(awk '$1 == "50%" {print $2}' "$out" | to_ms)
  p99=$(awk '$1 == "99%" {print $2}' "$out" | to_ms)
  errors=$(awk '/Non-2xx|Socket errors/ {s = s $0 ";"} END {print (s == "" ? "0" : s)}' "$out" | tr -s ' ' '_')
  echo "$rps $p50 $p99 $errors"
}

# unloaded <target> <mode> → "ttfb_p50ms total_p50ms"
unloaded() {
  local t="$1" mode="$2" args=() i
  for ((i = 0; i <= requests; i++)); do args+=(-o /dev/null "${url[$t]}/v1/chat/completions"); done
  curl -s -H 'Content-Type: application/json' "${auth[@]}" --data-binary @"$work/$mode.json" \
      -w '%{time_starttransfer} %{time_total}\n' "${args[@]}" | tail -n +2 >"$work/unloaded-$t-$mode.txt"
  local ttfb total
  ttfb=$(awk '{print $1 * 1000}' "$work/unloaded-$t-$mode.txt" | sort -g | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)]}')
  total=$(awk '{print $2 * 1000}' "$work/unloaded-$t-$mode.txt" | sort -g | awk '{a[NR] = $1} END {printf "%.3f", a[int((NR + 1) / 2)]}')
  echo "$ttfb $total"
}

# ---- the run ------------------------------------------------------------------------------------------------
echo "work: $work; jar: $jar${baseline_jar:+; baseline: $baseline_jar}; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for t in "${target_list[@]}"; do
  [[ $t == direct || $t == hop ]] && continue
  echo "warm-up: $t, ${warmup} s per mode" >&2
  for mode in $modes; do closed "$t" "$mode" "$warmup" >/dev/null; done
done
results="$work/results.tsv"
: >"$results"
for ((r = 1; r <= rounds; r++)); do
  for mode in $modes; do
    for t in "${target_list[@]}"; do
      line=$(closed "$t" "$mode" "$duration")
      echo "round $r $mode $t: req/s p50 p99 own-µs/req upstream-µs/req RSS errors = $line (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      printf '%s\t%s\t%s\tclosed\t%s\n' "$r" "$mode" "$t" "$line" >>"$results"
    done
    for t in "${target_list[@]}"; do
      line=$(unloaded "$t" "$mode")
      echo "round $r $mode $t: unloaded p50 ttfb total = $line" >&2
      printf '%s\t%s\t%s\tunloaded\t%s\n' "$r" "$mode" "$t" "$line" >>"$results"
    done
    [[ $rate == 0 ]] && continue
    for t in "${target_list[@]}"; do
      line=$(paced "$t" "$mode")
      echo "round $r $mode $t: at $rate req/s: req/s p50 p99 errors = $line" >&2
      printf '%s\t%s\t%s\tpaced\t%s\n' "$r" "$mode" "$t" "$line" >>"$results"
    done
  done
done

# ---- summary: medians over the rounds; ratios to the hop; added latency against direct, per round -----------
summary() {
  awk -F'\t' -v targets="$targets" -v modes="$modes" '
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $4 == "closed" {
      split($5, v, " "); k = $2 SUBSEP $3
      rps[k] = rps[k] " " v[1]; p50[k] = p50[k] " " v[2]; p99[k] = p99[k] " " v[3]
      cpu[k] = cpu[k] " " v[4]; up[k] = up[k] " " v[5]; rss[k] = rss[k] " " v[6]
      if (v[7] != "0") err[k] = err[k] " round " $1 ": " v[7]
    }
    $4 == "unloaded" { split($5, v, " "); ttfb[$1, $2, $3] = v[1]; tot[$1, $2, $3] = v[2]; round[$1] = 1 }
    END {
      nt = split(targets, tl, ",")
      print "| mode | target | req/s | p50 ms | p99 ms | CPU µs/req | CPU vs hop | upstream CPU µs/req | req/s vs hop | RSS MB | unloaded p50 TTFB / total ms | added p50 TTFB / total ms |"
      print "|---|---|---|---|---|---|---|---|---|---|---|---|"
      nm = split(modes, ml, " ")
      for (m = 1; m <= nm; m++) {
        mode = ml[m]
        hk = mode SUBSEP "hop"; hcpu = (hk in cpu) ? median(cpu[hk]) : 0; hrps = (hk in rps) ? median(rps[hk]) : 0
        for (i = 1; i <= nt; i++) {
          t = tl[i]; k = mode SUBSEP t
          ut = ""; uo = ""; at = ""; ao = ""
          for (r in round) {
            ut = ut " " ttfb[r, mode, t]; uo = uo " " tot[r, mode, t]
            at = at " " (ttfb[r, mode, t] - ttfb[r, mode, "direct"]); ao = ao " " (tot[r, mode, t] - tot[r, mode, "direct"])
          }
          c = median(cpu[k])
          cr = (t == "direct" || hcpu == 0) ? "—" : sprintf("%.1fx", c / hcpu)
          rr = hrps == 0 ? "—" : sprintf("%.2f", median(rps[k]) / hrps)
          printf "| %s | %s | %.0f | %.2f | %.2f | %s | %s | %.1f | %s | %s | %.3f / %.3f | %s |\n", mode, t, median(rps[k]),
              median(p50[k]), median(p99[k]), t == "direct" ? "—" : sprintf("%.1f", c), cr, median(up[k]), rr,
              t == "direct" ? "—" : median(rss[k]), median(ut), median(uo),
              t == "direct" ? "—" : sprintf("%+.3f / %+.3f", median(at), median(ao))
          if (k in err) printf "\nerrors, %s %s:%s\n\n", mode, t, err[k]
        }
      }
    }' "$results"
}
# the fixed-rate runs: medians over the rounds, added p50/p99 against direct's of the same round
paced_summary() {
  awk -F'\t' -v targets="$targets" -v modes="$modes" '
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    $4 == "paced" { split($5, v, " "); rps[$2, $3] = rps[$2, $3] " " v[1]; p50[$1, $2, $3] = v[2]; p99[$1, $2, $3] = v[3]
                    round[$1] = 1; if (v[4] != "0") err[$2, $3] = err[$2, $3] " round " $1 ": " v[4] }
    END {
      nt = split(targets, tl, ",")
      print "| mode | target | req/s | p50 ms | p99 ms | added p50 / p99 ms |"
      print "|---|---|---|---|---|---|"
      nm = split(modes, ml, " ")
      for (m = 1; m <= nm; m++) {
        mode = ml[m]
        for (i = 1; i <= nt; i++) {
          t = tl[i]; a = ""; b = ""; c = ""; d = ""
          for (r in round) {
            a = a " " p50[r, mode, t]; b = b " " p99[r, mode, t]
            c = c " " (p50[r, mode, t] - p50[r, mode, "direct"]); d = d " " (p99[r, mode, t] - p99[r, mode, "direct"])
          }
          printf "| %s | %s | %.0f | %.3f | %.3f | %s |\n", mode, t, median(rps[mode, t]), median(a), median(b),
              t == "direct" ? "—" : sprintf("%+.3f / %+.3f", median(c), median(d))
          if ((mode, t) in err) printf "\nerrors, %s %s:%s\n\n", mode, t, err[mode, t]
        }
      }
    }' "$results"
}
# peak RSS (VmHWM) of each proxy's processes
peaks() {
  local t pid kb
  for t in "${target_list[@]}"; do
    [[ $t == direct ]] && continue
    kb=0
    for pid in ${pids[$t]}; do kb=$((kb + $(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"))); done
    printf '%s %s MB; ' "$t" "$(awk -v kb="$kb" 'BEGIN {printf "%.0f", kb / 1024}')"
  done
}

echo
echo "Machine: $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'), $(nproc) CPUs; load at the end $(cut -d' ' -f1-3 /proc/loadavg)."
echo "wrk -t$threads -c$connections -d${duration}s, $rounds rounds (medians); unloaded: $requests sequential keep-alive requests per round."
echo
summary
if [[ $rate != 0 ]]; then
  echo
  echo "Fixed rate: $rate req/s for ${rate_duration} s (wrk -t2 -c20, each thread on slots $(awk -v r="$rate" 'BEGIN {printf "%g", 2000 / r}') ms apart), medians of $rounds rounds:"
  echo
  paced_summary
fi
echo
echo "Peak RSS (VmHWM) at the end: $(peaks)"

if [[ -n "$jfr" ]]; then
  recording="$work/gateway-$jfr.jfr"
  "$java_home/bin/jcmd" "${pids[gateway]}" JFR.start name=bench settings=profile filename="$recording" >/dev/null
  closed gateway "$jfr" "$jfr_duration" >/dev/null
  "$java_home/bin/jcmd" "${pids[gateway]}" JFR.stop name=bench >/dev/null
  echo
  echo "JFR profile of the gateway, $jfr, ${jfr_duration} s under load: $recording"
  echo
  "$java_home/bin/java" "$root/scripts/bench-gateway/JfrTop.java" "$recording" 30
  echo
  echo "What each feature costs (share of samples with its code on the stack; scripts/bench-gateway/JfrFeatures.java):"
  echo
  "$java_home/bin/java" "$root/scripts/bench-gateway/JfrFeatures.java" "$recording"
fi
echo "raw results: $results" >&2
