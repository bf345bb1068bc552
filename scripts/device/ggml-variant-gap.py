#!/usr/bin/env python3
"""How far apart two ggml CPU variants of the same llama-server compute, on the same GGUF and prompts.

Used where kt-native cannot be run (a machine without Java) to measure a contract of docs/fidelity.md: kt-native is
bit-identical to llama-server held to its zen4 variant, so the gap between llama-server's zen4 and sapphirerapids
(AMX) variants IS kt-native's gap to llama-server on a Sapphire Rapids host. Measured the way the fidelity metric
measures: the ORACLE variant's greedy path with its top-5 logprobs, the CANDIDATE variant teacher-forced on it
(one /completion of 1 token per position, prompt cache on), then top-1 agreement, |delta logprob| over the oracle's
top-5, the first teacher-forced and the first free-running divergence; and the relative L2 distance of every prompt
token's final hidden state (/embeddings with --pooling none).

Each variant runs in a root directory of its own holding llama-server with exactly one libggml-cpu-*.so, so ggml
cannot pick another one:  ggml-variant-gap.py --root-oracle R1 --root-candidate R2 --models DIR --prompts FILE
(prompts: {"model.gguf": {"name": [token ids]}}). Output: one JSON report on stdout, a table on stderr.
"""
import argparse, json, math, os, signal, socket, subprocess, sys, time, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, root, model, extra, log):
        self.port = free_port()
        self.log = log
        cmd = ["chroot", root, "/usr/bin/llama-server", "-m", "/models/" + model, "--host", "127.0.0.1",
               "--port", str(self.port), "-t", "1", "-c", "1024", "-fa", "off", "--no-warmup", "-lv", "4"] + extra
        self.proc = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("llama-server exited %s: %s" % (self.proc.returncode, open(log).read()[-3000:]))
            try:
                if urllib.request.urlopen("http://127.0.0.1:%d/health" % self.port, timeout=2).status == 200:
                    return
            except Exception:
                time.sleep(0.1)
        raise RuntimeError("llama-server not healthy: " + open(log).read()[-3000:])

    def post(self, path, body):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        return json.loads(urllib.request.urlopen(req, timeout=120).read())

    def log_text(self):
        return open(self.log).read()

    def close(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def completion(server, ids, n, n_probs, cache):
    r = server.post("/completion", {"prompt": ids, "n_predict": n, "temperature": 0, "top_k": 1, "samplers": ["top_k"],
                                    "ignore_eos": True, "cache_prompt": cache, "return_tokens": True,
                                    "n_probs": n_probs, "post_sampling_probs": False})
    tokens = r["tokens"]
    probs = {}
    it = iter(r.get("completion_probabilities", []))
    pending = next(it, None)
    for step, t in enumerate(tokens):  # entries only for tokens that complete a UTF-8 character, in order
        if pending is not None and pending["id"] == t:
            probs[step] = {c["id"]: c["logprob"] for c in pending["top_logprobs"]}
            pending = next(it, None)
    return tokens, probs


def greedy_gap(oracle, candidate, ids, n):
    o_tokens, o_probs = completion(oracle, ids, n, 5, False)
    c_tokens, _ = completion(candidate, ids, n, 5, False)
    free = next((i for i, (a, b) in enumerate(zip(o_tokens, c_tokens)) if a != b), -1)
    agree, deltas, forced = 0, [], -1
    for k in range(n):
        top, probs = completion(candidate, ids + o_tokens[:k], 1, 40, True)
        if top[0] == o_tokens[k]:
            agree += 1
        elif forced < 0:
            forced = k
        if k in o_probs and 0 in probs:
            for tid, lp in o_probs[k].items():
                if tid in probs[0]:
                    deltas.append(abs(probs[0][tid] - lp))
    return {"top1": agree / n, "forced_divergence": forced, "free_divergence": free,
            "max_delta": max(deltas, default=0.0), "mean_delta": sum(deltas) / max(1, len(deltas)), "compared": len(deltas)}


def hidden_gap(oracle, candidate, ids):
    a = oracle.post("/embeddings", {"content": ids})[0]["embedding"]
    b = candidate.post("/embeddings", {"content": ids})[0]["embedding"]
    distances, exact = [], True
    for ra, rb in zip(a, b):
        num = sum((x - y) ** 2 for x, y in zip(ra, rb))
        den = sum(x * x for x in ra)
        exact &= ra == rb
        distances.append(math.sqrt(num / den) if den else 0.0)
    return {"rel_l2": distances, "max_rel_l2": max(distances), "identical": exact}


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))] if s else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root-oracle", required=True)
    ap.add_argument("--root-candidate", required=True)
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--logs", default="/tmp")
    ap.add_argument("--oracle-extra", default="")
    a = ap.parse_args()
    prompts = json.load(open(a.prompts))
    report = {}
    for model, named in prompts.items():
        extra = a.oracle_extra.split() if a.oracle_extra else []
        row = {"prompts": {}}
        try:
            o = Server(a.root_oracle, model, extra, "%s/%s-oracle.log" % (a.logs, model))
        except RuntimeError as e:
            report[model] = {"oracle_failed": str(e)[-800:]}
            print("%-28s oracle failed to start: %s" % (model, str(e)[-300:]), file=sys.stderr)
            continue
        c = Server(a.root_candidate, model, [], "%s/%s-candidate.log" % (a.logs, model))
        try:
            log = o.log_text()
            row["oracle_amx_buffer"] = "AMX model buffer size" in log
            row["oracle_backend"] = [l.split("from ")[-1] for l in log.splitlines() if "loaded CPU backend" in l]
            row["candidate_backend"] = [l.split("from ")[-1] for l in c.log_text().splitlines() if "loaded CPU backend" in l]
            for name, ids in named.items():
                row["prompts"][name] = greedy_gap(o, c, ids, a.tokens)
        finally:
            o.close()
            c.close()
        o = Server(a.root_oracle, model, extra + ["--embeddings", "--pooling", "none"], "%s/%s-oracle-emb.log" % (a.logs, model))
        c = Server(a.root_candidate, model, ["--embeddings", "--pooling", "none"], "%s/%s-candidate-emb.log" % (a.logs, model))
        try:
            for name, ids in named.items():
                row["prompts"][name].update(hidden_gap(o, c, ids))
        finally:
            o.close()
            c.close()
        p = row["prompts"].values()
        row["overall"] = {"top1_min": min(x["top1"] for x in p), "top1_mean": sum(x["top1"] for x in p) / len(p),
                          "max_delta": max(x["max_delta"] for x in p), "mean_delta": sum(x["mean_delta"] for x in p) / len(p),
                          "max_rel_l2": max(x["max_rel_l2"] for x in p),
                          "p50_rel_l2": percentile([d for x in p for d in x["rel_l2"]], 0.5),
                          "p90_rel_l2": percentile([d for x in p for d in x["rel_l2"]], 0.9),
                          "free_divergence_min": min((x["free_divergence"] for x in p if x["free_divergence"] >= 0), default=-1)}
        report[model] = row
        ov = row["overall"]
        print("%-28s amx=%s top1 min %.3f mean %.3f  |dlp| max %.2e mean %.2e  hidden rel L2 p50 %.2e p90 %.2e max %.2e"
              "  first free divergence %d" % (model, row["oracle_amx_buffer"], ov["top1_min"], ov["top1_mean"], ov["max_delta"],
                                             ov["mean_delta"], ov["p50_rel_l2"], ov["p90_rel_l2"], ov["max_rel_l2"],
                                             ov["free_divergence_min"]), file=sys.stderr)
    json.dump(report, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
