package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;

/** One weight type's dot product of a stored row with an activation of the type's {@link VecDotType}. */
interface RowKernel {

    /** Activations computed together by {@link #dotVectors4}. */
    int GROUP = 4;

    /** Σ row·x over {@code cols} values of the row starting at byte {@code offset} of {@code w}. */
    float dot(MemorySegment w, long offset, Activation x, int cols);

    /**
     * out[r] = {@link #dot} of row r (at byte {@code r · rowBytes}) for r in [rowStart, rowEnd): the decode path,
     * one call per row range so that a kernel may take rows together (sharing the activation's loads and
     * reductions) and allocate its scratch once; each value must stay bit-identical to {@link #dot}.
     */
    default void dotRows(MemorySegment w, long rowBytes, Activation x, int cols, float[] out, int rowStart, int rowEnd) {
        for (int r = rowStart; r < rowEnd; r++) {
            out[r] = dot(w, r * rowBytes, x, cols);
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

    /**
     * outs[i][row] = {@link #dot} of the row at {@code offset} with xs[i] for i in [from, to), {@code from} a multiple
     * of {@link #GROUP}: a batch's vectors four at a time through {@link #dotVectors4}, the rest one by one, unless a
     * kernel shares more than that among them (a decoded super-block). Each product bit-identical to {@link #dot}.
     */
    default void dotBatch(MemorySegment w, long offset, Activation[] xs, int from, int to, int cols, float[][] outs, int row) {
        int b = from;
        for (; b + GROUP <= to; b += GROUP) {
            dotVectors4(w, offset, xs, b, cols, outs, row);
        }
        for (; b < to; b++) {
            outs[b][row] = dot(w, offset, xs[b], cols);
        }
    }
}
