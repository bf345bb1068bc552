package dev.lazarus.kt.quant.legacy;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_0, Q4_1, Q5_0 and Q5_1 rows in ggml's AVX2 order ({@link LegacyQuantKernels#ggmlOrder} states it one value at a
 * time), vectorized without changing a rounding. A block's sixteen code bytes widen to one int vector whose low
 * nibbles are values 0-15 and high nibbles values 16-31 (plus, for Q5, bit i of the 32-bit {@code qh} as 16); the
 * products with the activation's quants and their four-term sums are exact in f32 (|Σ| ≤ 4·31·127), so ggml's
 * lane k (values 4k..4k+3) is formed by adding neighbouring products twice, landing in lane 4k of the low (k &lt; 4)
 * or high half. The float steps keep ggml's order: {@code fma(d_w·d_x, lane, acc)} per block and lane,
 * {@link GgmlSums#hsum8}, plus the affine types' {@code Σ m·s} in one scalar ({@code + 0} for the others, as ggml
 * adds it).
 *
 * <p>The whole row stays in one method, its small helpers inlined (blocks of 32 values are too short for a call
 * each); the activation is read in its natural order, so Q8_1 activations need no extra layout.
 */
public final class LegacyVectorKernel implements RowKernel {

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorShuffle<Float> PAIRS = VectorShuffle.fromOp(S16, i -> i ^ 1);
    private static final VectorShuffle<Float> QUADS = VectorShuffle.fromOp(S16, i -> i ^ 2);
    /** Shift counts that bring bit i of {@code qh << 4} (values 0-15), resp. bit 16 + i of {@code qh}, to bit 4. */
    private static final IntVector LOW_BITS = IntVector.fromArray(I16, shifts(0), 0);
    private static final IntVector HIGH_BITS = IntVector.fromArray(I16, shifts(12), 0);

    private final LegacyQuantKernels.Form form;

    private LegacyVectorKernel(LegacyQuantKernels.Form form) {
        this.form = form;
    }

    /** The kernel of Q4_0, Q4_1, Q5_0 or Q5_1. */
    public static LegacyVectorKernel of(GgmlType type) {
        if (type == GgmlType.Q8_0) {
            throw new IllegalArgumentException("Q8_0 has its own kernel, Q8_0Kernel");
        }
        return new LegacyVectorKernel(LegacyQuantKernels.Form.of(type));
    }

    private static int[] shifts(int first) {
        int[] s = new int[16];
        for (int i = 0; i < 16; i++) {
            s[i] = first + i;
        }
        return s;
    }

    /** The codes of values 0-15 (half 0) or 16-31 (half 1) of a block, less the bias, as floats. */
    private static FloatVector codes(IntVector bytes, int half, boolean fifthBit, int qh, int bias) {
        IntVector q = half == 0 ? bytes.and(0xF) : bytes.lanewise(VectorOperators.LSHR, 4);
        if (fifthBit) {
            // qh << 4 loses bits 28-31, so the high half shifts qh itself, by 16 + i - 4
            IntVector bits = half == 0 ? IntVector.broadcast(I16, qh << 4).lanewise(VectorOperators.LSHR, LOW_BITS)
                    : IntVector.broadcast(I16, qh).lanewise(VectorOperators.LSHR, HIGH_BITS);
            q = q.or(bits.and(16));
        }
        return (FloatVector) q.sub(bias).convert(VectorOperators.I2F, 0);
    }

    /** Lane 4k = the sum of lanes 4k..4k+3 (exact: integers far below 2^24). */
    private static FloatVector quads(FloatVector p) {
        p = p.add(p.rearrange(PAIRS));
        return p.add(p.rearrange(QUADS));
    }

    private static IntVector bytes(MemorySegment w, long at) {
        return ((IntVector) ByteVector.fromMemorySegment(B16, w, at, Simd.LE)
                .convertShape(VectorOperators.ZERO_EXTEND_B2I, I16, 0));
    }

    private static float finish(FloatVector lo, FloatVector hi, float summs) {
        return GgmlSums.hsum8(lo.lane(0), lo.lane(4), lo.lane(8), lo.lane(12),
                hi.lane(0), hi.lane(4), hi.lane(8), hi.lane(12)) + summs;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        int size = form.size(), qsAt = form.qsAt(), qhAt = form.qhAt(), bias = form.bias();
        boolean fifthBit = qhAt >= 0, affine = form.affine();
        float[] xs = x.values;
        FloatVector lo = FloatVector.zero(S16), hi = lo;
        float summs = 0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + (long) size * b;
            IntVector bytes = bytes(w, blk + qsAt);
            int qh = fifthBit ? w.get(Layouts.I32, blk + qhAt) : 0;
            FloatVector d = FloatVector.broadcast(S16, Layouts.f16(w, blk) * x.scales[b]);
            lo = d.fma(quads(codes(bytes, 0, fifthBit, qh, bias).mul(FloatVector.fromArray(S16, xs, 32 * b))), lo);
            hi = d.fma(quads(codes(bytes, 1, fifthBit, qh, bias).mul(FloatVector.fromArray(S16, xs, 32 * b + 16))), hi);
            if (affine) {
                summs = Math.fma(Layouts.f16(w, blk + 2), x.sums[b], summs);
            }
        }
        return finish(lo, hi, summs);
    }

    /**
     * Four activations against one row, every product exactly {@link #dot}: the codes of {@link #CHUNK} blocks
     * decoded once into a float array, then each activation's lanes accumulated from it in a method of its own (one
     * method holding four activations' vectors is too large for C2 to inline its helpers, and boxes them).
     */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        float[] codes = new float[32 * CHUNK];
        float[] acc = new float[GROUP * 32];
        float[] summs = new float[GROUP];
        int blocks = n / 32;
        for (int b0 = 0; b0 < blocks; b0 += CHUNK) {
            int b1 = Math.min(blocks, b0 + CHUNK);
            decode(w, o, b0, b1, codes);
            for (int i = 0; i < GROUP; i++) {
                accumulate(w, o, codes, b0, b1, xs[from + i], acc, 32 * i, summs, i);
            }
        }
        for (int i = 0; i < GROUP; i++) {
            int a = 32 * i;
            outs[from + i][row] = GgmlSums.hsum8(acc[a], acc[a + 4], acc[a + 8], acc[a + 12],
                    acc[a + 16], acc[a + 20], acc[a + 24], acc[a + 28]) + summs[i];
        }
    }

    /** Blocks per {@link #decode}: 256 values, one KiB of codes. */
    private static final int CHUNK = 8;

    /** The codes of blocks [b0, b1), bias removed, as floats: block b's 32 values at 32·(b - b0). */
    private void decode(MemorySegment w, long o, int b0, int b1, float[] codes) {
        int size = form.size(), qsAt = form.qsAt(), qhAt = form.qhAt(), bias = form.bias();
        boolean fifthBit = qhAt >= 0;
        for (int b = b0; b < b1; b++) {
            long blk = o + (long) size * b;
            IntVector bytes = bytes(w, blk + qsAt);
            int qh = fifthBit ? w.get(Layouts.I32, blk + qhAt) : 0;
            codes(bytes, 0, fifthBit, qh, bias).intoArray(codes, 32 * (b - b0));
            codes(bytes, 1, fifthBit, qh, bias).intoArray(codes, 32 * (b - b0) + 16);
        }
    }

    /** {@link #dot}'s steps for blocks [b0, b1) from decoded codes: lanes at acc[at..at + 32), Σ m·s at summs[i]. */
    private void accumulate(MemorySegment w, long o, float[] codes, int b0, int b1, Activation x, float[] acc, int at,
                            float[] summs, int i) {
        int size = form.size();
        boolean affine = form.affine();
        float[] xs = x.values;
        FloatVector lo = FloatVector.fromArray(S16, acc, at), hi = FloatVector.fromArray(S16, acc, at + 16);
        float m = summs[i];
        for (int b = b0; b < b1; b++) {
            long blk = o + (long) size * b;
            int c = 32 * (b - b0);
            FloatVector d = FloatVector.broadcast(S16, Layouts.f16(w, blk) * x.scales[b]);
            FloatVector pLo = FloatVector.fromArray(S16, codes, c).mul(FloatVector.fromArray(S16, xs, 32 * b));
            FloatVector pHi = FloatVector.fromArray(S16, codes, c + 16)
                    .mul(FloatVector.fromArray(S16, xs, 32 * b + 16));
            lo = d.fma(quads(pLo), lo);
            hi = d.fma(quads(pHi), hi);
            if (affine) {
                m = Math.fma(Layouts.f16(w, blk + 2), x.sums[b], m);
            }
        }
        lo.intoArray(acc, at);
        hi.intoArray(acc, at + 16);
        summs[i] = m;
    }
}
