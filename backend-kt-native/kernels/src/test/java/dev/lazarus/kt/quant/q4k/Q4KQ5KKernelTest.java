package dev.lazarus.kt.quant.q4k;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.matrix.TiledKQuantKernelTest;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlKQuantKernels;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.RowKernelContract;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The vectorized Q5_K and in-place Q4_K kernels against ggml's vec_dot orders stated one value at a time
 * ({@link GgmlKQuantKernels#q5kInPlace}, {@link GgmlKQuantKernels#q4kInPlace}), and in the tiled order against
 * {@link TiledKQuantKernelTest#tiledOrder}: equal bit for bit through every
 * {@link RowKernel} entry point, on encoded weights, on raw random blocks, and on extreme blocks (all codes and
 * fifth bits 0 or all ones, scales and mins 63, activations at ±127) where ggml's lanes reach their largest sums.
 */
class Q4KQ5KKernelTest {

    enum Data { ENCODED, RAW, EXTREME }

    static Stream<Arguments> cases() {
        return Stream.of(Q4KQ5KKernel.Order.values()).flatMap(order -> Stream.of(GgmlType.Q4_K, GgmlType.Q5_K)
                .flatMap(type -> Arrays.stream(Data.values()).map(data -> Arguments.of(type, order, data))));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void vectorFormRoundsExactlyAsGgmlOrder(GgmlType type, Q4KQ5KKernel.Order order, Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        boolean five = type == GgmlType.Q5_K, tiled = order == Q4KQ5KKernel.Order.TILED;
        RowKernel kernel = tiled ? (five ? Q4KQ5KKernel.Q5_K_TILED : Q4KQ5KKernel.Q4_K_TILED)
                : (five ? Q4KQ5KKernel.Q5_K : Q4KQ5KKernel.Q4_K_IN_PLACE);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        MemorySegment w = MemorySegment.ofArray(weights(type, data, rnd, rows, cols));
        RowKernel reference = tiled ? (seg, offset, x, n) -> TiledKQuantKernelTest.tiledOrder(type, seg, offset, x, n)
                : five ? GgmlKQuantKernels::q5kInPlace : GgmlKQuantKernels::q4kInPlace;
        RowKernelContract.assertBitIdentical(kernel, reference, w, type.bytesFor(cols), rows, cols,
                () -> activation(data, rnd, cols), "seed=%dL %s %s".formatted(seed, order, data));
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
