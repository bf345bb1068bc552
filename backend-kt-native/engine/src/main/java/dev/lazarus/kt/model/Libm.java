package dev.lazarus.kt.model;

import dev.lazarus.kt.tensor.NativeKernels;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * The C library's single-precision maths ({@code cosf}, {@code sinf}, {@code expf}, {@code logf}, {@code powf}),
 * called through FFM, for the values llama.cpp's CPU code takes from them (rope angles and frequencies, scalar
 * exponentials). glibc's float versions are accurate to about half an ulp but not correctly rounded, so
 * {@code (float) Math.cos(x)} differs from {@code cosf(x)} in the last bit for about 2% of the angles a rope
 * table holds (and {@code expf} for about 0.06% of arguments); a rotated query or key then lands on the other
 * side of an F16 rounding now and then, which moved logprobs by up to 0.1 on some prompts. Where the
 * platform's C library has no such symbol, {@link Math} stands in.
 */
final class Libm {

    private static final FunctionDescriptor UNARY = FunctionDescriptor.of(ValueLayout.JAVA_FLOAT, ValueLayout.JAVA_FLOAT);
    private static final FunctionDescriptor BINARY =
            FunctionDescriptor.of(ValueLayout.JAVA_FLOAT, ValueLayout.JAVA_FLOAT, ValueLayout.JAVA_FLOAT);
    private static final Optional<MethodHandle> COSF = find("cosf", UNARY);
    private static final Optional<MethodHandle> SINF = find("sinf", UNARY);
    private static final Optional<MethodHandle> EXPF = find("expf", UNARY);
    private static final Optional<MethodHandle> LOGF = find("logf", UNARY);
    private static final Optional<MethodHandle> POWF = find("powf", BINARY);

    private Libm() {
    }

    static float cos(float x) {
        return COSF.isPresent() ? call(COSF.get(), x) : (float) Math.cos(x);
    }

    static float sin(float x) {
        return SINF.isPresent() ? call(SINF.get(), x) : (float) Math.sin(x);
    }

    static float exp(float x) {
        return EXPF.isPresent() ? call(EXPF.get(), x) : (float) Math.exp(x);
    }

    /** {@code y[i] = exp(x[i])} for i in [0, n): one native call for the lot where the engine's library loaded. */
    static void exp(float[] x, float[] y, int n) {
        if (!NativeKernels.expf(x, y, n)) {
            for (int i = 0; i < n; i++) {
                y[i] = exp(x[i]);
            }
        }
    }

    static float log(float x) {
        return LOGF.isPresent() ? call(LOGF.get(), x) : (float) Math.log(x);
    }

    static float pow(float x, float y) {
        if (POWF.isEmpty()) {
            return (float) Math.pow(x, y);
        }
        try {
            return (float) POWF.get().invokeExact(x, y);
        } catch (Throwable t) {
            throw new IllegalStateException("calling the C library's powf failed", t);
        }
    }

    private static float call(MethodHandle f, float x) {
        try {
            return (float) f.invokeExact(x);
        } catch (Throwable t) {
            throw new IllegalStateException("calling the C library's float maths failed", t);
        }
    }

    private static Optional<MethodHandle> find(String name, FunctionDescriptor descriptor) {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find(name)
                    .map(symbol -> linker.downcallHandle(symbol, descriptor, Linker.Option.critical(false)));
        } catch (RuntimeException e) { // no native access granted, or no C library: Math's functions stand in
            return Optional.empty();
        }
    }
}
