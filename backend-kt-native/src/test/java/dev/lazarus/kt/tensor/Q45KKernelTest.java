package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The vectorized Q5_K and in-place Q4_K kernels against ggml's vec_dot orders stated one value at a time
 * ({@link GgmlKQuantKernels#q5kInPlace}, {@link GgmlKQuantKernels#q4kInPlace}): equal bit for bit through every
 * {@link RowKernel} entry point, on encoded weights, on raw random blocks, and on extreme blocks (all codes and
 * fifth bits 0 or all ones, scales and mins 63, activations at ±127) where ggml's lanes reach their largest sums.
 */
class Q45KKernelTest {

    enum Data { ENCODED, RAW, EXTREME }

    static Stream<Arguments> cases() {
        return Stream.of(GgmlType.Q4_K, GgmlType.Q5_K)
                .flatMap(type -> Arrays.stream(Data.values()).map(data -> Arguments.of(type, data)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void vectorFormRoundsExactlyAsGgmlOrder(GgmlType type, Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        RowKernel kernel = type == GgmlType.Q5_K ? Q45KKernel.Q5_K : Q45KKernel.Q4_K_IN_PLACE;
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        long rowBytes = type.bytesFor(cols);
        MemorySegment w = MemorySegment.ofArray(weights(type, data, rnd, rows, cols));
        for (int r = 0; r < rows; r++) {
            long offset = r * rowBytes;
            Activation x = activation(data, rnd, cols);
            String at = "seed=%dL %s row %d of %d×%d".formatted(seed, data, r, rows, cols);
            assertThat(kernel.dot(w, offset, x, cols)).as(at).isEqualTo(reference(type, w, offset, x, cols));
            // the rows r.. in one range: odd and even counts as r runs
            float[] range = new float[rows];
            kernel.dotRows(w, rowBytes, x, cols, range, r, rows);
            for (int q = r; q < rows; q++) {
                assertThat(range[q]).as("%s, rows %d..%d, row %d", at, r, rows, q)
                        .isEqualTo(reference(type, w, q * rowBytes, x, cols));
            }
            Activation[] five = new Activation[RowKernel.GROUP + 1];
            five[0] = x;
            for (int i = 1; i < five.length; i++) {
                five[i] = activation(data, rnd, cols);
            }
            float[][] outs = new float[five.length][rows];
            kernel.dotVectors4(w, offset, five, 1, cols, outs, r);
            assertThat(outs[0][r]).as("%s: activation 0 is not in the group", at).isZero();
            for (int i = 1; i < five.length; i++) {
                assertThat(outs[i][r]).as("%s, four activations, activation %d", at, i)
                        .isEqualTo(reference(type, w, offset, five[i], cols));
            }
        }
    }

    private static float reference(GgmlType type, MemorySegment w, long offset, Activation x, int cols) {
        return type == GgmlType.Q5_K ? GgmlKQuantKernels.q5kInPlace(w, offset, x, cols)
                : GgmlKQuantKernels.q4kInPlace(w, offset, x, cols);
    }

    private static byte[] weights(GgmlType type, Data data, Random rnd, int rows, int cols) {
        if (data == Data.ENCODED) {
            return GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        byte[] bytes = new byte[(int) type.bytesFor((long) rows * cols)];
        rnd.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        for (int blk = 0; blk < bytes.length; blk += type.typeSize()) {
            if (data == Data.EXTREME) {
                // scales and mins all 63; every code (and fifth bit) of the block 0 or all ones
                Arrays.fill(bytes, blk + 4, blk + 16, (byte) -1);
                Arrays.fill(bytes, blk + 16, blk + type.typeSize(), (byte) (rnd.nextBoolean() ? 0 : -1));
            }
            s.set(Layouts.I16, blk, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            s.set(Layouts.I16, blk + 2, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
        }
        return bytes;
    }

    /** Extreme: every value ±1 with one sign per super-block, so that every quant is ±127. */
    private static Activation activation(Data data, Random rnd, int cols) {
        float[] v = KernelEquivalenceTest.gaussian(rnd, cols);
        if (data == Data.EXTREME) {
            for (int b = 0; b < cols / 256; b++) {
                Arrays.fill(v, 256 * b, 256 * b + 256, rnd.nextBoolean() ? 1f : -1f);
            }
        }
        return Activation.allocate(VecDotType.Q8_K, cols).set(v);
    }
}
