package dev.lazarus.kt.quant.q6k;

import dev.lazarus.kt.tensor.Q8KShortOrderTest;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.matrix.TiledKQuantKernelTest;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlKQuantKernels;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.RowKernelContract;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The vectorized Q6_K kernels (int16 products on ggml's blocks and on the RAM tier's {@link Q6KPacked}; the f32 one is a
 * bench-only alternative, JavaTwins)
 * against ggml's vec_dot_q6_K_q8_K order stated one value at a time ({@link GgmlKQuantKernels#q6k}), and the int16
 * kernels of batches of eight or more ({@link Q6KInt16Kernel#TILED}, {@link Q6KPackedKernel#tiled}) against
 * llama-server's tiled order
 * ({@link TiledKQuantKernelTest#tiledOrder}): equal bit for bit through every {@link RowKernel} entry point, on encoded
 * weights, on raw random blocks, and on extreme blocks (every code 0 or 63, scales -128 or 127, every activation
 * quant -128 or 127 with one sign per super-block) where a lane's integer sum passes 2^24 and the int16 kernel's
 * short sums reach their bound of ±32256.
 */
class Q6KKernelTest {

    enum Data { ENCODED, RAW, EXTREME }

    static Stream<Arguments> cases() {
        return Stream.of("int16", "packed", "tiled", "packed-tiled")
                .flatMap(kernel -> Arrays.stream(Data.values()).map(data -> Arguments.of(kernel, data)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void vectorFormRoundsExactlyAsGgmlOrder(String kernelName, Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        MemorySegment w = MemorySegment.ofArray(weights(data, rnd, rows, cols));
        String what = "seed=%dL %s".formatted(seed, data);
        if (kernelName.equals("packed")) {
            // the packed rows against the reference on the ggml blocks they came from (the kernel offset of row r is
            // r·256·nb; its super-blocks lie interleaved with its pair's)
            RowKernel reference = (seg, offset, x, n) -> GgmlKQuantKernels.q6k(w, offset / 256 * 210, x, n);
            for (int group : new int[] {2, 1, 4}) { // rows in pairs (the default), row after row, in fours
                RowGroups groups = new RowGroups(group, rows, cols / 256);
                MemorySegment packed = Q6KPacked.pack(w, groups, Arena.ofAuto());
                RowKernelContract.assertBitIdentical(new Q6KPackedKernel(groups), reference, packed,
                        (cols / 256) * Q6KPacked.CODE_BYTES, rows, cols, () -> activation(data, rnd, cols), what + " groups of " + group);
            }
            return;
        }
        if (kernelName.equals("packed-tiled")) {
            RowKernel reference = (seg, offset, x, n) -> TiledKQuantKernelTest.tiledOrder(GgmlType.Q6_K, w, offset / 256 * 210, x, n);
            for (int group : new int[] {2, 1, 4}) {
                RowGroups groups = new RowGroups(group, rows, cols / 256);
                MemorySegment packed = Q6KPacked.pack(w, groups, Arena.ofAuto());
                RowKernelContract.assertBitIdentical(Q6KPackedKernel.tiled(groups), reference, packed,
                        (cols / 256) * Q6KPacked.CODE_BYTES, rows, cols, () -> activation(data, rnd, cols), what + " groups of " + group);
            }
            return;
        }
        if (kernelName.equals("tiled")) {
            // batches of eight or more: llama-server's tiled order, four activations at a time in int16 products
            RowKernelContract.assertBitIdentical(Q6KInt16Kernel.TILED,
                    (seg, offset, x, n) -> TiledKQuantKernelTest.tiledOrder(GgmlType.Q6_K, seg, offset, x, n), w,
                    GgmlType.Q6_K.bytesFor(cols), rows, cols, () -> activation(data, rnd, cols), what);
            return;
        }
        RowKernelContract.assertBitIdentical(Q6KInt16Kernel.INSTANCE, GgmlKQuantKernels::q6k, w, GgmlType.Q6_K.bytesFor(cols), rows,
                cols, () -> activation(data, rnd, cols), what);
    }

    /**
     * The RAM tier's packed matrix ({@link WeightMatrices#copiedExpert}): the budgeted size, every row range (odd and
     * even row counts, odd starts) and prefill batches (the tiled order and the row-by-row one) as the in-place matrix
     * computes them, and rows that dequantize as ggml's blocks do.
     */
    @ParameterizedTest
    @EnumSource(Data.class)
    void ramTierPacksQ6KExactly(Data data) {
        // the packed layout is the Java kernels' (where the native kernels load, the RAM tier keeps ggml's blocks)
        String previous = System.setProperty(KernelConfig.KERNELS_PROPERTY, "java");
        try {
            ramTierPacksQ6KExactlyForJavaKernels(data);
        } finally {
            if (previous == null) {
                System.clearProperty(KernelConfig.KERNELS_PROPERTY);
            } else {
                System.setProperty(KernelConfig.KERNELS_PROPERTY, previous);
            }
        }
    }

    private static void ramTierPacksQ6KExactlyForJavaKernels(Data data) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        MemorySegment w = MemorySegment.ofArray(weights(data, rnd, rows, cols));
        String where = "seed=%dL %s %d×%d".formatted(seed, data, rows, cols);
        try (Arena arena = Arena.ofConfined()) {
            long[] allocated = {0};
            SegmentAllocator counting = (size, alignment) -> {
                allocated[0] += size;
                return arena.allocate(size, alignment);
            };
            WeightMatrix packed = WeightMatrices.defaults().copiedExpert(GgmlType.Q6_K, w, rows, cols, true, counting);
            WeightMatrix inPlace = WeightMatrices.defaults().expert(GgmlType.Q6_K, w, rows, cols);
            assertThat(allocated[0]).as(where + " bytes held")
                    .isEqualTo(WeightMatrices.defaults().copiedExpertBytes(GgmlType.Q6_K, w.byteSize(), rows, cols, true))
                    .isEqualTo((long) rows * (cols / 256) * 276);
            Activation[] xs = new Activation[2 * RowKernel.GROUP + 1];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = activation(data, rnd, cols);
            }
            // every row range, odd starts and ends included (rows in pairs, one without its pair alone)
            for (int start = 0; start < rows; start++) {
                for (int end = start + 1; end <= rows; end++) {
                    float[] out = new float[rows], expected = new float[rows];
                    packed.matvec(xs[0], out, start, end);
                    inPlace.matvec(xs[0], expected, start, end);
                    assertThat(out).as("%s rows %d..%d", where, start, end).isEqualTo(expected);
                }
            }
            // a batch of nine (llama-server's tiled order) and one of five, from row 0 and from an odd row
            int from = rows < 2 ? 0 : 1 + 2 * rnd.nextInt(rows / 2);
            for (int count : new int[] {xs.length, RowKernel.GROUP + 1}) {
                Activation[] batch = Arrays.copyOf(xs, count);
                for (int start : new int[] {0, from}) {
                    float[][] outs = new float[count][rows], reference = new float[count][rows];
                    packed.matmul(batch, outs, start, rows);
                    inPlace.matmul(batch, reference, start, rows);
                    for (int i = 0; i < count; i++) {
                        assertThat(outs[i]).as("%s batch of %d, vector %d, rows %d..", where, count, i, start)
                                .isEqualTo(reference[i]);
                    }
                }
            }
            float[] row = new float[cols], decoded = new float[cols];
            for (int r = 0; r < rows; r++) {
                packed.dequantizeRow(r, row, 0);
                inPlace.dequantizeRow(r, decoded, 0);
                assertThat(row).as(where + " dequantized row " + r).isEqualTo(decoded);
            }
        }
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

    /** The Q6_K activation order as the kernels document it (a spot check), written as defined. */
    @Test
    void activationOrderIsTheKernelsLayout() {
        assertThat(Q6KInt16Kernel.ACTIVATION_ORDER.from(128 + 32 * 1 + 20)).isEqualTo(128 + 32 * 3 + 8);
        Q8KShortOrderTest.assertWrittenAsDefined(Q6KInt16Kernel.ACTIVATION_ORDER, System.nanoTime());
    }
}
