package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vectorized Q6_K kernel against ggml's vec_dot_q6_K_q8_K order stated one value at a time
 * ({@link GgmlKQuantKernels#q6k}): equal bit for bit, on encoded weights and on raw random blocks (scales
 * of -128 and the extreme quants included, where a lane's integer sum passes 2^24).
 */
class Q6KKernelTest {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void vectorFormRoundsExactlyAsGgmlOrder(boolean rawBlocks) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 256 * (1 + rnd.nextInt(4));
        byte[] bytes;
        if (rawBlocks) {
            bytes = new byte[(int) GgmlType.Q6_K.bytesFor((long) rows * cols)];
            rnd.nextBytes(bytes);
            MemorySegment s = MemorySegment.ofArray(bytes);
            for (long blk = 0; blk < bytes.length; blk += 210) {
                if (rnd.nextInt(4) == 0) { // extreme quants (0 or 63) and scales of -128 throughout
                    java.util.Arrays.fill(bytes, (int) blk, (int) blk + 192, (byte) (rnd.nextBoolean() ? 0 : -1));
                    java.util.Arrays.fill(bytes, (int) blk + 192, (int) blk + 208, (byte) -128);
                }
                s.set(Layouts.I16, blk + 208, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            }
        } else {
            bytes = GgmlCodec.encode(GgmlType.Q6_K, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        MemorySegment w = MemorySegment.ofArray(bytes);
        for (int r = 0; r < rows; r++) {
            long offset = r * GgmlType.Q6_K.bytesFor(cols);
            Activation x = Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
            assertThat(Q6KKernel.INSTANCE.dot(w, offset, x, cols)).as("seed=%dL row %d of %d×%d", seed, r, rows, cols)
                    .isEqualTo(GgmlKQuantKernels.q6k(w, offset, x, cols));
            float[] range = new float[rows];
            long rowBytes = GgmlType.Q6_K.bytesFor(cols);
            Q6KKernel.INSTANCE.dotRows(w, rowBytes, x, cols, range, r, rows);
            for (int q = r; q < rows; q++) {
                assertThat(range[q]).as("seed=%dL rows %d..%d, row %d", seed, r, rows, q)
                        .isEqualTo(GgmlKQuantKernels.q6k(w, q * rowBytes, x, cols));
            }
            Activation[] four = new Activation[RowKernel.GROUP + 1];
            four[0] = x;
            for (int i = 1; i < four.length; i++) {
                four[i] = Activation.allocate(VecDotType.Q8_K, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
            }
            float[][] outs = new float[four.length][rows];
            Q6KKernel.INSTANCE.dotVectors4(w, offset, four, 1, cols, outs, r);
            for (int i = 1; i < four.length; i++) {
                assertThat(outs[i][r]).as("seed=%dL row %d of %d×%d, four activations, activation %d", seed, r, rows, cols, i)
                        .isEqualTo(GgmlKQuantKernels.q6k(w, offset, four[i], cols));
            }
        }
    }
}
