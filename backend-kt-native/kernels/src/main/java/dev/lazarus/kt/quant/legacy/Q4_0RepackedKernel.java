package dev.lazarus.kt.quant.legacy;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0 matrices that llama-server repacks at load on x86 (rows a multiple of 8: its CPU_REPACK buffer,
 * {@code q4_0_8x8_q8_0}), in the order of that path ({@link LegacyQuantKernels#q4_0Repacked} states it one value at a
 * time): per 32-value block the exact integer dot, folded in by {@code fma((float) Σ q·y, d_w·d_x, acc)}; the row is
 * that one accumulator, no lanes, no horizontal sum. Its GEMV and GEMM round alike, so one kernel serves decode and
 * batches (held to llama-server's hidden states by {@code HiddenStateParityTest}'s Q4_0 model).
 *
 * <p>The integer dot is formed in f32 vectors (|Σ| ≤ 32·8·127 &lt; 2^24: exact in any order): the block's sixteen
 * code bytes widened once, low nibbles values 0-15 and high nibbles 16-31, less 8, times the activation's quants.
 */
public final class Q4_0RepackedKernel implements RowKernel {

    public static final Q4_0RepackedKernel INSTANCE = new Q4_0RepackedKernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;

    private Q4_0RepackedKernel() {
    }

    private static FloatVector low(IntVector bytes) {
        return (FloatVector) bytes.and(0xF).sub(8).convert(VectorOperators.I2F, 0);
    }

    private static FloatVector high(IntVector bytes) {
        return (FloatVector) bytes.lanewise(VectorOperators.LSHR, 4).sub(8).convert(VectorOperators.I2F, 0);
    }

    private static IntVector bytes(MemorySegment w, long blk) {
        return (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 2, Simd.LE)
                .convertShape(VectorOperators.ZERO_EXTEND_B2I, I16, 0);
    }

    /** The block's exact integer dot with the activation's quants at {@code at}. */
    private static float blockDot(FloatVector lo, FloatVector hi, float[] xs, int at) {
        return lo.mul(FloatVector.fromArray(S16, xs, at)).add(hi.mul(FloatVector.fromArray(S16, xs, at + 16)))
                .reduceLanes(VectorOperators.ADD);
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float acc = 0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 18L * b;
            IntVector bytes = bytes(w, blk);
            acc = Math.fma(blockDot(low(bytes), high(bytes), x.values, 32 * b), Layouts.f16(w, blk) * x.scales[b], acc);
        }
        return acc;
    }

    /** Four activations against one row: each block's codes decoded once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 18L * b;
            IntVector bytes = bytes(w, blk);
            FloatVector lo = low(bytes), hi = high(bytes);
            float dw = Layouts.f16(w, blk);
            int at = 32 * b;
            acc0 = Math.fma(blockDot(lo, hi, x0.values, at), dw * x0.scales[b], acc0);
            acc1 = Math.fma(blockDot(lo, hi, x1.values, at), dw * x1.scales[b], acc1);
            acc2 = Math.fma(blockDot(lo, hi, x2.values, at), dw * x2.scales[b], acc2);
            acc3 = Math.fma(blockDot(lo, hi, x3.values, at), dw * x3.scales[b], acc3);
        }
        outs[from][row] = acc0;
        outs[from + 1][row] = acc1;
        outs[from + 2][row] = acc2;
        outs[from + 3][row] = acc3;
    }
}
