#!/usr/bin/env python3
"""The gateway's memory under abuse (issue 17; docs/benchmarks.md#memory-under-abuse). Never part of the tests.

    scripts/bench-gateway/abuse-memory.py --pid PID [--url http://127.0.0.1:18471] [--clients 16] [--seconds 60]

CLIENTS threads for SECONDS, each on a new connection per request, cycling six bodies to /v1/chat/completions:
a 20 MB message, '[' nested 100,000 deep, an object of 100,000 keys, a chat completion of 8 tokens, a 900 KB
prompt, 2,000 random bytes. VmRSS of PID is sampled every 0.2 s; "after" is read 3 s after the last request.
Prints RSS ready / peak / after (MB) and the count of answers per status (connection errors as "error").
"""
import argparse, collections, http.client, json, os, random, threading, time, urllib.parse


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def bodies(model):
    rnd = random.Random(17)
    chat = lambda content, **extra: json.dumps({"model": model, "messages": [{"role": "user", "content": content}], **extra}).encode()
    return [
        chat("x" * (20 * 1024 * 1024)),
        b"[" * 100_000,
        json.dumps({f"k{i}": i for i in range(100_000)}).encode(),
        chat("Hello", max_tokens=8),
        chat("word " * (900 * 1024 // 5)),
        bytes(rnd.getrandbits(8) for _ in range(2000)),
    ]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--url", default="http://127.0.0.1:18471")
    p.add_argument("--model", default="lazarus-tiny-moe")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=60)
    a = p.parse_args()
    u = urllib.parse.urlparse(a.url)
    payloads = bodies(a.model)
    counts = collections.Counter()
    lock = threading.Lock()
    end = time.monotonic() + a.seconds

    def client(n):
        i = n
        while time.monotonic() < end:
            body = payloads[i % len(payloads)]
            i += 1
            try:
                c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                c.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                status = r.status
                c.close()
            except Exception:  # the gateway may close a connection while a 20 MB body is still being sent
                status = "error"
            with lock:
                counts[status] += 1

    ready = rss_mb(a.pid)
    peak = ready
    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(a.clients)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, rss_mb(a.pid))
        time.sleep(0.2)
    time.sleep(3)
    after = rss_mb(a.pid)
    print(f"RSS MB ready {ready:.0f} peak {max(peak, after):.0f} after {after:.0f}; answers: "
          + ", ".join(f"{n} x {s}" for s, n in sorted(counts.items(), key=lambda kv: str(kv[0]))))


if __name__ == "__main__":
    main()
