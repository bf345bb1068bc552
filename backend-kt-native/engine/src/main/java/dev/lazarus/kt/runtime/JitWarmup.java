package dev.lazarus.kt.runtime;

import dev.lazarus.kt.sampling.Sampler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Generates throwaway tokens through an engine before it serves, so that the JIT has compiled its kernels when
 * the first request comes. The Vector API code is slow until C2 compiles it, and on a small machine C2 competes
 * with the engine for the cores: measured on 2 cores, decode reached its steady speed only after ~1000 tokens
 * (about twice as slow before; docs/benchmarks.md#warm-up). llama-server runs a warm-up pass at load too.
 *
 * <p>A prompt batch first (the prefill kernels), then greedy decode; with room for two sequences, two run side
 * by side so that the batched decode path is compiled as well. The tokens are a fixed spread over the
 * vocabulary, never shown to anyone; what they route is forgotten by the caller ({@code forgetTraffic}).
 */
public final class JitWarmup {

    private JitWarmup() {
    }

    /**
     * Generates about {@code tokens} tokens (prompts not counted) and waits for them.
     *
     * @return the tokens generated
     * @throws IllegalStateException when the engine fails or takes longer than {@code timeoutSeconds}
     */
    public static int run(InferenceEngine engine, int vocabSize, int tokens, long timeoutSeconds) {
        EngineOptions options = engine.options();
        int sequences = Math.min(2, options.maxSequences());
        // each sequence: a prompt as long as one batch allows, within half the context, and decode in the rest
        int prompt = Math.max(1, Math.min(Math.min(options.maxBatchTokens(), 128), options.contextSize() / 2));
        int perSequence = Math.max(1, Math.min(options.contextSize() - prompt - 1, tokens / sequences));
        int rounds = Math.max(1, (tokens + perSequence * sequences - 1) / (perSequence * sequences));
        int generated = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (int round = 0; round < rounds; round++) {
            List<Greedy> running = new ArrayList<>();
            List<SequenceHandle> handles = new ArrayList<>();
            try {
                for (int s = 0; s < sequences; s++) {
                    Greedy greedy = new Greedy(perSequence);
                    handles.add(engine.submit(prompt(vocabSize, prompt, round * sequences + s), greedy));
                    running.add(greedy);
                }
                for (Greedy greedy : running) {
                    generated += greedy.await(deadline);
                }
            } catch (RuntimeException e) {
                handles.forEach(SequenceHandle::cancel); // nothing of the warm-up outlives it
                throw e;
            }
        }
        return generated;
    }

    /** Token ids spread over the vocabulary, different per sequence (no prefix-cache hit between them). */
    static int[] prompt(int vocabSize, int length, int sequence) {
        int[] ids = new int[length];
        for (int i = 0; i < length; i++) {
            ids[i] = (int) ((7919L * (i + 1) + 104729L * sequence) % vocabSize);
        }
        return ids;
    }

    /** Greedy choice until {@code wanted} tokens. */
    private static final class Greedy implements SequenceListener {
        private final CompletableFuture<Integer> done = new CompletableFuture<>();
        private final int wanted;
        private int produced;

        Greedy(int wanted) {
            this.wanted = wanted;
        }

        @Override
        public int select(float[] logits) {
            return Sampler.argmax(logits);
        }

        @Override
        public boolean accept(int token) {
            return ++produced < wanted;
        }

        @Override
        public void ended(EndReason reason) {
            done.complete(produced);
        }

        @Override
        public void failed(Throwable error) {
            done.completeExceptionally(error);
        }

        int await(long deadlineNanos) {
            try {
                return done.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                throw new IllegalStateException("the warm-up generation failed: " + e.getCause().getMessage(), e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("the warm-up did not finish in time", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted during the warm-up", e);
            }
        }
    }
}
