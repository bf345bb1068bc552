package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vectorized repacked-Q4_K kernels against llama-server's GEMV and GEMM orders stated one value at a
 * time ({@link GgmlKQuantKernels}): equal bit for bit, on encoded weights and on raw random blocks (all-ones
 * quants and 6-bit scales of 63 included, whose scaled sums pass 2^24).
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
        }
    }
}
