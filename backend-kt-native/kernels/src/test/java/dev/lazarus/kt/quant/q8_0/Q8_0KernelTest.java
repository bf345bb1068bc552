package dev.lazarus.kt.quant.q8_0;

import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.quant.legacy.LegacyQuantKernels;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vectorized Q8_0 kernel against ggml's order stated one value at a time
 * ({@link LegacyQuantKernels#ggmlOrder}): equal bit for bit, single and batched, on encoded weights and
 * on raw random blocks (quants of -128 included).
 */
class Q8_0KernelTest {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void vectorFormRoundsExactlyAsGgmlOrder(boolean rawBlocks) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 32 * (1 + rnd.nextInt(40));
        byte[] bytes;
        if (rawBlocks) {
            bytes = new byte[(int) GgmlType.Q8_0.bytesFor((long) rows * cols)];
            rnd.nextBytes(bytes);
            MemorySegment s = MemorySegment.ofArray(bytes);
            for (long blk = 0; blk < bytes.length; blk += 34) {
                s.set(Layouts.I16, blk, Float.floatToFloat16((float) (rnd.nextGaussian() * 0.01)));
            }
        } else {
            bytes = GgmlCodec.encode(GgmlType.Q8_0, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        MemorySegment w = MemorySegment.ofArray(bytes);
        RowKernel reference = LegacyQuantKernels.ggmlOrder(GgmlType.Q8_0);
        Activation[] xs = new Activation[4];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = Activation.allocate(VecDotType.Q8_0, cols).set(KernelEquivalenceTest.gaussian(rnd, cols));
        }
        float[][] batched = new float[4][rows];
        for (int r = 0; r < rows; r++) {
            long offset = r * GgmlType.Q8_0.bytesFor(cols);
            Q8_0Kernel.INSTANCE.dotVectors4(w, offset, xs, 0, cols, batched, r);
            for (int i = 0; i < xs.length; i++) {
                float expected = reference.dot(w, offset, xs[i], cols);
                String where = "seed=%dL row %d of %d×%d, vector %d".formatted(seed, r, rows, cols, i);
                assertThat(Q8_0Kernel.INSTANCE.dot(w, offset, xs[i], cols)).as(where).isEqualTo(expected);
                assertThat(batched[i][r]).as(where + " batched").isEqualTo(expected);
            }
        }
    }

    /** Lane k of each block's eight holds values 4k..4k+3: value 4k + j at 8j + k. */
    @Test
    void activationOrderIsGgmlsLaneOrder() {
        float[] x = new float[64];
        for (int i = 0; i < 64; i++) {
            x[i] = i - 32;
        }
        Activation a = Activation.allocate(VecDotType.Q8_0, 64).set(x);
        float[] byLane = a.form(Q8_0Kernel.ACTIVATION_ORDER);
        for (int b = 0; b < 2; b++) {
            for (int i = 0; i < 32; i++) {
                assertThat(byLane[32 * b + 8 * (i % 4) + i / 4]).as("block %d value %d", b, i).isEqualTo(a.values[32 * b + i]);
            }
        }
    }
}
