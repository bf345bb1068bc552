package dev.lazarus.kt.quant.legacy;

import static dev.lazarus.kt.tensor.Layouts.f16;
import static dev.lazarus.kt.tensor.Layouts.u8;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Dot products of the 32-value block types Q8_0, Q4_0, Q5_0 (against Q8_0 activations) and Q4_1, Q5_1
 * (against Q8_1), in two forms.
 *
 * <p>{@link #ggmlOrder} rounds exactly like ggml's x86 AVX2 kernels (what llama-server's zen4/AVX-512
 * CPU backend runs for these types): eight f32 lanes, lane k holding the exact integer dot of values
 * 4k..4k+3 of each block, accumulated per block as {@code fma(dx·dy, lane, acc)}, summed at the end
 * by the fixed horizontal order of ggml's {@code hsum_float_8}; the affine types add
 * {@code Σ m·s} kept in one scalar (contracted to an fma by the compiler). Matching that order bit
 * for bit is what keeps greedy continuations identical to llama-server's: a last-bit difference
 * here later flips a Q8 activation rounding and grows from there.
 *
 * <p>The matrices run vector forms held bit-identical to {@link #ggmlOrder} by their tests: Q8_0
 * {@code Q8_0Kernel}, the other four {@link LegacyVectorKernel}; Q4_0 matrices that llama-server repacks take
 * {@link Q4_0RepackedKernel}, held to {@link #q4_0Repacked}.
 *
 * <p>{@link #reference} is the plain definition (integer block sums, one float multiply per block)
 * that the tests hold the kernel against.
 */
public final class LegacyQuantKernels {

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private LegacyQuantKernels() {
    }

    public static RowKernel ggmlOrder(GgmlType type) {
        Form f = Form.of(type);
        return (w, o, x, n) -> dot(f, w, o, x, n);
    }

    /**
     * Q4_0 as llama-server computes the matrices it repacks on x86 ({@code q4_0_8x8_q8_0}, rows a multiple of 8):
     * per block the exact integer dot folded by {@code fma(Σ q·y, d_w·d_x, acc)}, the accumulator being the result.
     */
    static float q4_0Repacked(MemorySegment w, long o, Activation x, int n) {
        Form f = Form.of(GgmlType.Q4_0);
        int[] q = new int[32];
        float acc = 0;
        for (int b = 0; b < n / 32; b++) {
            long block = o + 18L * b;
            f.quants(w, block, q);
            int isum = 0;
            for (int i = 0; i < 32; i++) {
                isum += q[i] * (int) x.values[32 * b + i];
            }
            acc = Math.fma((float) isum, f16(w, block) * x.scales[b], acc);
        }
        return acc;
    }

    public static RowKernel reference(GgmlType type) {
        Form f = Form.of(type);
        return (w, o, x, n) -> referenceDot(f, w, o, x, n);
    }

    /** Where a type keeps its parts within a block, and what it subtracts from its quants. */
    record Form(int size, boolean affine, int qhAt, int qsAt, int bias) {
        static Form of(GgmlType type) {
            return switch (type) {
                case Q4_0 -> new Form(18, false, -1, 2, 8);
                case Q4_1 -> new Form(20, true, -1, 4, 0);
                case Q5_0 -> new Form(22, false, 2, 6, 16);
                case Q5_1 -> new Form(24, true, 4, 8, 0);
                case Q8_0 -> new Form(34, false, -1, 2, 0);
                default -> throw new IllegalArgumentException("not a legacy block type: " + type);
            };
        }

        /** The 32 quants of a block, bias removed, into {@code q}. */
        void quants(MemorySegment w, long block, int[] q) {
            if (size == 34) { // Q8_0: 32 plain int8
                for (int i = 0; i < 32; i++) {
                    q[i] = w.get(ValueLayout.JAVA_BYTE, block + 2 + i);
                }
                return;
            }
            int qh = qhAt < 0 ? 0 : w.get(U32, block + qhAt);
            for (int j = 0; j < 16; j++) {
                int b = u8(w, block + qsAt + j);
                q[j] = ((b & 0xF) | ((qh >>> j) & 1) << 4) - bias;
                q[j + 16] = ((b >> 4) | ((qh >>> (j + 16)) & 1) << 4) - bias;
            }
        }
    }

    private static final ThreadLocal<int[]> QUANTS = ThreadLocal.withInitial(() -> new int[32]);

    private static float dot(Form f, MemorySegment w, long o, Activation x, int n) {
        int[] q = QUANTS.get();
        float[] xq = x.values;
        float a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
        float summs = 0;
        for (int b = 0; b < n / 32; b++) {
            long block = o + (long) f.size() * b;
            f.quants(w, block, q);
            int xo = 32 * b;
            float d = f16(w, block) * x.scales[b];
            a0 = Math.fma(d, lane(q, xq, xo, 0), a0);
            a1 = Math.fma(d, lane(q, xq, xo, 1), a1);
            a2 = Math.fma(d, lane(q, xq, xo, 2), a2);
            a3 = Math.fma(d, lane(q, xq, xo, 3), a3);
            a4 = Math.fma(d, lane(q, xq, xo, 4), a4);
            a5 = Math.fma(d, lane(q, xq, xo, 5), a5);
            a6 = Math.fma(d, lane(q, xq, xo, 6), a6);
            a7 = Math.fma(d, lane(q, xq, xo, 7), a7);
            if (f.affine()) {
                summs = Math.fma(f16(w, block + 2), x.sums[b], summs);
            }
        }
        return GgmlSums.hsum8(a0, a1, a2, a3, a4, a5, a6, a7) + summs;
    }

    /** The exact integer dot of values 4k..4k+3 of a block (ggml's mul_sum_i8_pairs lane k). */
    private static float lane(int[] q, float[] xq, int xo, int k) {
        int i = 4 * k;
        return q[i] * (int) xq[xo + i] + q[i + 1] * (int) xq[xo + i + 1]
                + q[i + 2] * (int) xq[xo + i + 2] + q[i + 3] * (int) xq[xo + i + 3];
    }

    private static float referenceDot(Form f, MemorySegment w, long o, Activation x, int n) {
        int[] q = new int[32];
        float sum = 0;
        for (int b = 0; b < n / 32; b++) {
            long block = o + (long) f.size() * b;
            f.quants(w, block, q);
            int isum = 0;
            for (int i = 0; i < 32; i++) {
                isum += q[i] * (int) x.values[32 * b + i];
            }
            sum += isum * (f16(w, block) * x.scales[b]);
            if (f.affine()) {
                sum += f16(w, block + 2) * x.sums[b];
            }
        }
        return sum;
    }
}
