package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;

/** One weight type's dot product of a stored row with an activation of the type's {@link VecDotType}. */
interface RowKernel {

    /** Activations computed together by {@link #dotVectors4}. */
    int GROUP = 4;

    /** Σ row·x over {@code cols} values of the row starting at byte {@code offset} of {@code w}. */
    float dot(MemorySegment w, long offset, Activation x, int cols);

    /**
     * out[row] and out[row + 1]: the {@link #dot}s of the rows at {@code offset} and {@code offset + rowBytes}
     * (the decode path takes rows in pairs, so that a kernel may share the activation's loads and reductions);
     * each must stay bit-identical to {@link #dot}.
     */
    default void dot2(MemorySegment w, long offset, long rowBytes, Activation x, int cols, float[] out, int row) {
        out[row] = dot(w, offset, x, cols);
        out[row + 1] = dot(w, offset + rowBytes, x, cols);
    }

    /**
     * outs[from + i][row] = {@link #dot} of the row at {@code offset} with xs[from + i], for i <
     * {@link #GROUP}: the batched (prefill) form, which widens each weight chunk once for four
     * activations. Each product must stay bit-identical to {@link #dot}.
     */
    default void dotVectors4(MemorySegment w, long offset, Activation[] xs, int from, int cols, float[][] outs, int row) {
        for (int i = 0; i < GROUP; i++) {
            outs[from + i][row] = dot(w, offset, xs[from + i], cols);
        }
    }
}
