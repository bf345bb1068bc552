package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.MemorySegment;

/**
 * One matrix of a routed expert as it is stored (ggml block layout, {@code rows} × {@code cols}):
 * the raw bytes expert placement copies to a faster tier, and the view the CPU computes with, whose kernels the
 * backend's {@code matrices} pick.
 */
public record ExpertMatrix(GgmlType type, MemorySegment data, int rows, int cols, WeightMatrices matrices) {

    /** Under {@link WeightMatrices#defaults} (tests). */
    public ExpertMatrix(GgmlType type, MemorySegment data, int rows, int cols) {
        this(type, data, rows, cols, WeightMatrices.defaults());
    }

    public long bytes() {
        return data.byteSize();
    }

    /** A matrix over these bytes using the CPU kernels (nothing is copied). */
    public WeightMatrix matrix() {
        return matrices.expert(type, data, rows, cols);
    }

    /** The same matrix over other bytes of the same layout (a copy in another memory). */
    public ExpertMatrix withData(MemorySegment other) {
        if (other.byteSize() != data.byteSize()) {
            throw new IllegalArgumentException("copy holds " + other.byteSize() + " bytes, matrix " + data.byteSize());
        }
        return new ExpertMatrix(type, other, rows, cols, matrices);
    }
}
