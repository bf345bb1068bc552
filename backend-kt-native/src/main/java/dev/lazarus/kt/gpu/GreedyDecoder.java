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
        return run(model, prompt, steps, forced, false);
    }

    /**
     * As above; with {@code batchedPrompt} the prompt is one forward pass of all its tokens (each wanting its
     * logits), as a server's prompt chunk is, then the steps follow one by one.
     */
    static List<float[]> run(Model model, int[] prompt, int steps, int[] forced, boolean batchedPrompt) {
        KvCache cache = model.newCache(prompt.length + steps + 1);
        List<float[]> out = new ArrayList<>();
        int token = prompt[0];
        int first = 0;
        if (batchedPrompt) {
            cache.ensureCapacity(prompt.length);
            int n = prompt.length;
            KvCache[] caches = new KvCache[n];
            java.util.Arrays.fill(caches, cache);
            boolean[] want = new boolean[n];
            java.util.Arrays.fill(want, true);
            int[] positions = java.util.stream.IntStream.range(0, n).toArray();
            out.addAll(List.of(model.forward(new ForwardBatch(prompt.clone(), positions, caches, want))));
            token = forced != null && forced.length > 0 ? forced[0] : Sampler.argmax(out.getLast());
            first = n;
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
