#!/usr/bin/env python3
"""kt-native against llama-server as agents use them: several concurrent streams with long prompts, and the
same long prefix sent again. Both engines run the same GGUF behind one gateway (the same proxy hop), as models
`kt` (kind kt-native) and `ls` (kind llamacpp, a llama-server this script starts from the project's chroot).
Never part of the test suite. Prints Markdown tables (docs/benchmarks.md#at-depth-and-under-concurrency-agent-workloads).

  scripts/bench-serving.py --model GGUF [--jar gateway/target/gateway-*.jar] [--threads N] [--rounds 2]
                           [--concurrency 1,4,8] [--prompt 1024] [--gen 64] [--context 16384]
                           [--prefix 8000] [--llama-flags '-fa on'] [--port 18600]

- concurrency: for each C, C streams of /v1/completions start at once, each with its own random prompt of about
  --prompt tokens (distinct: no prefix reuse) and --gen tokens to generate (`ignore_eos`; kt-native stops at EOS
  only, which random-weight models rarely emit). Reported: aggregate generated tok/s (all streams' tokens over the
  wall time from the first request to the last token), per-stream inter-token latency p50/p99 (gaps between
  streamed tokens after the first), time to first token p50. kt-native runs with max-sequences = max C (continuous
  batching), llama-server with -np max C and a context of max C x --context (one slot each).
- prefix reuse: a request whose prompt is a --prefix-token shared text plus a question, then the same prefix with
  another question: the second one's time to first token against the first's, for each engine (llama-server
  keeps a slot's prompt cache; kt-native its prefix cache).
Targets alternate request by request batch within each round. Listens on 127.0.0.1 only; stops only the
processes it started. LAZARUS_CHROOT: the chroot of scripts/llama-server-chroot.sh (root needed).
"""
import argparse
import glob
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--jar", default=None)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--concurrency", default="1,4,8")
    p.add_argument("--prompt", type=int, default=1024)
    p.add_argument("--gen", type=int, default=64)
    p.add_argument("--context", type=int, default=16384)
    p.add_argument("--prefix", type=int, default=8000, help="shared prefix tokens (0: skip the prefix-reuse test)")
    p.add_argument("--llama-flags", default="", help="extra llama-server flags, e.g. '-fa on -ub 1024'")
    p.add_argument("--kt-settings", default="", help="extra kt-native settings, 'key: value; key: value'")
    p.add_argument("--port", type=int, default=18600)
    return p.parse_args()


def wait_http(port, path, timeout, proc):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"process on port {port} exited with {proc.returncode}")
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            if r.status == 200:
                return
        except OSError:
            pass
        time.sleep(1)
    raise SystemExit(f"nothing ready on port {port}{path} after {timeout} s")


def words(n, rng):
    # one common short word per token, roughly, for any BPE/SPM vocabulary
    pool = ["the", "a", "of", "to", "and", "in", "is", "it", "you", "that", "was", "for", "on", "are", "with",
            "as", "be", "at", "one", "have", "this", "from", "by", "not", "but", "what", "all", "were", "when"]
    return " ".join(rng.choice(pool) for _ in range(n))


def stream(port, model, prompt, gen, out):
    """One streamed completion; appends (ttft, [token arrival times], tokens, t_start) to out."""
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": gen, "stream": True, "temperature": 0,
                       "ignore_eos": True})
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=1800)
    start = time.perf_counter()
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        out.append(RuntimeError(f"{model}: HTTP {r.status}: {r.read()[:300]!r}"))
        return
    times = []
    for line in r:
        if not line.startswith(b"data: "):
            continue
        data = line[6:].strip()
        if data == b"[DONE]":
            break
        chunk = json.loads(data)
        text = "".join(ch.get("text", "") for ch in chunk.get("choices", []))
        if text:
            times.append(time.perf_counter())
    c.close()
    out.append((times[0] - start if times else float("nan"), times, start))


def concurrent(port, model, c, prompt_tokens, gen, rng):
    prompts = [words(prompt_tokens, rng) for _ in range(c)]
    out, threads = [], []
    for p in prompts:
        t = threading.Thread(target=stream, args=(port, model, p, gen, out))
        threads.append(t)
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = [x for x in out if isinstance(x, Exception)]
    if errors or len(out) < c:
        raise SystemExit(f"{model}: {len(out) - len(errors)} of {c} streams answered: {errors[:1]}")
    if not any(times for _, times, _ in out):
        raise SystemExit(f"{model}: no stream carried any text")
    end = max(times[-1] for _, times, _ in out if times)
    tokens = sum(len(times) for _, times, _ in out)
    gaps = [b - a for _, times, _ in out for a, b in zip(times, times[1:])]
    return {"agg": tokens / (end - t0), "itl": gaps, "ttft": [ttft for ttft, _, _ in out]}


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    a = args()
    jar = a.jar or (sorted(glob.glob(os.path.join(ROOT, "gateway/target/gateway-*.jar"))) or [None])[0]
    if not jar:
        raise SystemExit("no gateway jar: build it (./mvnw -q -DskipTests package) or pass --jar")
    model = os.path.realpath(a.model)
    levels = [int(x) for x in a.concurrency.split(",")]
    slots = max(levels)
    work = tempfile.mkdtemp(prefix="lazarus-bench-serving.")
    llama_port, gw_port = a.port, a.port + 1
    procs = []
    try:
        chroot = os.environ.get("LAZARUS_CHROOT", os.path.join(ROOT, ".chroot/sid"))
        ls_cmd = ["bash", os.path.join(ROOT, "scripts/llama-server-chroot.sh"), "run", chroot, "--",
                  "-m", model, "--host", "127.0.0.1", "--port", str(llama_port), "-t", str(a.threads),
                  "-np", str(slots), "-c", str(slots * a.context)] + a.llama_flags.split()
        procs.append(subprocess.Popen(ls_cmd, stdout=open(os.path.join(work, "llama-server.log"), "w"),
                                      stderr=subprocess.STDOUT))
        extra = "".join(f"\n          {kv.strip()}" for kv in a.kt_settings.split(";") if kv.strip())
        config = f"""lazarus:
  backends:
    - id: kt
      kind: kt-native
      settings:
          model: "{model}"
          threads: {a.threads}
          context-size: {a.context}
          max-sequences: {slots}
          model-name: kt{extra}
    - id: ls
      kind: llamacpp
      settings:
          url: http://127.0.0.1:{llama_port}
  models:
    - name: kt
      backends: [kt]
    - name: ls
      backends: [ls]
"""
        cfg = os.path.join(work, "application.yml")
        open(cfg, "w").write(config)
        homes = ([os.environ["JAVA_HOME"]] if os.environ.get("JAVA_HOME") else []) + sorted(glob.glob("/usr/lib/jvm/*25*"))
        java = next((h + "/bin/java" for h in homes if os.path.exists(h + "/bin/java")), "java")
        gw_cmd = [java, "-jar", jar, f"--server.port={gw_port}", f"--spring.config.additional-location={cfg}",
                  "--lazarus.policy.store-path=" + os.path.join(work, "policy"),
                  "--lazarus.resilience.attempt.first-token-timeout=30m", "--lazarus.resilience.attempt.answer-timeout=30m"]
        procs.append(subprocess.Popen(gw_cmd, stdout=open(os.path.join(work, "gateway.log"), "w"),
                                      stderr=subprocess.STDOUT))
        wait_http(llama_port, "/health", 600, procs[0])
        wait_http(gw_port, "/v1/models", 600, procs[1])
        rng = random.Random(7)
        # warm-up: the JIT compiles kt-native's batched kernels, llama-server touches its weights
        for m in ("kt", "ls"):
            concurrent(gw_port, m, min(2, slots), min(a.prompt, 256), 32, rng)
        results = {(m, c): [] for m in ("kt", "ls") for c in levels}
        prefix = {m: [] for m in ("kt", "ls")}
        for r in range(a.rounds):
            for c in levels:
                for m in (("kt", "ls") if r % 2 == 0 else ("ls", "kt")):
                    res = concurrent(gw_port, m, c, a.prompt, a.gen, rng)
                    results[(m, c)].append(res)
                    print(f"  [round {r + 1}] {m} x{c}: {res['agg']:.1f} tok/s, ITL p50 {1000 * pct(res['itl'], .5):.1f} ms",
                          flush=True)
            if a.prefix > 0:
                shared = words(a.prefix, rng)
                for m in ("kt", "ls"):
                    firsts = []
                    for q in range(2):
                        out = []
                        stream(gw_port, m, shared + " question " + words(16, rng), 8, out)
                        firsts.append(out[0][0])
                    prefix[m].append(firsts)
                    print(f"  [round {r + 1}] {m} prefix {a.prefix}: TTFT first {firsts[0]:.2f} s, again {firsts[1]:.2f} s",
                          flush=True)
        print()
        print(f"- machine: {cpu()}, threads {a.threads}, model {os.path.basename(model)}, "
              f"prompt ~{a.prompt} tokens, gen {a.gen}, context {a.context} per sequence, llama-server flags '{a.llama_flags}'")
        print()
        print("| streams | kt-native tok/s | llama-server tok/s | ratio | ITL p50 / p99 kt (ms) | ITL p50 / p99 llama (ms) | TTFT p50 kt / llama (s) |")
        print("|---|---|---|---|---|---|---|")
        for c in levels:
            kt, ls = results[("kt", c)], results[("ls", c)]
            akt = statistics.median(x["agg"] for x in kt)
            als = statistics.median(x["agg"] for x in ls)
            ikt = [g for x in kt for g in x["itl"]]
            ils = [g for x in ls for g in x["itl"]]
            tkt = [g for x in kt for g in x["ttft"]]
            tls = [g for x in ls for g in x["ttft"]]
            print(f"| {c} | {akt:.1f} | {als:.1f} | {akt / als:.2f} | {1000 * pct(ikt, .5):.1f} / {1000 * pct(ikt, .99):.1f} "
                  f"| {1000 * pct(ils, .5):.1f} / {1000 * pct(ils, .99):.1f} | {pct(tkt, .5):.2f} / {pct(tls, .5):.2f} |")
        if a.prefix > 0:
            print()
            print("| prefix reuse | TTFT first (s) | TTFT same prefix again (s) |")
            print("|---|---|---|")
            for m, name in (("kt", "kt-native"), ("ls", "llama-server")):
                print(f"| {name}, {a.prefix} tokens | {statistics.median(f[0] for f in prefix[m]):.2f} "
                      f"| {statistics.median(f[1] for f in prefix[m]):.2f} |")
        print(f"\n(logs in {work})")
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f", {os.cpu_count()} cores"
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
