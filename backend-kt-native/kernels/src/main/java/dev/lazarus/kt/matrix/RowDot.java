package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlOrders;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;

/**
 * ggml's {@code vec_dot} of one type for rows that are no weight matrix (a KV cache's keys of a {@code -ctk} type,
 * its transposed values): the Java kernel {@link KernelTable#inPlace} chooses for a slice, ggml's blocks read in
 * place in vec_dot's order. The other operand is an {@link Activation} of the type's {@link VecDotType}, converted as
 * ggml's {@code mul_mat} converts it. Thread-safe.
 */
public final class RowDot {

    private final GgmlType type;
    private final RowKernel kernel;

    private RowDot(GgmlType type, GgmlOrders orders) {
        this.type = type;
        this.kernel = KernelTable.java(type, false, KernelTable.Use.SLICE, orders).single();
    }

    /** The vec_dot of {@code type}, summed in {@code orders} (the model's: its backend's ggml variant). */
    public static RowDot of(GgmlType type, GgmlOrders orders) {
        return new RowDot(type, orders);
    }

    public GgmlType type() {
        return type;
    }

    /** The form the other operand takes: ggml's {@code vec_dot_type} of this type. */
    public VecDotType vecDotType() {
        return VecDotType.of(type);
    }

    /** Σ row·x over {@code n} values of the row at byte {@code offset} of {@code rows}. */
    public float dot(MemorySegment rows, long offset, Activation x, int n) {
        return kernel.dot(rows, offset, x, n);
    }
}
