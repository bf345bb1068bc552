package dev.lazarus.kt.quant.floats;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.matrix.KernelEquivalenceTest;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.RowKernelContract;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vector BF16 kernel against {@code ggml_vec_dot_bf16}'s AVX512_BF16 order stated one value at a time
 * ({@link #ggmlOrder}): equal bit for bit through every {@link RowKernel} entry point, on encoded weights and on raw
 * bf16 bits of widely spread exponents, with row lengths that leave a tail past a multiple of 64.
 */
class FloatKernelsTest {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void bf16RoundsExactlyAsGgmlOrder(boolean rawBits) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        int rows = 1 + rnd.nextInt(9);
        int cols = 1 + rnd.nextInt(600);
        byte[] bytes;
        if (rawBits) {
            bytes = new byte[2 * rows * cols];
            MemorySegment s = MemorySegment.ofArray(bytes);
            for (int i = 0; i < rows * cols; i++) { // normal numbers only: vdpbf16ps flushes subnormals, fma does not
                int exponent = 97 + rnd.nextInt(60);
                int sign = rnd.nextBoolean() ? 0x8000 : 0;
                s.set(Layouts.I16, 2L * i, (short) (sign | exponent << 7 | rnd.nextInt(128)));
            }
        } else {
            bytes = GgmlCodec.encode(GgmlType.BF16, KernelEquivalenceTest.gaussian(rnd, rows * cols));
        }
        RowKernelContract.assertBitIdentical(FloatKernels::bf16, FloatKernelsTest::ggmlOrder,
                MemorySegment.ofArray(bytes), 2L * cols, rows, cols,
                () -> Activation.allocate(VecDotType.BF16, cols).set(spread(rnd, cols, rawBits)),
                "seed=%dL %s".formatted(seed, rawBits ? "raw" : "encoded"));
    }

    private static float[] spread(Random rnd, int n, boolean wide) {
        float[] v = KernelEquivalenceTest.gaussian(rnd, n);
        if (wide) {
            for (int i = 0; i < n; i++) {
                v[i] = Math.scalb(v[i], rnd.nextInt(40) - 20);
            }
        }
        return v;
    }

    /** ggml_vec_dot_bf16 (AVX512_BF16) one value at a time: see {@link FloatKernels}. */
    static float ggmlOrder(MemorySegment w, long o, Activation x, int n) {
        float[][] c = new float[2][16];
        int i = 0;
        for (; i + 64 <= n; i += 64) {
            for (int h = 0; h < 2; h++) {
                for (int l = 0; l < 16; l++) {
                    int even = i + 32 * h + 2 * l;
                    c[h][l] = Math.fma(bf16(w, o, even + 1), x.values[even + 1], c[h][l]);
                    c[h][l] = Math.fma(bf16(w, o, even), x.values[even], c[h][l]);
                }
            }
        }
        double sum = 0;
        sum += GgmlSums.reduce16(c[0], 0);
        sum += GgmlSums.reduce16(c[1], 0);
        for (; i < n; i++) {
            sum += bf16(w, o, i) * x.values[i];
        }
        return (float) sum;
    }

    private static float bf16(MemorySegment w, long o, int i) {
        return Float.intBitsToFloat(Short.toUnsignedInt(w.get(Layouts.I16, o + 2L * i)) << 16);
    }
}
