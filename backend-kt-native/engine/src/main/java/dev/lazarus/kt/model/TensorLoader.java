package dev.lazarus.kt.model;

import dev.lazarus.kt.gguf.GgufFile;
import dev.lazarus.kt.gguf.GgufTensorInfo;
import dev.lazarus.kt.matrix.WeightMatrices;
import dev.lazarus.kt.tensor.WeightMatrix;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Looks tensors up by llama.cpp's names ({@code blk.N.attn_q.weight}) and wraps them for the forward pass. */
final class TensorLoader {

    private static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final GgufFile file;
    private final WeightMatrices matrices;

    TensorLoader(GgufFile file, WeightMatrices matrices) {
        this.file = file;
        this.matrices = matrices;
    }

    static String block(int block, String name) {
        return "blk." + block + "." + name + ".weight";
    }

    boolean has(String name) {
        return file.findTensor(name).isPresent();
    }

    WeightMatrix matrix(String name) {
        return matrix(file.tensor(name));
    }

    /**
     * The token embedding: read row by row (llama-server's get_rows, which it never repacks), so a view of the mapped
     * tensor; as a tied output head the native kernels read it in place.
     */
    WeightMatrix embedding(String name) {
        return embedding(file.tensor(name));
    }

    WeightMatrix embedding(GgufTensorInfo t) {
        return matrices.of(file, t);
    }


    /**
     * A view of the mapped tensor, or a copy in a faster layout ({@link WeightMatrices#repacked}: Q4_K and Q8_0; same
     * results bit for bit), freed with the model (GC), where the native kernels take the type in their 16-row layout
     * (as llama-server copies these matrices into its CPU_REPACK or AMX buffers). Routed experts are repacked by the RAM tier
     * instead (expert placement).
     */
    WeightMatrix matrix(GgufTensorInfo t) {
        WeightMatrix view = matrices.of(file, t);
        return matrices.nativeRepacks(view) ? matrices.repacked(file, t, Arena.ofAuto()) : view;
    }

    /** A 1-D tensor (norm weights, biases) as f32 values, whatever its stored type; null for null (absent). */
    float[] vector(GgufTensorInfo t) {
        if (t == null) {
            return null;
        }
        int n = Math.toIntExact(t.elements());
        float[] out = new float[n];
        MemorySegment data = file.data(t);
        // 1-D tensors are F32 in llama.cpp's files (quantizers keep norms and biases unquantized);
        // read them directly: the matrix kernels want SIMD-friendly row lengths, a vector need not have one.
        switch (t.type()) {
            case F32 -> MemorySegment.copy(data, LE_FLOAT, 0, out, 0, n);
            case F16 -> {
                for (int i = 0; i < n; i++) {
                    out[i] = Float.float16ToFloat(data.getAtIndex(LE_SHORT, i));
                }
            }
            default -> WeightMatrices.scalar(t.type(), data, 1, n).dequantizeRow(0, out, 0);
        }
        return out;
    }

    /**
     * The slices of a {@code [cols, rows, count]} tensor that the graph multiplies slice by slice with a plain
     * batched matrix product (per-head MLA projections), unlike routed experts.
     */
    WeightMatrix[] slices(GgufTensorInfo tensor, int count) {
        GgufTensorInfo t = expertTensor(tensor, count);
        WeightMatrix[] out = new WeightMatrix[count];
        for (int e = 0; e < count; e++) {
            out[e] = matrices.slice3dInPlace(file, t, e);
        }
        return out;
    }

    /** The experts of a {@code [cols, rows, experts]} tensor as raw slices of the mapped file. */
    ExpertMatrix[] expertSlices(GgufTensorInfo tensor, int count) {
        GgufTensorInfo t = expertTensor(tensor, count);
        int rows = Math.toIntExact(t.dim(1));
        int cols = Math.toIntExact(t.dim(0));
        long bytes = t.type().bytesFor((long) rows * cols);
        MemorySegment data = file.data(t);
        ExpertMatrix[] out = new ExpertMatrix[count];
        for (int e = 0; e < count; e++) {
            out[e] = new ExpertMatrix(t.type(), data.asSlice(bytes * e, bytes), rows, cols, matrices);
        }
        return out;
    }

    private GgufTensorInfo expertTensor(GgufTensorInfo t, int count) {
        String name = t.name();
        if (t.rank() != 3 || t.dim(2) != count) {
            throw new ModelFormatException("tensor " + name + " in " + file.path() + " should hold " + count
                    + " experts, has shape " + java.util.Arrays.toString(t.shape()));
        }
        return t;
    }
}
