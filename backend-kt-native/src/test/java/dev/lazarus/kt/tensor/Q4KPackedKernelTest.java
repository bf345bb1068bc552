package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Packed Q4_K ({@link Q4KPacked}; the RAM tier's experts, dense matrices with {@code lazarus.kt.repack-dense})
 * against the kernels on ggml's blocks: every product equal bit for bit to llama-server's repacked GEMV order (and
 * its GEMM order for dense batches of four), on encoded weights and on raw
 * random blocks (all-ones quants and scales of 63 included); the layout unpacks to the original bytes and
 * dequantizes as ggml does.
 */
class Q4KPackedKernelTest {

    @ParameterizedTest
    @CsvSource({"false, false", "true, false", "false, true", "true, true"})
    void packedMatrixComputesExactlyAsGgmlLayout(boolean rawBlocks, boolean dense) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 8 * (1 + rnd.nextInt(3));
        int cols = 256 * (1 + rnd.nextInt(4));
        byte[] bytes = rawBlocks ? rawBlocks(rnd, rows, cols)
                : GgmlCodec.encode(GgmlType.Q4_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        MemorySegment w = MemorySegment.ofArray(bytes);
        long rowBytes = GgmlType.Q4_K.bytesFor(cols);
        String where = "seed=%dL %d×%d %s".formatted(seed, rows, cols, dense ? "dense" : "expert");
        try (Arena arena = Arena.ofConfined()) {
            // dense: batches of four in llama-server's GEMM order; expert: every vector in the GEMV order
            WeightMatrix packed = dense ? WeightMatrices.repacked(GgmlType.Q4_K, w, rows, cols, arena)
                    : WeightMatrices.copiedExpert(GgmlType.Q4_K, w, rows, cols, true, arena);
            WeightMatrix inPlace = dense ? WeightMatrices.of(GgmlType.Q4_K, w, rows, cols)
                    : WeightMatrices.expert(GgmlType.Q4_K, w, rows, cols);
            Activation[] xs = new Activation[2 * RowKernel.GROUP + 1];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
            }
            // decode: a row range from an odd start (rows in pairs, an odd one at the end)
            int start = rnd.nextInt(rows);
            float[] out = new float[rows];
            packed.matvec(xs[0], out, start, rows);
            for (int r = start; r < rows; r++) {
                assertThat(out[r]).as(where + " row %d of range %d..", r, start)
                        .isEqualTo(GgmlKQuantKernels.q4kRepacked(w, r * rowBytes, xs[0], cols));
            }
            // prefill: four activations per quant conversion, then the last one alone
            float[][] outs = new float[xs.length][rows], reference = new float[xs.length][rows];
            packed.matmul(xs, outs, 0, rows);
            inPlace.matmul(xs, reference, 0, rows);
            for (int i = 0; i < xs.length; i++) {
                assertThat(outs[i]).as(where + " batch vector " + i).isEqualTo(reference[i]);
                float expected = dense && i < 2 * RowKernel.GROUP
                        ? GgmlKQuantKernels.q4kRepackedGemm(w, (rows - 1) * rowBytes, xs[i], cols)
                        : GgmlKQuantKernels.q4kRepacked(w, (rows - 1) * rowBytes, xs[i], cols);
                assertThat(outs[i][rows - 1]).as(where + " batch vector " + i).isEqualTo(expected);
            }
            float[] row = new float[cols], decoded = new float[cols];
            int r = rnd.nextInt(rows);
            packed.dequantizeRow(r, row, 0);
            inPlace.dequantizeRow(r, decoded, 0);
            assertThat(row).as(where + " dequantized row " + r).isEqualTo(decoded);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void layoutUnpacksToTheOriginalBlocks(boolean rawBlocks) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 8, cols = 512;
        byte[] bytes = rawBlocks ? rawBlocks(rnd, rows, cols)
                : GgmlCodec.encode(GgmlType.Q4_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment packed = Q4KPacked.pack(MemorySegment.ofArray(bytes), rows, cols, arena);
            assertThat(packed.address() % 64).isZero();
            byte[] back = new byte[bytes.length];
            for (int g = 0; g < rows * cols / 256; g++) {
                Q4KPacked.unpack(packed, Q4KPacked.headers(rows, cols), g, MemorySegment.ofArray(back), 144L * g);
            }
            assertThat(back).as("seed=%dL", seed).isEqualTo(bytes);
        }
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
}
