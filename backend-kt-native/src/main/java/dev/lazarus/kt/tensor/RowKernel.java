package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;

/** One weight type's dot product of a stored row with an activation of the type's {@link VecDotType}. */
interface RowKernel {

    /** Rows computed together by {@link #dot4}. */
    int GROUP = 4;

    /** Σ row·x over {@code cols} values of the row starting at byte {@code offset} of {@code w}. */
    float dot(MemorySegment w, long offset, Activation x, int cols);

    /**
     * out[at + i] = {@link #dot} of the row at {@code offset + i·stride}, for i < {@link #GROUP}. A kernel
     * overrides this to load each activation vector once for all the rows (and keep several
     * independent sums in flight); the result of each row must stay bit-identical to {@link #dot}.
     */
    default void dot4(MemorySegment w, long offset, long stride, Activation x, int cols, float[] out, int at) {
        for (int i = 0; i < GROUP; i++) {
            out[at + i] = dot(w, offset + i * stride, x, cols);
        }
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
