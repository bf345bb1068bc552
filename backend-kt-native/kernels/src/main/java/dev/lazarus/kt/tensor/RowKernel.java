package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;

/** One weight type's dot product of a stored row with an activation of the type's {@link VecDotType}. */
public interface RowKernel {

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
     * of {@link #GROUP}: a batch's vectors four at a time through {@link #dotVectors4}, the rest one by one (or, where
     * the kernel is {@link #fourWide}, through one {@link #dotPadded}), unless a kernel shares more than that among
     * them. Each product bit-identical to {@link #dot}.
     */
    default void dotBatch(MemorySegment w, long offset, Activation[] xs, int from, int to, int cols, float[][] outs, int row) {
        int b = from;
        for (; b + GROUP <= to; b += GROUP) {
            dotVectors4(w, offset, xs, b, cols, outs, row);
        }
        if (b < to && fourWide()) {
            dotPadded(this, w, offset, xs, b, to, cols, outs, row);
            return;
        }
        for (; b < to; b++) {
            outs[b][row] = dot(w, offset, xs[b], cols);
        }
    }

    /**
     * Whether this kernel's exact-integer stage is written only {@link #GROUP} activations wide (Q6_K's tiled order):
     * then a batch's last one to three vectors go through one {@link #dotPadded} (a one-vector form would be a second
     * stage to keep bit-identical).
     */
    default boolean fourWide() {
        return false;
    }

    /**
     * outs[i][row] for i in [from, to), fewer than {@link #GROUP} vectors, through one {@link #dotVectors4} of
     * {@code kernel} with the last vector repeated: for an order whose exact-integer stage this engine writes only
     * four activations wide (a one-vector form would be a second stage to keep bit-identical).
     */
    static void dotPadded(RowKernel kernel, MemorySegment w, long offset, Activation[] xs, int from, int to, int cols,
                          float[][] outs, int row) {
        Activation[] four = new Activation[GROUP];
        for (int i = 0; i < GROUP; i++) {
            four[i] = xs[Math.min(from + i, to - 1)];
        }
        float[][] sums = new float[GROUP][1];
        kernel.dotVectors4(w, offset, four, 0, cols, sums, 0);
        for (int i = from; i < to; i++) {
            outs[i][row] = sums[i - from][0];
        }
    }

    /** {@link #dot} through {@link #dotPadded}. */
    static float dotPadded(RowKernel kernel, MemorySegment w, long offset, Activation x, int cols) {
        float[][] out = new float[1][1];
        dotPadded(kernel, w, offset, new Activation[] {x}, 0, 1, cols, out, 0);
        return out[0][0];
    }
}
