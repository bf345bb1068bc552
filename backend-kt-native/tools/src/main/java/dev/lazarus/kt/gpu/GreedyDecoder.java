package dev.lazarus.kt.gpu;

import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.sampling.Sampler;
import java.util.ArrayList;
import java.util.List;

/** One sequence decoded greedily token by token: what the device check and benchmark run. */
final class GreedyDecoder {

    private GreedyDecoder() {}

    /** Logits of every position: the prompt, then {@code steps} tokens chosen greedily or taken from {@code forced}. */
    static List<float[]> run(Model model, int[] prompt, int steps, int[] forced) {
        return run(model, prompt, steps, forced, 0);
    }

    /**
     * As above; with {@code promptChunk} > 0 the prompt goes in forward passes of that many tokens (each token
     * wanting its logits), as a server's prompt chunks do, then the steps follow one by one.
     */
    static List<float[]> run(Model model, int[] prompt, int steps, int[] forced, int promptChunk) {
        KvCache cache = model.newCache(prompt.length + steps + 1);
        List<float[]> out = new ArrayList<>();
        int token = prompt[0];
        int first = 0;
        if (promptChunk > 0) {
            cache.ensureCapacity(prompt.length);
            for (int from = 0; from < prompt.length; from += promptChunk) {
                int n = Math.min(promptChunk, prompt.length - from);
                KvCache[] caches = new KvCache[n];
                java.util.Arrays.fill(caches, cache);
                boolean[] want = new boolean[n];
                java.util.Arrays.fill(want, true);
                int at = from;
                int[] positions = java.util.stream.IntStream.range(at, at + n).toArray();
                int[] chunk = java.util.Arrays.copyOfRange(prompt, at, at + n);
                out.addAll(List.of(model.forward(new ForwardBatch(chunk, positions, caches, want))));
            }
            token = forced != null && forced.length > 0 ? forced[0] : Sampler.argmax(out.getLast());
            first = prompt.length;
        }
        for (int p = first; p < prompt.length + steps; p++) {
            if (p < prompt.length) {
                token = prompt[p];
            }
            cache.ensureCapacity(p + 1); // Model.forward leaves capacity to its caller
            float[] logits = model.forward(ForwardBatch.single(token, p, cache))[0];
            out.add(logits);
            if (p >= prompt.length - 1) {
                int next = p - prompt.length + 1;
                token = forced != null && next < forced.length ? forced[next] : Sampler.argmax(logits);
            }
        }
        return out;
    }

    /** The greedy continuation the logits imply (what {@link #run} feeds back). */
    static int[] tokens(List<float[]> logits, int promptLength) {
        int[] t = new int[logits.size() - promptLength + 1];
        for (int i = promptLength - 1; i < logits.size(); i++) {
            t[i - promptLength + 1] = Sampler.argmax(logits.get(i));
        }
        return t;
    }
}
