package dev.lazarus.kt.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** ggml's CPU top_k: libstdc++'s partial_sort by descending score, whose heap walk decides between equal scores. */
class GgmlTopKTest {

    static int[] kept(boolean[] keep) {
        return IntStream.range(0, keep.length).filter(i -> keep[i]).toArray();
    }

    @Test
    void distinctScoresKeepTheLargest() {
        Random random = new Random(7);
        for (int round = 0; round < 50; round++) {
            int n = 20 + random.nextInt(200);
            int k = 1 + random.nextInt(n - 1);
            float[] scores = new float[n];
            for (int i = 0; i < n; i++) {
                scores[i] = (float) random.nextGaussian() + i * 1e-3f; // distinct
            }
            float[] sorted = scores.clone();
            Arrays.sort(sorted);
            float cut = sorted[n - k];
            int[] expected = IntStream.range(0, n).filter(i -> scores[i] >= cut).toArray();
            assertThat(kept(GgmlTopK.select(scores, n, k))).as("n %d, k %d", n, k).containsExactly(expected);
        }
    }

    @Test
    void equalScoresAreDecidedAsLibstdcxxPartialSortDecidesThem() {
        // what std::partial_sort with comp(a, b) = s[a] > s[b] keeps (GCC's libstdc++, measured): not the lowest
        // indices among the equal ones
        float[] s = {0, 1, 0, 0, 2, 0, 1, 0, 0, 3, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0};
        assertThat(kept(GgmlTopK.select(s, s.length, 8))).containsExactly(1, 3, 4, 6, 9, 11, 15, 17);
        assertThat(kept(GgmlTopK.select(s, s.length, 5))).containsExactly(1, 4, 9, 11, 17);
    }

    @Test
    void noMorePositionsThanTopKKeepsThemAll() {
        assertThat(kept(GgmlTopK.select(new float[] {3, 1, 2}, 3, 8))).containsExactly(0, 1, 2);
        assertThat(kept(GgmlTopK.select(new float[] {3, 1, 2}, 3, 3))).containsExactly(0, 1, 2);
    }
}
