package dev.lazarus.kt.tensor;

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
 * The vectorized Q6_K kernels (f32 and int16 products) against ggml's vec_dot_q6_K_q8_K order stated one value at a
 * time ({@link GgmlKQuantKernels#q6k}): equal bit for bit through every {@link RowKernel} entry point, on encoded
 * weights, on raw random blocks, and on extreme blocks (every code 0 or 63, scales -128 or 127, every activation
 * quant -128 or 127 with one sign per super-block) where a lane's integer sum passes 2^24 and the int16 kernel's
 * short sums reach their bound of ±32256.
 */
class Q6KKernelTest {

    enum Data { ENCODED, RAW, EXTREME }

    static Stream<Arguments> cases() {
        return Stream.of("f32", "int16")
                .flatMap(kernel -> Arrays.stream(Data.values()).map(data -> Arguments.of(kernel, data)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void vectorFormRoundsExactlyAsGgmlOrder(String kernelName, Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        RowKernel kernel = kernelName.equals("int16") ? Q6KInt16Kernel.INSTANCE : Q6KKernel.INSTANCE;
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        MemorySegment w = MemorySegment.ofArray(weights(data, rnd, rows, cols));
        RowKernelContract.assertBitIdentical(kernel, GgmlKQuantKernels::q6k, w, GgmlType.Q6_K.bytesFor(cols), rows,
                cols, () -> activation(data, rnd, cols), "seed=%dL %s".formatted(seed, data));
    }

    private static byte[] weights(Data data, Random rnd, int rows, int cols) {
        if (data == Data.ENCODED) {
            return GgmlCodec.encode(GgmlType.Q6_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        byte[] bytes = new byte[(int) GgmlType.Q6_K.bytesFor((long) rows * cols)];
        rnd.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        for (int blk = 0; blk < bytes.length; blk += 210) {
            if (data == Data.EXTREME) {
                Arrays.fill(bytes, blk, blk + 192, (byte) (rnd.nextBoolean() ? 0 : -1));
                Arrays.fill(bytes, blk + 192, blk + 208, (byte) (rnd.nextBoolean() ? -128 : 127));
            }
            s.set(Layouts.I16, blk + 208, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
        }
        return bytes;
    }

    /** Extreme: raw quants, every one -128 (which quantizing never gives) or 127, one per super-block. */
    private static Activation activation(Data data, Random rnd, int cols) {
        if (data != Data.EXTREME) {
            return Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
        }
        byte[] quants = new byte[cols];
        float[] scales = new float[cols / 256];
        for (int b = 0; b < scales.length; b++) {
            Arrays.fill(quants, 256 * b, 256 * b + 256, (byte) (rnd.nextBoolean() ? -128 : 127));
            scales[b] = (float) Math.abs(rnd.nextGaussian()) * 0.01f;
        }
        return Activation.ofQ8K(quants, scales);
    }
}
