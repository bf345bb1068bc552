package dev.lazarus.kt.quant.q4k;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlKQuantKernels;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vectorized repacked-Q4_K kernels against llama-server's GEMV and GEMM orders stated one value at a
 * time ({@link GgmlKQuantKernels}): equal bit for bit, on encoded weights and on raw random blocks (all-ones
 * quants and 6-bit scales of 63 included, whose scaled sums pass 2^24); decode's int16 form on ggml's blocks
 * ({@link Q4KInt16InPlaceKernel}, decode's pairs of rows and prefill's four activations in both orders) also against
 * raw int8 activations (-128 and 127 included).
 */
class Q4KRepackedKernelTest {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void vectorFormsRoundExactlyAsGgmlOrder(boolean rawBlocks) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        byte[] bytes;
        if (rawBlocks) {
            bytes = new byte[(int) GgmlType.Q4_K.bytesFor((long) rows * cols)];
            rnd.nextBytes(bytes);
            MemorySegment s = MemorySegment.ofArray(bytes);
            for (long blk = 0; blk < bytes.length; blk += 144) {
                s.set(Layouts.I16, blk, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
                s.set(Layouts.I16, blk + 2, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
                if (rnd.nextInt(4) == 0) {
                    java.util.Arrays.fill(bytes, (int) blk + 4, (int) blk + 144, (byte) -1); // largest scales and quants
                }
            }
        } else {
            bytes = GgmlCodec.encode(GgmlType.Q4_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        MemorySegment w = MemorySegment.ofArray(bytes);
        for (int r = 0; r < rows; r++) {
            long offset = r * GgmlType.Q4_K.bytesFor(cols);
            Activation x = Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
            String where = "seed=%dL row %d of %d×%d".formatted(seed, r, rows, cols);
            assertThat(Q4KRepackedKernel.GEMV.dot(w, offset, x, cols)).as(where + " GEMV")
                    .isEqualTo(GgmlKQuantKernels.q4kRepacked(w, offset, x, cols));
            assertThat(Q4KRepackedKernel.GEMM.dot(w, offset, x, cols)).as(where + " GEMM")
                    .isEqualTo(GgmlKQuantKernels.q4kRepackedGemm(w, offset, x, cols));
            // the decode path: rows r.. in pairs (and an odd one at the end)
            float[] range = new float[rows];
            long rowBytes = GgmlType.Q4_K.bytesFor(cols);
            Q4KRepackedKernel.GEMV.dotRows(w, rowBytes, x, cols, range, r, rows);
            for (int q = r; q < rows; q++) {
                assertThat(range[q]).as(where + " GEMV of rows %d..%d, row %d", r, rows, q)
                        .isEqualTo(GgmlKQuantKernels.q4kRepacked(w, q * rowBytes, x, cols));
            }
            Activation raw = Q4KPackedKernelTest.rawActivation(rnd, cols);
            for (Activation y : new Activation[] {x, raw}) {
                float[] int16 = new float[rows];
                Q4KInt16InPlaceKernel.INSTANCE.dotRows(w, rowBytes, y, cols, int16, r, rows);
                for (int q = r; q < rows; q++) {
                    assertThat(int16[q]).as(where + " int16 GEMV of rows %d..%d, row %d%s", r, rows, q, y == raw ? " raw" : "")
                            .isEqualTo(GgmlKQuantKernels.q4kRepacked(w, q * rowBytes, y, cols));
                }
            }
            Activation[] four = new Activation[RowKernel.GROUP + 1];
            four[0] = x;
            for (int i = 1; i < four.length; i++) {
                four[i] = Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
            }
            float[][] gemv = new float[four.length][rows], gemm = new float[four.length][rows];
            Q4KRepackedKernel.GEMV.dotVectors4(w, offset, four, 1, cols, gemv, r);
            Q4KRepackedKernel.GEMM.dotVectors4(w, offset, four, 1, cols, gemm, r);
            for (int i = 1; i < four.length; i++) {
                assertThat(gemv[i][r]).as(where + " GEMV of four, activation " + i)
                        .isEqualTo(GgmlKQuantKernels.q4kRepacked(w, offset, four[i], cols));
                assertThat(gemm[i][r]).as(where + " GEMM of four, activation " + i)
                        .isEqualTo(GgmlKQuantKernels.q4kRepackedGemm(w, offset, four[i], cols));
            }
            // prefill's int16 forms, four activations among them raw int8 ones (-128 and 127 included)
            four[2] = raw;
            four[4] = Q4KPackedKernelTest.rawActivation(rnd, cols);
            float[][] gemv16 = new float[four.length][rows], gemm16 = new float[four.length][rows];
            Q4KInt16InPlaceKernel.INSTANCE.dotVectors4(w, offset, four, 1, cols, gemv16, r);
            Q4KInt16InPlaceKernel.GEMM.dotVectors4(w, offset, four, 1, cols, gemm16, r);
            for (int i = 1; i < four.length; i++) {
                assertThat(gemv16[i][r]).as(where + " int16 GEMV of four, activation " + i)
                        .isEqualTo(GgmlKQuantKernels.q4kRepacked(w, offset, four[i], cols));
                assertThat(gemm16[i][r]).as(where + " int16 GEMM of four, activation " + i)
                        .isEqualTo(GgmlKQuantKernels.q4kRepackedGemm(w, offset, four[i], cols));
            }
            assertThat(Q4KInt16InPlaceKernel.GEMM.dot(w, offset, x, cols)).as(where + " int16 GEMM of one")
                    .isEqualTo(GgmlKQuantKernels.q4kRepackedGemm(w, offset, x, cols));
        }
    }

    @Test
    void scalesAndMinsUnpackAsGgml() {
        Random rnd = new Random();
        for (int t = 0; t < 1000; t++) {
            byte[] bytes = new byte[12];
            rnd.nextBytes(bytes);
            MemorySegment s = MemorySegment.ofArray(bytes);
            long packed = s.get(Layouts.I64, 0);
            int packedHigh = s.get(Layouts.I32, 8);
            for (int j = 0; j < 8; j++) {
                assertThat((int) (Layouts.kScales(packed, packedHigh) >>> 8 * j) & 0xFF).as("scale %d of %s", j, java.util.Arrays.toString(bytes))
                        .isEqualTo(Layouts.kScale(s, 0, j));
                assertThat((int) (Layouts.kMins(packed, packedHigh) >>> 8 * j) & 0xFF).as("min %d of %s", j, java.util.Arrays.toString(bytes))
                        .isEqualTo(Layouts.kMin(s, 0, j));
            }
        }
    }
}
