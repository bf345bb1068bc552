package dev.lazarus.kt.matrix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Vector kernels against the scalar references, and both against the plain definition
 * Σ dequantize(w)·dequantize(quantize(x)), on fresh random data every run (the seed is in the
 * failure message).
 */
public class KernelEquivalenceTest {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"})
    void vectorMatchesScalarOnEncodedWeights(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(3));
        float[] w = gaussian(rnd, rows * cols);
        check(type, MemorySegment.ofArray(GgmlCodec.encode(type, w)), rows, cols, rnd, seed);
    }

    /** Raw random bytes reach bit patterns an encoder never writes (scale -128, all-ones quants, ...). */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"})
    void vectorMatchesScalarOnRandomBlocks(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(3));
        byte[] bytes = new byte[(int) type.bytesFor((long) rows * cols)];
        rnd.nextBytes(bytes);
        MemorySegment data = MemorySegment.ofArray(bytes);
        for (long blk = 0; blk < bytes.length; blk += type.typeSize()) {
            switch (type) {
                case Q8_0, Q4_0, Q5_0 -> data.set(I16, blk, randomScale(rnd));
                case Q4_1, Q5_1 -> {
                    data.set(I16, blk, randomScale(rnd));
                    data.set(I16, blk + 2, randomScale(rnd));
                }
                case Q4_K, Q5_K -> {
                    data.set(I16, blk, randomScale(rnd));
                    data.set(I16, blk + 2, randomScale(rnd));
                }
                case Q6_K -> data.set(I16, blk + 208, randomScale(rnd));
                default -> throw new IllegalStateException();
            }
        }
        check(type, data, rows, cols, rnd, seed);
    }

    private static void check(GgmlType type, MemorySegment data, int rows, int cols, Random rnd, long seed) {
        WeightMatrix vector = WeightMatrices.defaults().of(type, data, rows, cols);
        WeightMatrix scalar = WeightMatrices.scalar(type, data, rows, cols);
        float[][] xs = {gaussian(rnd, cols), gaussian(rnd, cols), gaussian(rnd, cols)};
        float[][] batched = new float[xs.length][rows];
        vector.matmul(xs, batched, 0, rows);

        float[] row = new float[cols];
        for (int b = 0; b < xs.length; b++) {
            float[] v = new float[rows], s = new float[rows];
            vector.matvec(xs[b], v, 0, rows);
            scalar.matvec(xs[b], s, 0, rows);
            Activation a = Activation.allocate(VecDotType.of(type), cols).set(xs[b]);
            for (int r = 0; r < rows; r++) {
                vector.dequantizeRow(r, row, 0);
                double definition = 0, magnitude = 0;
                for (int i = 0; i < cols; i++) {
                    double term = (double) row[i] * dequantized(a, i);
                    definition += term;
                    magnitude += Math.abs(term);
                }
                String where = "%s seed=%dL row %d of %d×%d, vector %d".formatted(type, seed, r, rows, cols, b);
                double tolerance = 1e-5 * magnitude + 1e-30;
                // Q8_1 carries each block's d·Σq rounded to f16 for the offset term, as ggml does: the
                // definition (Σ m·q·d) differs from it by up to about 2^-10 of each block's term |m·s| (2^-11
                // for rounding s, 2^-11 for the f16-rounded d it multiplies Σq with); bounded with 2x to spare
                double definitionTolerance = a.type() == VecDotType.Q8_1
                        ? tolerance + 0x1p-9 * offsetTerms(type, data, r * type.bytesFor(cols), a, cols) : tolerance;
                assertThat((double) v[r]).as(where + ": vector vs scalar").isCloseTo(s[r], org.assertj.core.data.Offset.offset(tolerance));
                assertThat((double) s[r]).as(where + ": scalar vs definition").isCloseTo(definition, org.assertj.core.data.Offset.offset(definitionTolerance));
                assertThat(batched[b][r]).as(where + ": matmul vs matvec").isEqualTo(v[r]);
            }
        }
    }

    /** Σ over blocks of |m·s|: the affine types' offset terms, whose f16-rounded s bounds the definition's gap. */
    private static double offsetTerms(GgmlType type, MemorySegment data, long rowOffset, Activation a, int cols) {
        double sum = 0;
        for (int b = 0; b < cols / 32; b++) {
            float m = Float.float16ToFloat(data.get(I16, rowOffset + type.typeSize() * b + 2));
            sum += Math.abs((double) m * a.sums[b]);
        }
        return sum;
    }

    /** The value the kernel multiplies with: the activation as ggml's vec_dot_type holds it. */
    private static double dequantized(Activation a, int i) {
        return switch (a.type()) {
            case F32, F16, BF16 -> a.values[i];
            case Q8_0, Q8_1, Q8_K -> (double) a.values[i] * a.scales[i / a.type().blockSize()];
        };
    }

    private static short randomScale(Random rnd) {
        return Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01));
    }

    public static float[] gaussian(Random rnd, int n) {
        float[] v = new float[n];
        float scale = (float) Math.exp(rnd.nextGaussian());
        for (int i = 0; i < n; i++) {
            v[i] = (float) rnd.nextGaussian() * scale;
        }
        if (n > 3) {
            v[rnd.nextInt(n)] *= 20; // an outlier, as real activations have
        }
        return v;
    }
}
