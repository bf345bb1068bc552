package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The vector Q8_K quantizer against the scalar reference, bit for bit, on fresh random blocks each run. */
class Q8KQuantizerTest {

    private static final int N = 256;
    private final long seed = System.nanoTime();
    private final Random random = new Random(seed);

    @Test
    void equalsTheReferenceOnRandomBlocks() {
        for (int round = 0; round < 2000; round++) {
            float scale = (float) Math.pow(10, random.nextInt(13) - 6);
            assertSame(x -> {
                for (int i = 0; i < N; i++) {
                    x[i] = (float) random.nextGaussian() * scale;
                }
            });
        }
    }

    @Test
    void roundsHalfwayProductsToEvenAsTheReference() {
        // max 127·2^e gives iscale -2^-e exactly, so (k + 0.5)·2^e lands on a tie after scaling
        for (int round = 0; round < 500; round++) {
            float unit = (float) Math.scalb(1.0, random.nextInt(41) - 20);
            assertSame(x -> {
                for (int i = 0; i < N; i++) {
                    x[i] = (random.nextInt(253) - 126 + (random.nextBoolean() ? 0.5f : 0f)) * unit;
                }
                x[random.nextInt(N)] = (random.nextBoolean() ? 127 : -127) * unit;
            });
        }
    }

    @Test
    void takesTheFirstOfEqualMagnitudesWhateverItsSign() {
        for (int round = 0; round < 500; round++) {
            assertSame(x -> {
                for (int i = 0; i < N; i++) {
                    x[i] = random.nextFloat() * 2 - 1;
                }
                float m = 1 + random.nextFloat();
                int first = random.nextInt(N - 1);
                x[first] = random.nextBoolean() ? m : -m;
                x[first + 1 + random.nextInt(N - 1 - first)] = -x[first];
            });
        }
    }

    @Test
    void edgeBlocksFollowTheReference() {
        assertSame(x -> {});                                    // zeros
        assertSame(x -> x[200] = -0.0f);                        // negative zero only
        assertSame(x -> x[37] = 3e-3f);                         // one value
        assertSame(x -> x[255] = -Float.MIN_VALUE);             // a subnormal maximum: iscale overflows
        assertSame(x -> {
            x[3] = 1e-39f;
            x[4] = -7e-40f;
        });
        assertSame(x -> {                                       // the cap at 127 for the positive side
            for (int i = 0; i < N; i++) {
                x[i] = i % 2 == 0 ? -1f : 1f;
            }
        });
        assertSame(x -> {
            x[10] = Float.MAX_VALUE;
            x[11] = -Float.MAX_VALUE;
            x[12] = 1f;
        });
        assertSame(x -> {
            x[5] = Float.NaN;
            x[6] = 2f;
        });
        assertSame(x -> {
            x[9] = Float.NEGATIVE_INFINITY;
            x[6] = 2f;
        });
    }

    /** Quantizes a block (filled by {@code fill}, at a random offset) both ways and compares every output. */
    private void assertSame(Consumer<float[]> fill) {
        float[] block = new float[N];
        fill.accept(block);
        int blocks = 1 + random.nextInt(3);
        int at = random.nextInt(blocks);
        float[] x = new float[N * blocks];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian();
        }
        System.arraycopy(block, 0, x, N * at, N);
        float[] qv = new float[x.length], qs = new float[x.length], sv = new float[blocks], ss = new float[blocks];
        int[] bv = new int[x.length / 16], bs = new int[x.length / 16];
        boolean vector = Q8KQuantizer.quantize(x, N * at, qv, bv, sv);
        boolean scalar = Q8KQuantizer.quantizeScalar(x, N * at, qs, bs, ss);
        String why = "seed " + seed;
        assertThat(vector).as(why).isEqualTo(scalar);
        assertThat(bits(sv)).as(why).containsExactly(bits(ss));
        assertThat(bits(qv)).as(why).containsExactly(bits(qs));
        assertThat(bv).as(why).containsExactly(bs);
    }

    private static int[] bits(float[] v) {
        int[] b = new int[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = Float.floatToRawIntBits(v[i]);
        }
        return b;
    }
}
