package dev.lazarus.kt.matrix;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.KernelConfig;
import dev.lazarus.kt.tensor.NativeKernels;
import dev.lazarus.kt.tensor.Simd;

/**
 * What the kernels run as, for the start-up summary and {@code /v1/models}: the native kernels and their instruction
 * set where a {@link KernelConfig} selects them, else the Java Vector API at this width.
 */
public final class Kernels {

    private Kernels() {}

    /** {@code native-avx512-vnni}, {@code native-avx2}, or {@code java-vector-256}: Java Vector API kernels on 256-bit vectors. */
    public static String describe(KernelConfig config) {
        return config.nativeIsa().map(NativeKernels::describe).orElseGet(Kernels::java);
    }

    /**
     * What a matrix of {@code type}, {@code rows} × {@code cols} in ggml's layout, multiplies with here: the native label
     * where {@code config} selects the native kernels and {@link KernelTable#nativeRow} has a row for such a matrix, else
     * the Java one.
     */
    public static String of(GgmlType type, int rows, int cols, KernelConfig config) {
        return KernelTable.nativeCovers(type, rows, cols, config) ? describe(config) : java();
    }

    private static String java() {
        return "java-vector-" + Simd.F.vectorBitSize();
    }
}
