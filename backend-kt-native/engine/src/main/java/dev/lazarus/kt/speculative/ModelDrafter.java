package dev.lazarus.kt.speculative;

import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.KvCacheTypes;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.sampling.Sampler;
import java.util.Arrays;

/**
 * Drafting with a small model of the same vocabulary, llama-server's {@code draft-simple} with its default greedy
 * draft sampling: the draft model follows each sequence in a cache of its own and proposes its argmax, token by token,
 * up to the draft length. Its cache keeps the longest prefix it shares with the sequence (the accepted tokens), so
 * each proposal computes only the tokens the main model chose since the last one, then the draft itself.
 */
public final class ModelDrafter implements Drafter {

    /** llama-server's {@code --spec-draft-n-max} default. */
    public static final int DEFAULT_MAX_DRAFT = 3;
    /** Positions of the sequence the draft model computes per forward pass while it catches up (a prompt). */
    private static final int CHUNK = 512;

    private final Model draft;
    private final int contextSize;
    private final KvCacheTypes cacheTypes;
    private final DraftLength draftLength;
    private final AutoCloseable resources;

    /**
     * @param draft     the draft model; its vocabulary must be the main model's (the caller checks)
     * @param resources closed with the drafter (the draft model's file), or null
     */
    public ModelDrafter(Model draft, int contextSize, KvCacheTypes cacheTypes, DraftLength draftLength,
                        AutoCloseable resources) {
        if (draft.kvLayout().hasRecurrentState()) {
            throw new IllegalArgumentException("a draft model with recurrent state (" + draft.config().architecture()
                    .ggufName() + ") cannot roll its state back past rejected tokens");
        }
        this.draft = draft;
        this.contextSize = contextSize;
        this.cacheTypes = cacheTypes;
        this.draftLength = draftLength;
        this.resources = resources;
    }

    @Override
    public Session open() {
        return new Follower();
    }

    @Override
    public int maxDraft() {
        return draftLength.max();
    }

    @Override
    public int minDraft() {
        return draftLength.min();
    }

    @Override
    public String type() {
        return "draft-simple";
    }

    @Override
    public void close() {
        if (resources != null) {
            try {
                resources.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the draft model failed", e);
            }
        }
    }

    /** The draft model's view of one sequence: its cache and the tokens it holds. */
    private final class Follower implements Session {

        private final KvCache cache = draft.newCache(contextSize, cacheTypes);
        private int[] cached = new int[64];

        @Override
        public int[] propose(int[] tokens, int length, int max) {
            // keep what the draft model computed of the sequence as it now stands; at least the chosen token is new
            int keep = Math.min(Arrays.mismatch(cached, 0, cache.length(), tokens, 0, length), length - 1);
            if (keep < 0) {
                keep = Math.min(cache.length(), length - 1); // all cached tokens match
            }
            cache.setLength(keep);
            float[] logits = feed(tokens, keep, length);
            int[] out = new int[max];
            for (int i = 0; i < max; i++) {
                out[i] = Sampler.argmax(logits);
                if (i + 1 < max) {
                    logits = feed(out, i, i + 1);
                }
            }
            return out;
        }

        /** Computes {@code source[from, to)} at the cache's next positions; the logits of the last one. */
        private float[] feed(int[] source, int from, int to) {
            float[] logits = null;
            for (int start = from; start < to; start += CHUNK) {
                int n = Math.min(CHUNK, to - start);
                int position = cache.length();
                cache.ensureCapacity(position + n);
                int[] chunk = Arrays.copyOfRange(source, start, start + n);
                int[] positions = new int[n];
                KvCache[] caches = new KvCache[n];
                boolean[] want = new boolean[n];
                for (int i = 0; i < n; i++) {
                    positions[i] = position + i;
                    caches[i] = cache;
                }
                want[n - 1] = start + n == to;
                float[][] out = draft.forward(new ForwardBatch(chunk, positions, caches, want));
                cache.setLength(position + n);
                if (cached.length < position + n) {
                    cached = Arrays.copyOf(cached, Math.max(2 * cached.length, position + n));
                }
                System.arraycopy(chunk, 0, cached, position, n);
                logits = out[n - 1];
            }
            return logits;
        }
    }
}
