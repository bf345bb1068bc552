package dev.lazarus.kt.quant.legacy;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.tensor.Activation;
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
 * The vectorized Q4_0, Q4_1, Q5_0 and Q5_1 kernels against ggml's AVX2 order stated one value at a time
 * ({@link LegacyQuantKernels#ggmlOrder}): equal bit for bit through every {@link RowKernel} entry point, on encoded
 * weights, raw random blocks and extreme blocks (every code and fifth bit 0 or all ones, activations at ±127); and
 * {@link Q4_0RepackedKernel} against {@link LegacyQuantKernels#q4_0Repacked} on the same data.
 */
class LegacyVectorKernelTest {

    enum Data { ENCODED, RAW, EXTREME }

    static Stream<Arguments> cases() {
        return Stream.of(GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1)
                .flatMap(type -> Arrays.stream(Data.values()).map(data -> Arguments.of(type, data)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void vectorFormRoundsExactlyAsGgmlOrder(GgmlType type, Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 32 * (1 + rnd.nextInt(40));
        MemorySegment w = MemorySegment.ofArray(weights(type, data, rnd, rows, cols));
        VecDotType act = VecDotType.of(type);
        RowKernelContract.assertBitIdentical(LegacyVectorKernel.of(type), LegacyQuantKernels.ggmlOrder(type), w,
                type.bytesFor(cols), rows, cols, () -> activation(act, data, rnd, cols),
                "seed=%dL %s".formatted(seed, data));
    }

    /** Q4_0 as llama-server runs the matrices it repacks, against its one-value-at-a-time statement. */
    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.EnumSource(Data.class)
    void repackedQ4_0RoundsExactlyAsLlamaServersRepackedOrder(Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 32 * (1 + rnd.nextInt(40));
        MemorySegment w = MemorySegment.ofArray(weights(GgmlType.Q4_0, data, rnd, rows, cols));
        RowKernelContract.assertBitIdentical(Q4_0RepackedKernel.INSTANCE, LegacyQuantKernels::q4_0Repacked, w,
                GgmlType.Q4_0.bytesFor(cols), rows, cols, () -> activation(VecDotType.Q8_0, data, rnd, cols),
                "seed=%dL %s".formatted(seed, data));
    }

    private static byte[] weights(GgmlType type, Data data, Random rnd, int rows, int cols) {
        if (data == Data.ENCODED) {
            return GgmlCodec.encode(type, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        byte[] bytes = new byte[(int) type.bytesFor((long) rows * cols)];
        rnd.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        boolean affine = type == GgmlType.Q4_1 || type == GgmlType.Q5_1;
        int header = affine ? 4 : 2;
        for (int blk = 0; blk < bytes.length; blk += type.typeSize()) {
            if (data == Data.EXTREME) {
                Arrays.fill(bytes, blk + header, blk + type.typeSize(), (byte) (rnd.nextBoolean() ? 0 : -1));
            }
            s.set(Layouts.I16, blk, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            if (affine) {
                s.set(Layouts.I16, blk + 2, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            }
        }
        return bytes;
    }

    /** Extreme: every value ±1 with one sign per block, so that every quant is ±127. */
    private static Activation activation(VecDotType type, Data data, Random rnd, int cols) {
        float[] v = KernelEquivalenceTest.gaussian(rnd, cols);
        if (data == Data.EXTREME) {
            for (int b = 0; b < cols / 32; b++) {
                Arrays.fill(v, 32 * b, 32 * b + 32, rnd.nextBoolean() ? 1f : -1f);
            }
        }
        return Activation.allocate(type, cols).set(v);
    }
}
