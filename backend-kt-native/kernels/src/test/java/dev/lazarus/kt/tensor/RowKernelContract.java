package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/**
 * A vector {@link RowKernel} against the scalar statement of the order it must keep, through every entry point:
 * {@link RowKernel#dot} of each row, {@link RowKernel#dotRows} over the ranges r..rows (odd and even row counts as r
 * runs) and {@link RowKernel#dotVectors4} at an offset into the activation array. Bit for bit.
 */
public final class RowKernelContract {

    private RowKernelContract() {
    }

    /** {@code what}: the seed and data, for the failure message; {@code activations} a fresh activation per call. */
    public static void assertBitIdentical(RowKernel kernel, RowKernel reference, MemorySegment w, long rowBytes, int rows,
                                   int cols, Supplier<Activation> activations, String what) {
        for (int r = 0; r < rows; r++) {
            long offset = r * rowBytes;
            Activation x = activations.get();
            String at = "%s row %d of %d×%d".formatted(what, r, rows, cols);
            assertThat(kernel.dot(w, offset, x, cols)).as(at).isEqualTo(reference.dot(w, offset, x, cols));
            float[] range = new float[rows];
            kernel.dotRows(w, rowBytes, x, cols, range, r, rows);
            for (int q = r; q < rows; q++) {
                assertThat(range[q]).as("%s, rows %d..%d, row %d", at, r, rows, q)
                        .isEqualTo(reference.dot(w, q * rowBytes, x, cols));
            }
            Activation[] five = new Activation[RowKernel.GROUP + 1];
            five[0] = x;
            for (int i = 1; i < five.length; i++) {
                five[i] = activations.get();
            }
            float[][] outs = new float[five.length][rows];
            kernel.dotVectors4(w, offset, five, 1, cols, outs, r);
            assertThat(outs[0][r]).as("%s: activation 0 is not in the group", at).isZero();
            for (int i = 1; i < five.length; i++) {
                assertThat(outs[i][r]).as("%s, four activations, activation %d", at, i)
                        .isEqualTo(reference.dot(w, offset, five[i], cols));
            }
        }
    }
}
