package dev.lazarus.kt.runtime;

import dev.lazarus.kt.sampling.Sampler;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Greedy selection, stops after {@code limit} tokens (never, when negative); records what happened. */
final class RecordingListener implements SequenceListener {

    final List<Integer> tokens = new CopyOnWriteArrayList<>();
    /** What {@link #prefilled} told: tokens of the prompt processed, and the prompt's length. */
    final List<List<Integer>> prefilled = new CopyOnWriteArrayList<>();
    final CompletableFuture<EndReason> end = new CompletableFuture<>();
    private final int limit;
    private final int holdAt;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    RecordingListener(int limit) {
        this(limit, -1);
    }

    /**
     * Blocks the engine thread inside {@link #accept} at token number {@code holdAt} until {@link #release} opens,
     * so a test can act at a known point of the generation however fast the engine is.
     */
    RecordingListener(int limit, int holdAt) {
        this.limit = limit;
        this.holdAt = holdAt;
    }

    @Override
    public void prefilled(int processed, int total) {
        prefilled.add(List.of(processed, total));
    }

    @Override
    public int select(float[] logits) {
        return Sampler.argmax(logits);
    }

    @Override
    public boolean accept(int token) {
        tokens.add(token);
        if (tokens.size() == holdAt) {
            held.countDown();
            try {
                if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the engine thread");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return limit < 0 || tokens.size() < limit;
    }

    @Override
    public void ended(EndReason reason) {
        end.complete(reason);
    }

    @Override
    public void failed(Throwable error) {
        end.completeExceptionally(error);
    }

    EndReason awaitEnd() throws Exception {
        return end.get(60, TimeUnit.SECONDS);
    }

    int[] tokenArray() {
        return tokens.stream().mapToInt(Integer::intValue).toArray();
    }
}
