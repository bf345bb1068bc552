package dev.lazarus.kt.fidelity;

import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.model.Model;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * A loaded kt-native {@link Model} as the engine under test, driven directly (no scheduler, sampler or prefix
 * cache) so that only the model's numerics are measured. Not thread-safe, like {@link Model#forward}.
 */
public final class ModelProbe implements EngineProbe {

    private final Model model;
    private final KvCacheTypes cacheTypes;

    public ModelProbe(Model model) {
        this(model, KvCacheTypes.F16);
    }

    /** The engine with a KV cache of {@code cacheTypes} (the model must hold them: {@link Model#checkCacheTypes}). */
    public ModelProbe(Model model, KvCacheTypes cacheTypes) {
        this.model = model;
        this.cacheTypes = cacheTypes;
    }

    @Override
    public int vocabSize() {
        return model.vocabSize();
    }

    @Override
    public float[][] teacherForcedLogits(int[] prompt, int[] path, Forcing forcing) {
        requirePrompt(prompt);
        if (path.length == 0) {
            return new float[0][];
        }
        return forcing == Forcing.STEPWISE ? stepwise(prompt, path) : onePass(prompt, path);
    }

    /** The prompt in one batch, then one token per step: the batches the oracle ran. */
    private float[][] stepwise(int[] prompt, int[] path) {
        KvCache cache = cacheFor(prompt.length + path.length);
        float[][] logits = new float[path.length][];
        logits[0] = prefill(prompt, cache);
        for (int step = 1; step < path.length; step++) {
            logits[step] = model.forward(ForwardBatch.single(path[step - 1], prompt.length + step - 1, cache))[0];
        }
        return logits;
    }

    private float[][] onePass(int[] prompt, int[] path) {
        // The last path token is never an input: nothing after it is scored.
        int[] tokens = Arrays.copyOf(prompt, prompt.length + path.length - 1);
        System.arraycopy(path, 0, tokens, prompt.length, path.length - 1);
        boolean[] want = new boolean[tokens.length];
        Arrays.fill(want, prompt.length - 1, tokens.length, true);
        float[][] logits = model.forward(batch(tokens, want, cacheFor(tokens.length)));
        return Arrays.copyOfRange(logits, prompt.length - 1, tokens.length);
    }

    @Override
    public int freeRunningDivergence(int[] prompt, int[] path, Set<Integer> banned) {
        requirePrompt(prompt);
        if (path.length == 0) {
            return -1;
        }
        KvCache cache = cacheFor(prompt.length + path.length);
        float[] logits = prefill(prompt, cache);
        for (int step = 0; step < path.length; step++) {
            if (LogitMath.argmax(logits, banned) != path[step]) {
                return step;
            }
            if (step + 1 < path.length) {
                logits = model.forward(ForwardBatch.single(path[step], prompt.length + step, cache))[0];
            }
        }
        return -1;
    }

    /** The prompt in one batch; the logits of its last token. */
    private float[] prefill(int[] prompt, KvCache cache) {
        boolean[] want = new boolean[prompt.length];
        want[prompt.length - 1] = true;
        return model.forward(batch(prompt, want, cache))[prompt.length - 1];
    }

    private KvCache cacheFor(int positions) {
        KvCache cache = model.newCache(positions, cacheTypes);
        cache.ensureCapacity(positions);
        return cache;
    }

    private static ForwardBatch batch(int[] tokens, boolean[] want, KvCache cache) {
        KvCache[] caches = new KvCache[tokens.length];
        Arrays.fill(caches, cache);
        return new ForwardBatch(tokens, IntStream.range(0, tokens.length).toArray(), caches, want);
    }

    private static void requirePrompt(int[] prompt) {
        if (prompt.length == 0) {
            throw new IllegalArgumentException("empty prompt: nothing to continue");
        }
    }
}
