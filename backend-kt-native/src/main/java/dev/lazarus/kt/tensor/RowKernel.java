package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;

/** One weight type's dot product of a stored row with an activation of the type's {@link VecDotType}. */
interface RowKernel {

    /** Σ row·x over {@code cols} values of the row starting at byte {@code offset} of {@code w}. */
    float dot(MemorySegment w, long offset, Activation x, int cols);
}
