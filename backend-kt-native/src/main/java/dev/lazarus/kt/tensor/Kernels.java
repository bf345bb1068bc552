package dev.lazarus.kt.tensor;

/** What the kernels run as, for the start-up summary and {@code /v1/models}: the Java Vector API at this width. */
public final class Kernels {

    private Kernels() {}

    /** For example {@code java-vector-256}: Java Vector API kernels on 256-bit vectors (AVX2). */
    public static String describe() {
        return "java-vector-" + Simd.F.vectorBitSize();
    }
}
