package dev.lazarus.kt.speculative;

import java.util.Arrays;

/**
 * Prompt lookup, llama-server's {@code ngram-simple}: the last {@code sizeN} tokens (the chosen one included) are
 * looked for earlier in the sequence, the latest occurrence first, and the up to {@code sizeM} tokens that followed
 * it are the draft. Repetitive text (code being edited, a document quoted back, an answer restating its question)
 * drafts well; other text drafts nothing, at the cost of the search. No state: one instance serves all sequences.
 *
 * <p>As llama.cpp's {@code common_ngram_simple_draft}: the history before the chosen token must be longer than
 * {@code sizeN + sizeM + 1} tokens, position 0 never matches, and a continuation shorter than {@code sizeN} is no
 * draft.
 */
public final class NgramDrafter implements Drafter, Drafter.Session {

    /** llama-server's {@code --spec-ngram-simple-size-n} and {@code -size-m} defaults. */
    public static final int DEFAULT_SIZE_N = 12;
    public static final int DEFAULT_SIZE_M = 48;

    private static final int[] NONE = new int[0];

    private final int sizeN;
    private final int sizeM;
    private final int minDraft;

    public NgramDrafter(int sizeN, int sizeM, int minDraft) {
        if (sizeN < 1 || sizeM < 1 || minDraft < 0) {
            throw new IllegalArgumentException("n-gram sizes must be at least 1 and the minimum draft at least 0, got n "
                    + sizeN + ", m " + sizeM + ", min " + minDraft);
        }
        this.sizeN = sizeN;
        this.sizeM = sizeM;
        this.minDraft = minDraft;
    }

    @Override
    public Session open() {
        return this;
    }

    @Override
    public int maxDraft() {
        return sizeM;
    }

    @Override
    public int minDraft() {
        return minDraft;
    }

    @Override
    public String type() {
        return "ngram-simple";
    }

    @Override
    public void close() {
        // nothing held
    }

    @Override
    public int[] propose(int[] tokens, int length, int max) {
        int history = length - 1; // the tokens before the chosen one
        if (history <= sizeN + sizeM + 1 || max <= 0) {
            return NONE;
        }
        // the pattern is tokens[length - sizeN, length): the chosen token and the sizeN - 1 before it
        int patternStart = length - sizeN;
        for (int j = history - sizeN - 1; j > 0; j--) {
            if (Arrays.equals(tokens, j, j + sizeN, tokens, patternStart, length)) {
                int copy = Math.min(sizeM, history - (j + sizeN));
                if (copy < sizeN) {
                    return NONE;
                }
                return Arrays.copyOfRange(tokens, j + sizeN, j + sizeN + Math.min(copy, max));
            }
        }
        return NONE;
    }
}
