package dev.lazarus.kt.tensor;

/**
 * What the kernels run as, for the start-up summary and {@code /v1/models}: the native kernels and their instruction
 * set where they are {@link NativeKernels#selected}, else the Java Vector API at this width.
 */
public final class Kernels {

    private Kernels() {}

    /** {@code native-avx512-vnni}, {@code native-avx2}, or {@code java-vector-256}: Java Vector API kernels on 256-bit vectors. */
    public static String describe() {
        return NativeKernels.selected() ? NativeKernels.describe() : "java-vector-" + Simd.F.vectorBitSize();
    }
}
