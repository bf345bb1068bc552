package dev.lazarus.kt.tensor;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.matrix.NativeKernelsTest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The native activation conversion ({@code lz_quant.h}, {@link NativeKernels#quantize}) against the Java one
 * ({@link Activation#set} with {@code -Dlazarus.kt.kernels=java}), bit for bit, on every instruction set of the
 * library this host runs: the quants as floats (negative zeros included), the scales, the 16-value sums and the native
 * form the kernels read, on fresh random rows of odd block counts whose blocks are now and then all zeros, negative
 * zeros, of the largest float magnitude, exact rounding ties, ties of the largest magnitude, subnormal, so small that
 * the reciprocal of their maximum overflows, or with NaN and infinities. CI (which has a compiler) must have built it.
 */
class NativeActivationTest {

    private static final int ROWS = 300;

    @ParameterizedTest
    @EnumSource(value = VecDotType.class, names = {"Q8_0", "Q8_K"})
    void theNativeConversionEqualsTheJavaConversionBitForBit(VecDotType type) {
        List<NativeKernels.Isa> isas = NativeKernelsTest.hostIsas();
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int block = type.blockSize();
        for (int row = 0; row < ROWS; row++) {
            int blocks = 2 * rnd.nextInt(5) + 1;
            int n = block * blocks;
            float[] x = new float[n];
            List<String> kinds = new ArrayList<>();
            for (int b = 0; b < blocks; b++) {
                kinds.add(fill(x, b * block, block, rnd));
            }
            // the Java conversion: no native kernel has read this activation
            Activation reference = Activation.allocate(type, n).set(x, n);
            MemorySegment expected = NativeKernels.allocateActivation(type, n);
            NativeKernels.writeActivation(expected, n, type, reference.values, reference.scales, reference.bsums, n);
            for (NativeKernels.Isa isa : isas) {
                float[] values = new float[n];
                float[] scales = new float[n / block];
                int[] bsums = new int[type == VecDotType.Q8_K ? n / 16 : 0];
                MemorySegment s = NativeKernels.allocateActivation(type, n);
                NativeKernels.quantize(isa, type, x, n, s, values, scales, bsums);
                String where = "%s on %s, seed %d, row %d, blocks %s".formatted(type, isa, seed, row, kinds);
                assertThat(Arrays.equals(values, reference.values)).as("quants, " + where).isTrue();
                assertThat(Arrays.equals(scales, reference.scales)).as("scales, " + where).isTrue();
                assertThat(bsums).as("16-value sums, " + where).isEqualTo(reference.bsums);
                assertNativeFormsEqual(s, expected, type, n, where);
            }
            if (!isas.isEmpty()) {
                // an activation that a native kernel has read converts natively from its next set on
                Activation a = Activation.allocate(type, n).set(x, n);
                a.nativeAddresses();
                a.set(x, n);
                assertThat(Arrays.equals(a.values, reference.values)).as("Activation.set, seed " + seed).isTrue();
                MemorySegment s = MemorySegment.ofAddress(a.nativeAddresses()[0]).reinterpret(expected.byteSize());
                assertNativeFormsEqual(s, expected, type, n, "Activation.set, seed " + seed + ", row " + row);
            }
        }
    }

    /** One block of {@code x} at {@code o}, of a random kind; returns the kind. */
    private static String fill(float[] x, int o, int len, Random rnd) {
        float[] g = KernelEquivalenceTest.gaussian(rnd, len);
        int kind = rnd.nextInt(16);
        switch (kind) {
            case 0 -> Arrays.fill(x, o, o + len, 0f);
            case 1 -> {
                Arrays.fill(x, o, o + len, -0f);
                x[o + rnd.nextInt(len)] = 0f;
            }
            case 2 -> {
                System.arraycopy(g, 0, x, o, len);
                x[o + rnd.nextInt(len)] = rnd.nextBoolean() ? Float.MAX_VALUE : -Float.MAX_VALUE;
            }
            case 3 -> {
                // quants exactly halfway: the largest magnitude 127, the others k + 1/2 (ties to even)
                for (int i = 0; i < len; i++) {
                    x[o + i] = rnd.nextInt(253) - 126 + 0.5f;
                }
                x[o + rnd.nextInt(len)] = rnd.nextBoolean() ? 127f : -127f;
            }
            case 4 -> {
                // the largest magnitude twice, signs differing: the first decides Q8_K's sign
                System.arraycopy(g, 0, x, o, len);
                int a = rnd.nextInt(len), b = rnd.nextInt(len);
                x[o + a] = 50f;
                x[o + b] = -50f;
            }
            case 5 -> {
                for (int i = 0; i < len; i++) {
                    x[o + i] = g[i] * Float.MIN_NORMAL / 8; // subnormal
                }
            }
            case 6 -> {
                for (int i = 0; i < len; i++) {
                    x[o + i] = g[i] * 1e-38f; // the reciprocal of the maximum overflows
                }
            }
            case 7 -> {
                System.arraycopy(g, 0, x, o, len);
                x[o + rnd.nextInt(len)] = Float.NaN;
            }
            case 8 -> {
                System.arraycopy(g, 0, x, o, len);
                x[o + rnd.nextInt(len)] = rnd.nextBoolean() ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY;
            }
            case 9 -> {
                System.arraycopy(g, 0, x, o, len);
                for (int i = 0; i < len; i += 3) {
                    x[o + i] = -0f;
                }
            }
            default -> System.arraycopy(g, 0, x, o, len);
        }
        return kind < 10 ? String.valueOf(kind) : "g";
    }

    private static void assertNativeFormsEqual(MemorySegment actual, MemorySegment expected, VecDotType type, int n,
                                               String where) {
        assertThat(actual.asSlice(64, n).toArray(JAVA_BYTE)).as("native quants, " + where)
                .isEqualTo(expected.asSlice(64, n).toArray(JAVA_BYTE));
        long at = 64L + n;
        int blocks = n / type.blockSize();
        assertThat(Arrays.equals(actual.asSlice(at, 4L * blocks).toArray(JAVA_FLOAT),
                expected.asSlice(at, 4L * blocks).toArray(JAVA_FLOAT))).as("native scales, " + where).isTrue();
        if (type == VecDotType.Q8_K) {
            at += 4L * blocks;
            assertThat(actual.asSlice(at, 4L * (n / 16)).toArray(JAVA_INT)).as("native sums, " + where)
                    .isEqualTo(expected.asSlice(at, 4L * (n / 16)).toArray(JAVA_INT));
        }
    }
}
