package dev.lazarus.kt.quant.lowbit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.VecDotType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The kernels of the types llama-quantize makes and the engine does not write (Q2_K, Q3_K, IQ4_XS, IQ4_NL, MXFP4, the
 * grid I-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), in
 * each order llama-server rounds them in, on random blocks (fresh every run; the seed is in the message): every order
 * computes the plain definition {@code Σ dequantize(w)·dequantize(x)} up to rounding, and a batch's products are each
 * exactly the single-vector product of the same order. Bit-identity with llama-server itself is held by
 * {@code HiddenStateParityTest} and {@code GreedyParityTest} on llama-quantize's files.
 */
class LowBitKernelsTest {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"Q2_K, VEC_DOT", "Q2_K, REPACKED_GEMV", "Q2_K, REPACKED_GEMM", "Q2_K, TILED", "Q3_K, VEC_DOT",
            "Q3_K, TILED", "IQ4_XS, VEC_DOT", "IQ4_XS, TILED",
            "IQ2_XXS, VEC_DOT", "IQ2_XXS, TILED", "IQ2_XS, VEC_DOT", "IQ2_XS, TILED", "IQ2_S, VEC_DOT", "IQ2_S, TILED",
            "IQ3_XXS, VEC_DOT", "IQ3_XXS, TILED", "IQ3_S, VEC_DOT", "IQ3_S, TILED", "IQ1_S, VEC_DOT", "IQ1_S, TILED",
            "IQ1_M, VEC_DOT", "IQ1_M, TILED"})
    void subBlockOrdersComputeTheDefinition(GgmlType type, SubBlockKQuantKernel.Order order) {
        check(type, new SubBlockKQuantKernel(type, order), 256 * 3);
    }

    /** 7 blocks: three pairs and the odd last block that ggml's vec_dot adds on its own. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"IQ4_NL, VEC_DOT", "IQ4_NL, REPACKED", "MXFP4, VEC_DOT", "MXFP4, REPACKED"})
    void tableOrdersComputeTheDefinition(GgmlType type, TableBlockKernel.Order order) {
        check(type, new TableBlockKernel(type, order), 32 * 7);
    }

    private static void check(GgmlType type, RowKernel kernel, int cols) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        MemorySegment w = randomBlocks(type, cols, rnd);
        float[] dequantized = new float[cols];
        GgmlCodec.decode(type, w, 0, dequantized, 0, cols);
        VecDotType vdt = VecDotType.of(type);
        Activation[] xs = new Activation[9];
        float[][] outs = new float[xs.length][1];
        for (int i = 0; i < xs.length; i++) {
            float[] x = new float[cols];
            for (int j = 0; j < cols; j++) {
                x[j] = (float) rnd.nextGaussian();
            }
            xs[i] = Activation.allocate(vdt, cols).set(x);
        }
        kernel.dotBatch(w, 0, xs, 0, xs.length, cols, outs, 0);
        for (int i = 0; i < xs.length; i++) {
            float single = kernel.dot(w, 0, xs[i], cols);
            assertThat(outs[i][0]).as("seed %d: vector %d of the batch is its single product", seed, i).isEqualTo(single);
            double definition = 0, magnitude = 0;
            for (int j = 0; j < cols; j++) {
                double term = (double) dequantized[j] * dequantizedActivation(xs[i], vdt, j);
                definition += term;
                magnitude += Math.abs(term);
            }
            // f32 folds of exact integers: a few ulps of the magnitude of the terms
            assertThat((double) single).as("seed %d, vector %d", seed, i).isCloseTo(definition,
                    org.assertj.core.data.Offset.offset(1e-5 * magnitude + 1e-30));
        }
    }

    private static double dequantizedActivation(Activation x, VecDotType vdt, int j) {
        return (double) x.values[j] * x.scales[j / vdt.blockSize()];
    }

    /** Random bytes, with the scales set to ordinary f16 values (random ones are often NaN or huge). */
    private static MemorySegment randomBlocks(GgmlType type, int cols, Random rnd) {
        byte[] bytes = new byte[(int) type.bytesFor(cols)];
        rnd.nextBytes(bytes);
        MemorySegment data = MemorySegment.ofArray(bytes);
        for (long blk = 0; blk < bytes.length; blk += type.typeSize()) {
            switch (type) {
                case Q2_K -> {
                    data.set(I16, blk + 80, scale(rnd));
                    data.set(I16, blk + 82, scale(rnd));
                }
                case Q3_K -> data.set(I16, blk + 108, scale(rnd));
                case IQ4_XS, IQ4_NL, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S -> data.set(I16, blk, scale(rnd));
                case IQ1_M -> { // d's sixteen bits are the top nibbles of the four scale words
                    short d = scale(rnd);
                    for (int i = 0; i < 4; i++) {
                        long at = blk + 48 + 2L * i;
                        data.set(I16, at, (short) ((data.get(I16, at) & 0x0FFF) | ((d >> (4 * i)) & 0xF) << 12));
                    }
                }
                case MXFP4 -> data.set(ValueLayout.JAVA_BYTE, blk, (byte) (120 + rnd.nextInt(10)));
                default -> throw new IllegalArgumentException(type.name());
            }
        }
        return data;
    }

    private static short scale(Random rnd) {
        return Float.floatToFloat16((float) (0.001 + 0.01 * rnd.nextDouble()));
    }
}
