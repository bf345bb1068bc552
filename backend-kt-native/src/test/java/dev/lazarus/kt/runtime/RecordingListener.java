package dev.lazarus.kt.runtime;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** Greedy selection, stops after {@code limit} tokens (never, when negative); records what happened. */
final class RecordingListener implements SequenceListener {

    final List<Integer> tokens = new CopyOnWriteArrayList<>();
    final CompletableFuture<EndReason> end = new CompletableFuture<>();
    private final int limit;

    RecordingListener(int limit) {
        this.limit = limit;
    }

    @Override
    public int select(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    @Override
    public boolean accept(int token) {
        tokens.add(token);
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
