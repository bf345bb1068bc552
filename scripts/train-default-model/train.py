#!/usr/bin/env python3
"""Trains lazarus-tiny-moe on the token stream DefaultModel.prepare wrote.

Usage: train.py <payload dir> <out dir> [--seconds S] [--batch B] [--seq T] [--device cuda|cpu]

Reads model.json (hyper-parameters, the GGUF tensor layout, sample prompts), train.bin and val.bin
(little-endian uint16 token ids). Writes to <out dir>:
  weights.bin   every tensor of the layout in order, in its GGUF type (F16 or F32), little-endian:
                what DefaultModel.write turns into the GGUF file
  samples.json  greedy continuations of the sample prompts computed here, in f32 from the weights as
                written (F16 rounded), with the top-5 log-probabilities of each step: the GGUF served by
                kt-native or llama-server must give the same tokens
  log.txt       the losses (train and validation, nats per token) and what was kept

The model is exactly the forward pass llama.cpp builds for qwen3moe (llm_build_qwen3moe), so the trained
weights mean the same thing there: RMSNorm (eps from model.json) before attention and before the experts;
Q, K, V projections without bias; QK-norm (RMSNorm over each head, its own weights); NeoX RoPE (rotating
the two halves of a head, base rope_theta); grouped-query attention (query head h reads KV head
h // (heads / kv_heads)), scale 1/sqrt(head_dim), causal; softmax router over all experts, top-k, the
chosen weights renormalised to sum 1; SwiGLU experts (down(silu(gate x) * up x)); residual adds; final
RMSNorm and an untied output head. Parameters are held in torch's (out, in) layout, which is ggml's
[in, out] row-major: the bytes are written as they are.

Training only (not in the served model): dropout on the residual branches, a Switch-style load-balancing
loss on the router, AdamW, warm-up then cosine decay over the time budget, the best validation loss kept.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn.functional as F


def load_tokens(path):
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    return (torch.frombuffer(raw, dtype=torch.int16).to(torch.int64) & 0xFFFF)


class Qwen3Moe(torch.nn.Module):
    def __init__(self, cfg, dropout):
        super().__init__()
        self.cfg = cfg
        self.dropout = dropout
        self.layout = cfg["layout"]
        self.params = torch.nn.ParameterDict()
        for t in self.layout:
            shape = list(reversed(t["shape"]))  # ggml [in, out, experts] -> torch (experts, out, in)
            self.params[self.key(t["name"])] = torch.nn.Parameter(self.init(t["name"], shape))

    @staticmethod
    def key(name):
        return name.replace(".", "__")

    def init(self, name, shape):
        if name.endswith("norm.weight"):
            return torch.ones(shape)
        if name == "token_embd.weight":
            return torch.randn(shape) * 0.02
        std = 0.02
        if "attn_output" in name or "ffn_down" in name:
            std = 0.02 / math.sqrt(2 * self.cfg["layers"])
        return torch.randn(shape) * std

    def p(self, name):
        return self.params[self.key(name)]

    def rms_norm(self, x, weight):
        x32 = x.float()
        y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.cfg["rms_eps"])
        return (y * weight.float()).to(x.dtype)

    def rope(self, x, cos, sin):
        # NeoX: pairs (i, i + d/2)
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(self, tokens):
        c = self.cfg
        B, T = tokens.shape
        H, KV, hd, E, k = c["heads"], c["kv_heads"], c["head_dim"], c["experts"], c["experts_used"]
        pos = torch.arange(T, device=tokens.device, dtype=torch.float32)
        inv = c["rope_theta"] ** (-torch.arange(0, hd, 2, device=tokens.device, dtype=torch.float32) / hd)
        ang = pos[:, None] * inv[None, :]  # (T, hd/2)
        cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
        x = F.embedding(tokens, self.p("token_embd.weight"))
        x = F.dropout(x, self.dropout, self.training)
        aux = x.new_zeros((), dtype=torch.float32)
        for i in range(c["layers"]):
            b = f"blk.{i}."
            h = self.rms_norm(x, self.p(b + "attn_norm.weight"))
            q = F.linear(h, self.p(b + "attn_q.weight")).view(B, T, H, hd)
            kk = F.linear(h, self.p(b + "attn_k.weight")).view(B, T, KV, hd)
            v = F.linear(h, self.p(b + "attn_v.weight")).view(B, T, KV, hd)
            q = self.rope(self.rms_norm(q, self.p(b + "attn_q_norm.weight")).float(), cos, sin).to(v.dtype)
            kk = self.rope(self.rms_norm(kk, self.p(b + "attn_k_norm.weight")).float(), cos, sin).to(v.dtype)
            q, kk, v = q.transpose(1, 2), kk.transpose(1, 2), v.transpose(1, 2)
            kk = kk.repeat_interleave(H // KV, dim=1)
            v = v.repeat_interleave(H // KV, dim=1)
            if hasattr(F, "scaled_dot_product_attention"):
                a = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
            else:
                s = (q @ kk.transpose(-1, -2)) / math.sqrt(hd)
                mask = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(1)
                a = s.float().masked_fill(mask, float("-inf")).softmax(-1).to(v.dtype) @ v
            a = a.transpose(1, 2).reshape(B, T, H * hd)
            x = x + F.dropout(F.linear(a, self.p(b + "attn_output.weight")), self.dropout, self.training)

            h = self.rms_norm(x, self.p(b + "ffn_norm.weight"))
            logits = F.linear(h.float(), self.p(b + "ffn_gate_inp.weight").float())  # (B, T, E)
            probs = logits.softmax(-1)
            top_w, top_i = probs.topk(k, dim=-1)
            top_w = top_w / top_w.sum(-1, keepdim=True)
            weights = torch.zeros_like(probs).scatter(-1, top_i, top_w)  # (B, T, E), zero for unchosen experts
            if self.training:
                chosen = torch.zeros_like(probs).scatter(-1, top_i, 1.0).mean((0, 1)) / k
                aux = aux + E * (chosen * probs.mean((0, 1))).sum()
            gate = torch.einsum("btd,efd->btef", h, self.p(b + "ffn_gate_exps.weight"))
            up = torch.einsum("btd,efd->btef", h, self.p(b + "ffn_up_exps.weight"))
            act = F.silu(gate) * up * weights.to(h.dtype)[..., None]
            moe = torch.einsum("btef,edf->btd", act, self.p(b + "ffn_down_exps.weight"))
            x = x + F.dropout(moe, self.dropout, self.training)
        x = self.rms_norm(x, self.p("output_norm.weight"))
        head = self.p("token_embd.weight") if c["tied_embeddings"] else self.p("output.weight")
        return F.linear(x, head), aux / c["layers"]


def batches(data, batch, seq, generator):
    idx = torch.randint(0, data.numel() - seq - 1, (batch,), generator=generator)
    offs = idx[:, None] + torch.arange(seq + 1)[None, :]
    w = data[offs.to(data.device)]
    return w[:, :-1], w[:, 1:]


@torch.no_grad()
def evaluate(model, val, seq, device, amp, limit=None):
    model.eval()
    n = (val.numel() - 1) // seq
    n = min(n, limit) if limit else n
    xs = val[: n * seq].view(n, seq)
    ys = val[1: n * seq + 1].view(n, seq)
    total, count = 0.0, 0
    for s in range(0, n, 32):
        x, y = xs[s:s + 32].to(device), ys[s:s + 32].to(device)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=amp):
            logits, _ = model(x)
        total += F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum").item()
        count += y.numel()
    model.train()
    return total / count


def as_served(state, layout):
    """The parameters as the GGUF holds them: F16 tensors rounded to f16, computed in f32."""
    out = {}
    for t in layout:
        key = Qwen3Moe.key(t["name"])
        v = state[key].detach().float()
        out[key] = v.half().float() if t["type"] == "F16" else v
    return out


@torch.no_grad()
def greedy(model, prompt, steps, stops, device):
    model.eval()
    ids = list(prompt)
    out, tops = [], []
    for _ in range(steps):
        logits, _ = model(torch.tensor([ids], device=device))
        lp = logits[0, -1].float().log_softmax(-1)
        v, i = lp.topk(5)
        tops.append([[int(a), round(float(b), 4)] for a, b in zip(i.tolist(), v.tolist())])
        nxt = int(i[0])
        out.append(nxt)
        ids.append(nxt)
        if nxt in stops:
            break
    return out, tops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("payload")
    ap.add_argument("out")
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--epochs", type=float, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--aux", type=float, default=0.01)
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--patience", type=int, default=6)
    ap.add_argument("--val-windows", type=int, default=0, help="evaluate on the first N windows only (0: all)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, "log.txt"), "w")

    def say(msg):
        print(msg, flush=True)
        log.write(msg + "\n")
        log.flush()

    with open(os.path.join(args.payload, "model.json")) as f:
        cfg = json.load(f)
    torch.manual_seed(0)
    device = torch.device(args.device)
    amp = device.type == "cuda"
    train = load_tokens(os.path.join(args.payload, "train.bin"))
    val = load_tokens(os.path.join(args.payload, "val.bin"))
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    train = train.to(device)
    total_steps = max(1, int(args.epochs * train.numel() / (args.batch * args.seq)))
    model = Qwen3Moe(cfg, args.dropout).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    say(f"torch {torch.__version__} on {device} ({torch.cuda.get_device_name() if amp else 'cpu'}); "
        f"{n_params:,} weights; {train.numel():,} train tokens, {val.numel():,} validation tokens; "
        f"batch {args.batch} x {args.seq}, lr {args.lr}, dropout {args.dropout}, "
        f"{args.epochs} epochs ({total_steps} steps) or {args.seconds:.0f} s")

    decay = [p for n, p in model.params.items() if p.dim() >= 2 and "norm" not in n]
    other = [p for n, p in model.params.items() if not (p.dim() >= 2 and "norm" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(0)
    warmup = 100
    best, best_state, best_step, since_best = float("inf"), None, 0, 0
    start = time.time()
    step, tokens_seen, train_loss = 0, 0, None
    while True:
        elapsed = time.time() - start
        if elapsed > args.seconds or step >= total_steps:
            break
        frac = max(elapsed / args.seconds, step / total_steps)  # the schedule ends with whichever limit comes first
        lr = args.lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batches(train, args.batch, args.seq, gen)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=amp):
            logits, aux = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        (loss + args.aux * aux).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens_seen += x.numel()
        train_loss = loss.item() if train_loss is None else 0.98 * train_loss + 0.02 * loss.item()
        if step % args.eval_every == 0:
            v = evaluate(model, val, args.seq, device, amp, args.val_windows)
            mark = ""
            if v < best:
                best, best_step, since_best, mark = v, step, 0, " *"
                best_state = {k: t.detach().clone() for k, t in model.params.items()}
            else:
                since_best += 1
            say(f"step {step:6d}  {time.time() - start:6.1f} s  lr {lr:.2e}  train {train_loss:.4f}  "
                f"val {v:.4f}  aux {aux.item():.3f}  epochs {tokens_seen / train.numel():.1f}{mark}")
            if since_best >= args.patience:
                say(f"no better validation loss for {args.patience} evaluations: stopping")
                break
    if best_state is None:
        best = evaluate(model, val, args.seq, device, amp, args.val_windows)
        best_step = step
        best_state = {k: t.detach().clone() for k, t in model.params.items()}
    summary = {"steps": step, "best_step": best_step, "val_loss": round(best, 4), "train_loss": round(train_loss, 4),
               "tokens_seen": tokens_seen, "epochs": round(tokens_seen / train.numel(), 2),
               "seconds": round(time.time() - start, 1), "weights": n_params, "device": str(device),
               "torch": torch.__version__}
    say("kept step %d: validation loss %.4f nats/token (perplexity %.1f)" % (best_step, best, math.exp(best)))

    served = as_served(best_state, cfg["layout"])
    with open(os.path.join(args.out, "weights.bin"), "wb") as f:
        for t in cfg["layout"]:
            v = served[Qwen3Moe.key(t["name"])].cpu().contiguous()
            v = v.half() if t["type"] == "F16" else v.float()
            assert list(v.shape) == list(reversed(t["shape"])), t
            f.write(v.numpy().tobytes())  # little-endian on every machine this runs on
    eval_model = Qwen3Moe(cfg, 0.0).to(device)
    eval_model.load_state_dict({"params." + k: v for k, v in served.items()})
    eval_model.float()
    served_val = evaluate(eval_model, val, args.seq, device, False, args.val_windows)
    summary["val_loss_as_served"] = round(served_val, 4)
    say(f"validation loss of the weights as written (F16, f32 compute): {served_val:.4f}")
    stops = {cfg["end_of_text"], cfg["im_end"]}
    samples = {}
    for name, prompt in cfg["prompts"].items():
        out, tops = greedy(eval_model, prompt, 48, stops, device)
        samples[name] = {"prompt": prompt, "tokens": out, "top5": tops}
    with open(os.path.join(args.out, "samples.json"), "w") as f:
        json.dump({"summary": summary, "samples": samples}, f)
    say(json.dumps(summary))


if __name__ == "__main__":
    main()
