package dev.lazarus.kt.runtime;

import dev.lazarus.kt.model.ForwardBatch;
import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.model.Model;
import dev.lazarus.kt.parallel.Parallel;
import dev.lazarus.kt.speculative.Drafter;
import dev.lazarus.kt.speculative.SpeculationStats;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * One step of continuous batching: every active sequence contributes its pending tokens (one while
 * decoding, with the tokens a {@link Drafter} proposes after it under speculative decoding; a chunk of its prompt
 * while prefilling) to ONE forward pass, so each weight (and each chosen expert) is read once per step for all
 * sequences. After the pass, sequences whose last fed token produced logits pick their next token (or tokens: the
 * accepted part of the draft and the one after it). Used by the engine thread only.
 */
final class Scheduler {

    private static final System.Logger LOG = System.getLogger(Scheduler.class.getName());

    /**
     * Prompt tokens of a sliding-window model that run as a step of their own: llama-server keeps a checkpoint of the
     * memory it cannot roll back (the window's cache) before the last 4 tokens of a prompt longer than 4, so it
     * computes those 4 in a batch of their own. The batch size picks the kernels (a repacked Q4_K's four-row GEMM),
     * hence the rounding: the same batches give its numbers (docs/fidelity.md, cause 3).
     */
    static final int CHECKPOINT_TAIL = 4;

    private final Model model;
    private final boolean checkpointsPrompts;
    private final EngineOptions options;
    private final Parallel parallel;
    private final PrefixCache prefixCache;
    /** Null without speculative decoding. */
    private final Drafter drafter;
    private final SpeculationStats stats = new SpeculationStats();
    private final List<Sequence> active = new ArrayList<>();
    // active.size() for other threads (the list itself belongs to the engine thread)
    private volatile int activeCount;
    private volatile long steps;

    /** @param drafter proposes tokens for speculative decoding, or null (none) */
    Scheduler(Model model, EngineOptions options, Parallel parallel, Drafter drafter) {
        this.model = model;
        this.drafter = drafter;
        this.checkpointsPrompts = model.config().slidingWindow() > 0 || model.kvLayout().hasRecurrentState();
        this.options = options;
        this.parallel = parallel;
        this.prefixCache = new PrefixCache(options.prefixCacheEntries());
    }

    boolean hasRoom() {
        return active.size() < options.maxSequences();
    }

    boolean isIdle() {
        return active.isEmpty();
    }

    /** Safe to read from any thread. */
    int activeCount() {
        return activeCount;
    }

    long steps() {
        return steps;
    }

    SpeculationStats speculation() {
        return stats;
    }

    /** Starts a sequence, seeding its cache from the longest cached prefix of its prompt. */
    void admit(Sequence seq) {
        KvCache cache = model.newCache(options.contextSize(), options.cacheTypes());
        int reused = 0;
        // an MTP drafter follows every position the main model computes: a reused prefix would leave it none
        PrefixCache.Hit hit = drafter != null && drafter.wantsHiddenStates() ? null : prefixCache.lookup(seq.prompt());
        if (hit != null && hit.positions() > 0) {
            cache.copyPrefixFrom(hit.cache(), hit.positions());
            reused = hit.positions();
        }
        seq.attach(cache, reused);
        if (drafter != null) {
            seq.drafts(drafter.open());
        }
        active.add(seq);
        activeCount = active.size();
        seq.listener().admitted(reused);
    }

    /** Runs one forward pass over all active sequences and hands out the sampled tokens. */
    void step() {
        dropCancelled();
        if (active.isEmpty()) {
            return;
        }
        List<Sequence> batchSeqs = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        int budget = options.maxBatchTokens();
        // Decoding sequences first (one token each, and their drafts) so a long prompt never stalls running streams.
        int decoding = drafter == null ? 0 : (int) active.stream().filter(seq -> seq.pending() == 1).count();
        for (Sequence seq : active) {
            if (seq.pending() == 1) {
                decoding--;
                // every decoding sequence after this one keeps its token's place in the budget
                int[] draft = draft(seq, budget - 1 - decoding);
                seq.draft(draft);
                budget = plan(seq, 1 + (draft == null ? 0 : draft.length), budget, batchSeqs, counts);
            }
        }
        for (Sequence seq : active) {
            if (seq.pending() > 1 && budget > 0) {
                seq.draft(null);
                budget = plan(seq, promptChunk(seq.pending(), budget), budget, batchSeqs, counts);
            }
        }
        if (batchSeqs.isEmpty()) {
            return;
        }
        int total = counts.stream().mapToInt(Integer::intValue).sum();
        int[] tokens = new int[total];
        int[] positions = new int[total];
        KvCache[] caches = new KvCache[total];
        boolean[] wantLogits = new boolean[total];
        int at = 0;
        for (int s = 0; s < batchSeqs.size(); s++) {
            Sequence seq = batchSeqs.get(s);
            int start = seq.fed();
            int[] draft = seq.draft();
            for (int k = 0; k < counts.get(s); k++, at++) {
                // the pending token, then its draft: each position's logits verify the next draft token
                tokens[at] = draft != null && k > 0 ? draft[k - 1] : seq.token(start + k);
                positions[at] = start + k;
                caches[at] = seq.cache();
                wantLogits[at] = start + k >= seq.length() - 1;
            }
        }
        float[][] logits;
        float[][] hidden = null;
        try {
            ForwardBatch batch = new ForwardBatch(tokens, positions, caches, wantLogits);
            if (drafter != null && drafter.wantsHiddenStates()) {
                boolean[] wantHidden = new boolean[total];
                Arrays.fill(wantHidden, true);
                Model.Output out = model.forward(batch, wantHidden);
                logits = out.logits();
                hidden = out.hidden();
            } else {
                logits = model.forward(batch);
            }
        } catch (RuntimeException | Error e) {
            for (Sequence seq : batchSeqs) {
                fail(seq, e);
            }
            return;
        }
        if (hidden != null) {
            follow(batchSeqs, counts, tokens, positions, hidden);
        }
        steps++;
        List<Sequence> sampling = new ArrayList<>();
        List<Integer> firstLogits = new ArrayList<>();
        at = 0;
        for (int s = 0; s < batchSeqs.size(); s++) {
            Sequence seq = batchSeqs.get(s);
            seq.cache().setLength(seq.fed() + counts.get(s));
            at += counts.get(s);
            if (logits[at - 1] != null) {
                sampling.add(seq);
                int[] draft = seq.draft();
                firstLogits.add(at - 1 - (draft == null ? 0 : draft.length));
            } else {
                seq.listener().prefilled(seq.fed(), seq.length());
            }
        }
        boolean[] goOn = new boolean[sampling.size()];
        Throwable[] errors = new Throwable[sampling.size()];
        parallel.forRange(sampling.size(), (from, to) -> {
            for (int i = from; i < to; i++) {
                try {
                    goOn[i] = choose(sampling.get(i), logits, firstLogits.get(i));
                } catch (RuntimeException | Error e) {
                    errors[i] = e;
                }
            }
        });
        for (int i = 0; i < sampling.size(); i++) {
            Sequence seq = sampling.get(i);
            if (errors[i] != null) {
                fail(seq, errors[i]);
            } else if (!goOn[i]) {
                end(seq, EndReason.STOPPED);
            } else if (seq.length() >= options.contextSize()) {
                // as llama-server: prompt and completion together fill the context, no token beyond it
                end(seq, EndReason.CONTEXT_FULL);
            }
        }
    }

    /**
     * Picks the sequence's next tokens from the logits at {@code first} on: one, or with a draft as llama.cpp's
     * {@code common_sampler_sample_and_accept_n} does, the listener's own choice at each drafted position while it
     * equals the draft, then its choice after the last accepted one. Each token is chosen and accepted exactly as
     * without a draft (the same sampler calls in the same order), so the output is the same; the cache then drops
     * the positions of the rejected draft tokens. Returns whether to go on generating.
     */
    private boolean choose(Sequence seq, float[][] logits, int first) {
        int[] draft = seq.draft();
        boolean decoding = seq.generated() > 0;
        int accepted = 0;
        boolean goOn;
        while (true) {
            int next = seq.listener().select(logits[first + accepted]);
            seq.append(next);
            goOn = seq.listener().accept(next);
            if (!goOn || draft == null || accepted == draft.length || next != draft[accepted]) {
                break;
            }
            accepted++;
        }
        if (draft != null) {
            seq.keepVerified();
            seq.draft(null);
        }
        if (drafter != null && decoding) {
            stats.step(draft == null ? 0 : draft.length, accepted, accepted + 1);
        }
        return goOn;
    }

    /**
     * The tokens drafted to follow a decoding sequence's pending token, at most {@code room}; null when none. Bounded
     * as llama-server bounds them: the context keeps room for the token after the last draft one, and no draft token
     * lies beyond what {@code max_tokens} lets the sequence emit.
     */
    private int[] draft(Sequence seq, int room) {
        if (seq.drafts() == null) {
            return null;
        }
        int max = Math.min(Math.min(drafter.maxDraft(), room),
                Math.min(options.contextSize() - seq.length() - 1, seq.listener().tokensLeft() - 1));
        if (max <= 0 || max < drafter.minDraft()) {
            return null;
        }
        int[] draft;
        try {
            draft = seq.drafts().propose(seq.tokenArray(), seq.length(), max);
        } catch (RuntimeException e) {
            // a draft is only ever a guess: the sequence decodes on without one
            LOG.log(System.Logger.Level.WARNING, "the " + drafter.type() + " drafter failed; this step decodes without a draft", e);
            return null;
        }
        return draft.length == 0 || draft.length < drafter.minDraft() ? null : Arrays.copyOf(draft, Math.min(draft.length, max));
    }

    /** Hands each sequence's computed tokens and hidden states to its drafter (the MTP block follows them). */
    private void follow(List<Sequence> batchSeqs, List<Integer> counts, int[] tokens, int[] positions,
                        float[][] hidden) {
        int at = 0;
        for (int s = 0; s < batchSeqs.size(); s++) {
            Sequence seq = batchSeqs.get(s);
            int count = counts.get(s);
            if (seq.drafts() != null) {
                try {
                    seq.drafts().computed(tokens, positions, hidden, at, at + count);
                } catch (RuntimeException e) {
                    // the drafter's state is only ever a guess's input: its next proposals may be worse, never wrong
                    LOG.log(System.Logger.Level.WARNING, "the " + drafter.type() + " drafter failed to follow a step",
                            e);
                }
            }
            at += count;
        }
    }

    /** Prompt tokens to feed of {@code pending}: at most the budget, and never into the checkpoint tail with the rest. */
    private int promptChunk(int pending, int budget) {
        int chunk = Math.min(pending, budget);
        return checkpointsPrompts && pending > CHECKPOINT_TAIL ? Math.min(chunk, pending - CHECKPOINT_TAIL) : chunk;
    }

    private int plan(Sequence seq, int count, int budget, List<Sequence> batchSeqs, List<Integer> counts) {
        seq.cache().ensureCapacity(seq.fed() + count);
        batchSeqs.add(seq);
        counts.add(count);
        return budget - count;
    }

    private void dropCancelled() {
        for (Iterator<Sequence> it = active.iterator(); it.hasNext(); ) {
            Sequence seq = it.next();
            if (seq.isCancelled()) {
                it.remove();
                activeCount = active.size();
                retire(seq);
                if (seq.finish()) {
                    seq.listener().ended(EndReason.CANCELLED);
                }
            }
        }
    }

    private void end(Sequence seq, EndReason reason) {
        active.remove(seq);
        activeCount = active.size();
        retire(seq);
        if (seq.finish()) {
            seq.listener().ended(reason);
        }
    }

    private void fail(Sequence seq, Throwable error) {
        active.remove(seq);
        activeCount = active.size();
        closeDrafts(seq);
        if (seq.finish()) {
            seq.listener().failed(error);
        }
    }

    private static void closeDrafts(Sequence seq) {
        if (seq.drafts() != null) {
            seq.drafts().close();
            seq.drafts(null);
        }
    }

    /** Keeps a finished sequence's cache for prefix reuse. */
    private void retire(Sequence seq) {
        closeDrafts(seq);
        if (seq.cache() != null && seq.fed() > 0) {
            prefixCache.offer(seq.cachedTokens(), seq.cache());
        }
    }

    /** Fails every active sequence (engine shutting down). */
    void abortAll(Throwable reason) {
        for (Sequence seq : List.copyOf(active)) {
            fail(seq, reason);
        }
    }
}
