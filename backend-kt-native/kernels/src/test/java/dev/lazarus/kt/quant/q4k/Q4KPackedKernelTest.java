package dev.lazarus.kt.quant.q4k;

import dev.lazarus.kt.tensor.Q8KShortOrderTest;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlKQuantKernels;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Packed Q4_K ({@link Q4KPacked}; the RAM tier's experts) against the kernels on ggml's blocks: every product equal bit
 * for bit to llama-server's repacked GEMV order, in int16 products on 16-bit lanes (the nibble planes' f32 kernels
 * are bench-only alternatives, JavaTwins), over every row range of odd and even row counts (rows interleaved in pairs), on encoded weights and on raw random blocks (all-ones quants and scales of 63 included) against
 * quantized activations and raw int8 ones (-128 and 127 included); the layout unpacks to the original bytes and
 * dequantizes as ggml does. Fresh random data on each run (the seed is in every message).
 */
class Q4KPackedKernelTest {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void packedMatrixComputesExactlyAsGgmlLayout(boolean rawBlocks) {
        for (int group : new int[] {2, 1, 4}) { // rows in pairs (the default), row after row, in fours
            packedMatrixComputesExactlyAsGgmlLayout(rawBlocks, group);
        }
    }

    private static void packedMatrixComputesExactlyAsGgmlLayout(boolean rawBlocks, int group) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(24); // odd counts too: the last row a group of its own
        int cols = 256 * (1 + rnd.nextInt(4));
        byte[] bytes = rawBlocks ? rawBlocks(rnd, rows, cols)
                : GgmlCodec.encode(GgmlType.Q4_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        MemorySegment w = MemorySegment.ofArray(bytes);
        long rowBytes = GgmlType.Q4_K.bytesFor(cols);
        String where = "seed=%dL %d×%d in groups of %d".formatted(seed, rows, cols, group);
        try (Arena arena = Arena.ofConfined()) {
            // an expert: every vector in the GEMV order
            WeightMatrix packed = WeightMatrices.packedQ4K(w, rows, cols, arena, group);
            Activation[] xs = new Activation[2 * RowKernel.GROUP + 1];
            float[][] gemv = new float[xs.length][rows], expected = new float[xs.length][rows];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = rawBlocks && i % 2 == 1 ? rawActivation(rnd, cols)
                        : Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
                for (int r = 0; r < rows; r++) {
                    gemv[i][r] = GgmlKQuantKernels.q4kRepacked(w, r * rowBytes, xs[i], cols);
                    expected[i][r] = gemv[i][r];
                }
            }
            // decode: every row range, odd starts and ends included (rows in pairs, one without its pair alone)
            for (int start = 0; start < rows; start++) {
                for (int end = start + 1; end <= rows; end++) {
                    float[] out = new float[rows], inRange = new float[rows];
                    System.arraycopy(gemv[0], start, inRange, start, end - start);
                    packed.matvec(xs[0], out, start, end);
                    assertThat(out).as("%s rows %d..%d", where, start, end).isEqualTo(inRange);
                }
            }
            // prefill: four activations per quant conversion, then the last one alone; all rows, then from an odd one
            int from = rows < 2 ? 0 : 1 + 2 * rnd.nextInt(rows / 2);
            for (int start : new int[] {0, from}) {
                float[][] outs = new float[xs.length][rows];
                packed.matmul(xs, outs, start, rows);
                for (int i = 0; i < xs.length; i++) {
                    float[] inRange = new float[rows];
                    System.arraycopy(expected[i], start, inRange, start, rows - start);
                    assertThat(outs[i]).as("%s batch vector %d, rows %d..", where, i, start).isEqualTo(inRange);
                }
            }
            float[] row = new float[cols], decoded = new float[cols];
            for (int r = 0; r < rows; r++) {
                packed.dequantizeRow(r, row, 0);
                GgmlCodec.decode(GgmlType.Q4_K, w, r * rowBytes, decoded, 0, cols);
                assertThat(row).as(where + " dequantized row " + r).isEqualTo(decoded);
            }
        }
    }

    /**
     * The extremes of the int16 sums: every nibble 15 and every scale 63, against all -128 and all 127, packed and
     * in place ({@link Q4KInt16InPlaceKernel}).
     */
    @ParameterizedTest
    @ValueSource(ints = {-128, 127})
    void extremeBlocksStayExact(int quant) {
        int rows = 8, cols = 512;
        byte[] bytes = new byte[(int) GgmlType.Q4_K.bytesFor((long) rows * cols)];
        java.util.Arrays.fill(bytes, (byte) -1);
        MemorySegment w = MemorySegment.ofArray(bytes);
        for (long blk = 0; blk < bytes.length; blk += 144) {
            w.set(Layouts.I16, blk, Float.floatToFloat16(0.5f));
            w.set(Layouts.I16, blk + 2, Float.floatToFloat16(0.25f));
        }
        byte[] quants = new byte[cols];
        java.util.Arrays.fill(quants, (byte) quant);
        Activation x = Activation.ofQ8K(quants, new float[] {1f, 0.5f});
        long rowBytes = GgmlType.Q4_K.bytesFor(cols);
        try (Arena arena = Arena.ofConfined()) {
            WeightMatrix packed = WeightMatrices.packedQ4K(w, rows, cols, arena, 2);
            float[] out = new float[rows];
            packed.matvec(x, out, 0, rows);
            // four activations through the batched form, then two through the one-row form
            float[][] outs = new float[RowKernel.GROUP + 2][rows];
            packed.matmul(new Activation[] {x, x, x, x}, outs, 0, rows);
            packed.matmul(new Activation[] {x, x}, new float[][] {outs[4], outs[5]}, 0, rows);
            float expected = GgmlKQuantKernels.q4kRepacked(w, 0, x, cols);
            // Σ 63·15·q over 256 values per super-block, d·dy 0.5 then 0.25, less the mins' 63·q (dmin·dy 0.25, 0.125)
            assertThat((double) expected).isCloseTo(256.0 * 63 * quant * (15 * 0.75 - 0.375), within(256.0 * 63 * 128 * 1e-5));
            float[] inPlace = new float[rows];
            Q4KInt16InPlaceKernel.INSTANCE.dotRows(w, rowBytes, x, cols, inPlace, 0, rows);
            for (int r = 0; r < rows; r++) {
                assertThat(out[r]).as("row %d", r).isEqualTo(GgmlKQuantKernels.q4kRepacked(w, r * rowBytes, x, cols));
                assertThat(inPlace[r]).as("in place, row %d", r).isEqualTo(out[r]);
                for (float[] o : outs) {
                    assertThat(o[r]).as("batch row %d", r).isEqualTo(out[r]);
                }
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"false, NIBBLE_PLANES", "true, NIBBLE_PLANES", "false, SHORT_LANES", "true, SHORT_LANES"})
    void layoutUnpacksToTheOriginalBlocks(boolean rawBlocks, Q4KPacked.Order order) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9), nb = 1 + rnd.nextInt(3), cols = 256 * nb;
        byte[] bytes = rawBlocks ? rawBlocks(rnd, rows, cols)
                : GgmlCodec.encode(GgmlType.Q4_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        for (int group : new int[] {2, 1, 4}) {
            try (Arena arena = Arena.ofConfined()) {
                RowGroups groups = new RowGroups(group, rows, nb);
                MemorySegment packed = Q4KPacked.pack(MemorySegment.ofArray(bytes), groups, order, arena);
                assertThat(packed.address() % 64).isZero();
                assertThat(packed.byteSize()).isEqualTo(Q4KPacked.bytes(rows, cols)).isEqualTo(152L * rows * nb);
                byte[] back = new byte[bytes.length];
                for (int r = 0; r < rows; r++) {
                    for (int b = 0; b < nb; b++) {
                        Q4KPacked.unpack(packed, Q4KPacked.headers(rows, cols), groups.block(r, b), order,
                                MemorySegment.ofArray(back), 144L * (r * nb + b));
                    }
                }
                assertThat(back).as("seed=%dL %d×%d in groups of %d", seed, rows, cols, group).isEqualTo(bytes);
            }
        }
    }

    /** Raw int8 quants over the whole range, every fourth super-block all -128 or all 127. */
    static Activation rawActivation(Random rnd, int cols) {
        byte[] quants = new byte[cols];
        rnd.nextBytes(quants);
        float[] scales = new float[cols / 256];
        for (int b = 0; b < scales.length; b++) {
            scales[b] = (float) Math.abs(rnd.nextGaussian()) / 127;
            if (rnd.nextInt(4) == 0) {
                java.util.Arrays.fill(quants, 256 * b, 256 * b + 256, (byte) (rnd.nextBoolean() ? -128 : 127));
            }
        }
        return Activation.ofQ8K(quants, scales);
    }

    private static byte[] rawBlocks(Random rnd, int rows, int cols) {
        byte[] bytes = new byte[(int) GgmlType.Q4_K.bytesFor((long) rows * cols)];
        rnd.nextBytes(bytes);
        MemorySegment s = MemorySegment.ofArray(bytes);
        for (long blk = 0; blk < bytes.length; blk += 144) {
            s.set(Layouts.I16, blk, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            s.set(Layouts.I16, blk + 2, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            if (rnd.nextInt(4) == 0) {
                java.util.Arrays.fill(bytes, (int) blk + 4, (int) blk + 144, (byte) -1); // largest scales and quants
            }
        }
        return bytes;
    }

    /** The two Q4_K activation orders as the kernels document them (spot checks), each written as defined. */
    @Test
    void activationOrdersAreTheKernelsLayouts() {
        assertThat(Q4KInt16Kernel.ACTIVATION_ORDER.from(32 * (4 * 1 + 2) + 13)).isEqualTo(32 * 5 + 16 + 8 + 1);
        assertThat(Q4KInt16InPlaceKernel.ACTIVATION_ORDER.from(128 + 32 * 3 + 17)).isEqualTo(32 * (2 * 3 + 1) + 2 + 1);
        Q8KShortOrderTest.assertWrittenAsDefined(Q4KInt16Kernel.ACTIVATION_ORDER, System.nanoTime());
        Q8KShortOrderTest.assertWrittenAsDefined(Q4KInt16InPlaceKernel.ACTIVATION_ORDER, System.nanoTime());
    }
}
