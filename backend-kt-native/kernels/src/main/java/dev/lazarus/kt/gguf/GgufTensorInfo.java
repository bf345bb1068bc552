package dev.lazarus.kt.gguf;

import java.util.Arrays;

/**
 * One tensor of a GGUF file.
 *
 * @param name      tensor name, e.g. {@code blk.0.ffn_up_exps.weight}
 * @param type      element type
 * @param shape     dimensions in ggml order: {@code shape[0]} (ne0) is the contiguous row length
 * @param offset    byte offset of the data relative to the data section of its file
 * @param fileIndex which file of a split model holds the data (0 for single files)
 */
public record GgufTensorInfo(String name, GgmlType type, long[] shape, long offset, int fileIndex) {

    public GgufTensorInfo {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Size of dimension {@code i} (ggml order), 1 beyond the tensor's rank as in ggml. */
    public long dim(int i) {
        return i < shape.length ? shape[i] : 1;
    }

    public int rank() {
        return shape.length;
    }

    public long elements() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    public long byteSize() {
        return type.bytesFor(elements());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufTensorInfo t && name.equals(t.name) && type == t.type && Arrays.equals(shape, t.shape)
                && offset == t.offset && fileIndex == t.fileIndex;
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return "%s %s%s".formatted(name, type, Arrays.toString(shape));
    }
}
