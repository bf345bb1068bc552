package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Orders written by selects (16 shorts from at most two groups) and by gathers (from more) against their definitions,
 * on fresh random quants; the quant packages check their own orders with {@link #assertWrittenAsDefined}.
 */
public class Q8KShortOrderTest {

    private final long seed = System.nanoTime();

    /** Even values of two neighbouring groups, then the odd ones: every 16 shorts by one select. */
    private static final Q8KShortOrder BY_SELECT =
            new Q8KShortOrder((c, p, t) -> 128 * c + 32 * ((t >> 4) + 2 * (p & 1)) + 2 * (t & 15) + (p >> 1));
    /** Two values of each of eight groups per 16 shorts: gathered. */
    private static final Q8KShortOrder BY_GATHER = new Q8KShortOrder((c, p, t) -> 32 * (t & 7) + 16 * c + 4 * p + (t >> 3));

    @Test
    void eachOrderIsWrittenAsDefined() {
        assertWrittenAsDefined(BY_SELECT, seed);
        assertWrittenAsDefined(BY_GATHER, seed);
    }

    @Test
    void rejectsASourceThatIsNoPermutation() {
        assertThatThrownBy(() -> new Q8KShortOrder((c, p, t) -> t)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permutation");
    }

    /**
     * {@code order} is a permutation of a super-block's quants, and each super-block of an activation's copy in that
     * order holds {@code quants[from(i)]} at i, for random int8 quants (-128 included) in 1 to 3 super-blocks.
     */
    public static void assertWrittenAsDefined(Q8KShortOrder order, long seed) {
        assertThat(IntStream.range(0, 256).map(order::from).sorted().toArray()).isEqualTo(IntStream.range(0, 256).toArray());
        Random random = new Random(seed);
        for (int round = 0; round < 100; round++) {
            int blocks = 1 + random.nextInt(3);
            byte[] quants = new byte[256 * blocks];
            random.nextBytes(quants);
            short[] copy = Activation.ofQ8K(quants, new float[blocks]).form(order);
            for (int b = 0; b < blocks; b++) {
                for (int i = 0; i < 256; i++) {
                    assertThat(copy[256 * b + i]).as("seed %d, block %d, short %d", seed, b, i)
                            .isEqualTo(quants[256 * b + order.from(i)]);
                }
            }
        }
    }
}
