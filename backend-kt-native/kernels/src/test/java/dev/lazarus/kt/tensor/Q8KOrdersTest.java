package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The int16 orders written by selects and gathers against the orders' definitions, on fresh random quants. */
class Q8KOrdersTest {

    private final long seed = System.nanoTime();
    private final Random random = new Random(seed);

    @Test
    void eachOrderIsAPermutationWrittenAsDefined() {
        for (Q8KOrders order : new Q8KOrders[] {Q8KOrders.SHORT_LANES, Q8KOrders.IN_PLACE, Q8KOrders.Q6K}) {
            assertThat(Arrays.stream(order.from).sorted().toArray()).isEqualTo(IntStream.range(0, 256).toArray());
            for (int round = 0; round < 200; round++) {
                int blocks = 1 + random.nextInt(3);
                float[] quants = new float[256 * blocks];
                for (int i = 0; i < quants.length; i++) {
                    quants[i] = random.nextInt(256) - 128;
                }
                int b = random.nextInt(blocks);
                short[] into = new short[quants.length];
                order.write(quants, 256 * b, into);
                for (int i = 0; i < 256; i++) {
                    assertThat(into[256 * b + i]).as("seed %d, short %d", seed, i).isEqualTo((short) quants[256 * b + order.from[i]]);
                }
            }
        }
    }

    @Test
    void ordersAreTheKernelsLayouts() {
        // spot checks of the three layouts as the kernels document them
        assertThat(Q8KOrders.SHORT_LANES.from[32 * (4 * 1 + 2) + 13]).isEqualTo(32 * 5 + 16 + 8 + 1);
        assertThat(Q8KOrders.IN_PLACE.from[128 + 32 * 3 + 17]).isEqualTo(32 * (2 * 3 + 1) + 2 + 1);
        assertThat(Q8KOrders.Q6K.from[128 + 32 * 1 + 20]).isEqualTo(128 + 32 * 3 + 8);
    }
}
