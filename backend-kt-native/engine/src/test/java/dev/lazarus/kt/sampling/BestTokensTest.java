package dev.lazarus.kt.sampling;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class BestTokensTest {

    /** The reference order: logit descending (as Float.compare: -0 below +0), then lower id first. */
    private static int[] sorted(float[] logits, int n) {
        return IntStream.range(0, logits.length).boxed()
                .sorted(Comparator.<Integer, Float>comparing(i -> logits[i], Comparator.reverseOrder())
                        .thenComparingInt(i -> i))
                .limit(n).mapToInt(Integer::intValue).toArray();
    }

    private static int[] ids(long[] packed) {
        return java.util.Arrays.stream(packed).mapToInt(p -> BestTokens.id(p)).toArray();
    }

    @Test
    void selectsTheBestInTheFullSortsOrderWithTiesByLowerIdAndSignedZeros() {
        SplittableRandom r = new SplittableRandom(3);
        float[] pool = {0f, -0f, 1f, -1f, Float.NEGATIVE_INFINITY, 2.5f};
        for (int round = 0; round < 200; round++) {
            float[] logits = new float[1 + r.nextInt(300)];
            for (int i = 0; i < logits.length; i++) {
                // few distinct values: ties everywhere, including at the heap's floor
                logits[i] = r.nextInt(4) == 0 ? (float) r.nextGaussian() : pool[r.nextInt(pool.length)];
            }
            for (int n : new int[] {1, 2, 7, 40, logits.length, logits.length + 5}) {
                assertThat(ids(BestTokens.of(logits, n))).as("n=%d of %d", n, logits.length)
                        .containsExactly(sorted(logits, n));
            }
        }
    }

    @Test
    void aMaskedVocabularyStillYieldsItsAllowedTokensFirst() {
        float[] logits = new float[1000];
        java.util.Arrays.fill(logits, Float.NEGATIVE_INFINITY);
        logits[700] = -3f;
        logits[5] = 1f;
        assertThat(ids(BestTokens.of(logits, 4))).containsExactly(5, 700, 0, 1);
    }
}
