package dev.lazarus.kt.runtime;

import dev.lazarus.kt.model.KvCache;
import dev.lazarus.kt.speculative.Drafter;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A sequence's state as the scheduler sees it: its tokens (prompt, then generated), how many of
 * them are in the cache, and the token sampled but not yet fed. Mutated only by the scheduler
 * thread, except for the cancel flag.
 */
final class Sequence implements SequenceHandle {

    private final SequenceListener listener;
    private final int promptLength;
    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final AtomicBoolean done = new AtomicBoolean();
    private int[] tokens;
    private int length;
    private KvCache cache;
    private volatile int reused;
    /** The drafter's state for this sequence; null without speculative decoding. */
    private Drafter.Session drafts;
    /** The tokens drafted after the pending one and fed with it this step; null when none. */
    private int[] draft;

    Sequence(int[] prompt, SequenceListener listener) {
        this.tokens = Arrays.copyOf(prompt, Math.max(16, prompt.length * 2));
        this.length = prompt.length;
        this.promptLength = prompt.length;
        this.listener = listener;
    }

    SequenceListener listener() {
        return listener;
    }

    @Override
    public void cancel() {
        cancelled.set(true);
    }

    boolean isCancelled() {
        return cancelled.get();
    }

    @Override
    public boolean isDone() {
        return done.get();
    }

    /** Marks the sequence finished; true only for the first caller, so listeners hear the end once. */
    boolean finish() {
        return done.compareAndSet(false, true);
    }

    @Override
    public int reusedPromptTokens() {
        return reused;
    }

    void attach(KvCache cache, int reusedTokens) {
        this.cache = cache;
        this.reused = reusedTokens;
    }

    KvCache cache() {
        return cache;
    }

    /** Tokens in the cache. */
    int fed() {
        return cache.length();
    }

    /** Tokens known (prompt + accepted), one more than fed while decoding. */
    int length() {
        return length;
    }

    /** Tokens generated so far. */
    int generated() {
        return length - promptLength;
    }

    int token(int index) {
        return tokens[index];
    }

    /** Known tokens not yet in the cache: the rest of the prompt, or the one token just accepted. */
    int pending() {
        return length - fed();
    }

    void append(int token) {
        if (length == tokens.length) {
            tokens = Arrays.copyOf(tokens, tokens.length * 2);
        }
        tokens[length++] = token;
    }

    /** The known tokens' array, valid up to {@link #length()} (for a drafter to read without a copy). */
    int[] tokenArray() {
        return tokens;
    }

    Drafter.Session drafts() {
        return drafts;
    }

    void drafts(Drafter.Session session) {
        this.drafts = session;
    }

    int[] draft() {
        return draft;
    }

    void draft(int[] proposed) {
        this.draft = proposed;
    }

    /** Rolls the cache back to the known tokens but the pending one: positions of rejected draft tokens go. */
    void keepVerified() {
        cache.setLength(length - 1);
    }

    /** The tokens whose keys and values the cache holds. */
    int[] cachedTokens() {
        return Arrays.copyOf(tokens, fed());
    }

    int[] prompt() {
        return Arrays.copyOf(tokens, promptLength);
    }
}
