package dev.lazarus.kt.fidelity;

import java.util.Set;

/**
 * The engine side of a fidelity measurement: what is needed of the implementation under test. {@link ModelProbe}
 * runs a loaded kt-native {@code Model}; another engine can be measured by implementing this.
 */
public interface EngineProbe {

    /** Vocabulary size: the oracle's token ids must fall below it. */
    int vocabSize();

    /**
     * Teacher forcing: the raw logits for each position of {@code path} given {@code prompt} and the path before it
     * (entry {@code i} predicts {@code path[i]}), computed as {@code forcing} says.
     */
    float[][] teacherForcedLogits(int[] prompt, int[] path, Forcing forcing);

    /**
     * The engine's own greedy continuation of {@code prompt} (never choosing a token of {@code banned}), run until it
     * leaves {@code path}: returns the first position whose token differs, or -1 when all of {@code path} is
     * reproduced.
     */
    int freeRunningDivergence(int[] prompt, int[] path, Set<Integer> banned);
}
