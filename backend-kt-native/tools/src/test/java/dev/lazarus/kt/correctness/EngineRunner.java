package dev.lazarus.kt.correctness;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.correctness.Continuation.Candidate;
import dev.lazarus.kt.fidelity.LogitMath;
import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.model.AttentionOrder;
import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.placement.ExpertPlacement;
import dev.lazarus.kt.placement.PlacementConfig;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.tokenizer.Tokenizer;
import dev.lazarus.kt.tokenizer.Tokenizers;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * The kt-native engine driven the way llama-server drives llama.cpp for a {@code /completion}: the prompt in
 * one batch (two for sliding-window models, see {@link #CHECKPOINT_TAIL}), then one token per step, greedy choice
 * with the end-of-generation tokens banned ({@code ignore_eos}). Works on the model directly, so nothing but the
 * model's numerics is compared.
 */
final class EngineRunner implements AutoCloseable {

    private final GgufFile file;
    private final Model model;
    private final Tokenizer tokenizer;
    private final ExpertPlacement placement;
    private final KvCacheTypes cacheTypes;

    /** Rounding like the variant llama-server is held to ({@link EngineParityFixture#kernels}). */
    EngineRunner(Path gguf, Parallel parallel) {
        this(gguf, parallel, null, AttentionOrder.NON_FLASH);
    }

    EngineRunner(Path gguf, Parallel parallel, AttentionOrder order) {
        this(gguf, parallel, null, order);
    }

    /** With the routed experts placed per {@code placement} (null: the model's own expert path, all in place). */
    EngineRunner(Path gguf, Parallel parallel, PlacementConfig placement, KernelConfig kernels) {
        this(gguf, parallel, placement, AttentionOrder.NON_FLASH, KvCacheTypes.F16, kernels);
    }

    /**
     * With the routed experts placed per {@code placement} (null: the model's own expert path, all in place), attention
     * rounded in {@code order}.
     */
    EngineRunner(Path gguf, Parallel parallel, PlacementConfig placement, AttentionOrder order) {
        this(gguf, parallel, placement, order, KvCacheTypes.F16);
    }

    /** As above, with a KV cache of {@code cacheTypes} (llama-server's {@code -ctk}/{@code -ctv}). */
    EngineRunner(Path gguf, Parallel parallel, PlacementConfig placement, AttentionOrder order, KvCacheTypes cacheTypes) {
        this(gguf, parallel, placement, order, cacheTypes, EngineParityFixture.kernels());
    }

    EngineRunner(Path gguf, Parallel parallel, PlacementConfig placement, AttentionOrder order, KvCacheTypes cacheTypes,
                 KernelConfig kernels) {
        this.cacheTypes = cacheTypes;
        this.file = GgufFile.open(gguf);
        try {
            this.model = Model.load(file, parallel, kernels, order);
            this.tokenizer = Tokenizers.fromMetadata(file.metadata());
            this.placement = placement == null ? null : ExpertPlacement.install(model, gguf.getFileName().toString(), placement, null);
        } catch (RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    /** The expert placement, or null when none was asked for (or the model has no routed experts). */
    ExpertPlacement placement() {
        return placement;
    }

    Tokenizer tokenizer() {
        return tokenizer;
    }

    GgufFile file() {
        return file;
    }

    /** Token ids of every end-of-generation token, which {@code ignore_eos} bans. */
    Set<Integer> endOfGeneration() {
        Set<Integer> ids = new java.util.TreeSet<>();
        for (int id = 0; id < tokenizer.vocabSize(); id++) {
            if (tokenizer.isEog(id)) {
                ids.add(id);
            }
        }
        return ids;
    }

    /**
     * Greedily continues {@code prompt} by {@code n} tokens, never choosing a token in {@code banned}.
     * {@code keep} candidates per step are returned, best first, with log-probabilities of the full softmax.
     */
    Continuation greedy(int[] prompt, int n, Set<Integer> banned, int keep) {
        KvCache cache = model.newCache(prompt.length + n, cacheTypes);
        cache.ensureCapacity(prompt.length + n);
        int split = (model.config().slidingWindow() > 0 || model.kvLayout().hasRecurrentState())
                && prompt.length > CHECKPOINT_TAIL
                ? prompt.length - CHECKPOINT_TAIL : 0;
        if (split > 0) {
            prefill(prompt, 0, split, cache);
        }
        float[] logits = prefill(prompt, split, prompt.length, cache);
        int[] tokens = new int[n];
        List<List<Candidate>> top = new ArrayList<>(n);
        double[][] distributions = new double[n][];
        for (int step = 0; step < n; step++) {
            double[] logprobs = LogitMath.logSoftmax(logits);
            distributions[step] = logprobs;
            top.add(best(logprobs, keep, Set.of()));
            int next = best(logprobs, 1, banned).getFirst().id();
            tokens[step] = next;
            if (step + 1 < n) {
                logits = model.forward(ForwardBatch.single(next, prompt.length + step, cache))[0];
            }
        }
        return new Continuation(tokens, top, distributions);
    }

    /**
     * Prompt tokens llama-server computes as a batch of their own in a sliding-window model: it keeps a checkpoint of
     * the memory it cannot roll back (the window's cache) before the last 4 tokens of a prompt longer than 4, so
     * those 4 run after the others (seen in its log: {@code cached n_tokens = n - 4} before the checkpoint). The
     * batch size picks the kernels (a repacked Q4_K's four-row GEMM for those 4), hence the rounding. The engine's
     * scheduler feeds prompts the same way ({@code runtime.Scheduler.CHECKPOINT_TAIL}).
     */
    static final int CHECKPOINT_TAIL = 4;

    /** Runs {@code prompt[from, to)} as one batch into {@code cache}; returns the last token's logits. */
    private float[] prefill(int[] prompt, int from, int to, KvCache cache) {
        int n = to - from;
        KvCache[] caches = new KvCache[n];
        Arrays.fill(caches, cache);
        boolean[] want = new boolean[n];
        want[n - 1] = true;
        return model.forward(new ForwardBatch(Arrays.copyOfRange(prompt, from, to), IntStream.range(from, to).toArray(),
                caches, want))[n - 1];
    }

    /** The loaded model, for the fidelity metric. */
    Model model() {
        return model;
    }

    /** Every prompt token's final hidden state (after the output norm), the prompt in one batch. */
    float[][] hiddenStates(int[] prompt) {
        KvCache cache = model.newCache(prompt.length, cacheTypes);
        cache.ensureCapacity(prompt.length);
        KvCache[] caches = new KvCache[prompt.length];
        Arrays.fill(caches, cache);
        boolean[] all = new boolean[prompt.length];
        Arrays.fill(all, true);
        return model.hiddenStates(new ForwardBatch(prompt, IntStream.range(0, prompt.length).toArray(), caches, all));
    }

    /** The {@code k} most probable ids outside {@code banned}; ties go to the lower id, like an argmax scan. */
    static List<Candidate> best(double[] logprobs, int k, Set<Integer> banned) {
        return IntStream.range(0, logprobs.length)
                .filter(id -> !banned.contains(id))
                .mapToObj(id -> new Candidate(id, logprobs[id]))
                .sorted(Comparator.comparingDouble(Candidate::logprob).reversed().thenComparingInt(Candidate::id))
                .limit(k)
                .toList();
    }

    @Override
    public void close() {
        try {
            if (placement != null) {
                placement.close();
            }
        } finally {
            file.close();
        }
    }
}
