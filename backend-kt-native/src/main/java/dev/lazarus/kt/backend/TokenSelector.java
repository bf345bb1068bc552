package dev.lazarus.kt.backend;

import dev.lazarus.backend.api.openai.Logprobs;
import dev.lazarus.kt.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks each next token and, when asked, reports its log-probability and the top alternatives.
 * This version is greedy (argmax) only: it stands in until kt-tok's {@code sampling.Sampler}
 * (temperature, top-k/p, min-p, penalties, seed) is merged and takes its place here.
 */
final class TokenSelector {

    private final Tokenizer tokenizer;
    private final int topLogprobs;
    private final boolean logprobs;

    TokenSelector(Tokenizer tokenizer, boolean logprobs, int topLogprobs) {
        this.tokenizer = tokenizer;
        this.logprobs = logprobs;
        this.topLogprobs = topLogprobs;
    }

    /** The chosen token and, if requested, its log-probability entry. */
    record Choice(int token, Logprobs.TokenLogprob logprob) {}

    Choice select(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return new Choice(best, logprobs ? entry(logits, best) : null);
    }

    private Logprobs.TokenLogprob entry(float[] logits, int token) {
        float max = logits[0];
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double sum = 0;
        for (float l : logits) {
            sum += Math.exp(l - max);
        }
        double logZ = max + Math.log(sum);
        List<Logprobs.TopLogprob> top = new ArrayList<>();
        int[] order = topIndices(logits, topLogprobs);
        for (int id : order) {
            top.add(new Logprobs.TopLogprob(text(id), logits[id] - logZ, bytes(id)));
        }
        return new Logprobs.TokenLogprob(text(token), logits[token] - logZ, bytes(token), top);
    }

    private static int[] topIndices(float[] v, int k) {
        int[] best = new int[Math.min(k, v.length)];
        java.util.Arrays.fill(best, -1);
        for (int i = 0; i < v.length; i++) {
            int at = best.length;
            while (at > 0 && (best[at - 1] < 0 || v[i] > v[best[at - 1]])) {
                at--;
            }
            if (at < best.length) {
                System.arraycopy(best, at, best, at + 1, best.length - at - 1);
                best[at] = i;
            }
        }
        return best;
    }

    private String text(int id) {
        return new String(tokenizer.tokenBytes(id, false), StandardCharsets.UTF_8);
    }

    private List<Integer> bytes(int id) {
        byte[] b = tokenizer.tokenBytes(id, false);
        List<Integer> out = new ArrayList<>(b.length);
        for (byte x : b) {
            out.add(x & 0xFF);
        }
        return out;
    }
}
