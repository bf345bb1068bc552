package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlType;
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
 * products with the activation's quants and their four-term sums are exact in f32 (|Σ| ≤ 4·31·127), so ggml's lane k
 * (values 4k..4k+3) is formed by adding neighbouring products twice, landing in lane 4k of the low (k &lt; 4) or high
 * half. The float steps keep ggml's order: {@code fma(d_w·d_x, lane, acc)} per block and lane, {@link GgmlSums#hsum8},
 * plus the affine types' {@code Σ m·s} in one scalar ({@code + 0} for the others, as ggml adds it).
 *
 * <p>The whole row stays in one method, its small helpers inlined (blocks of 32 values are too short for a call
 * each); the activation is read in its natural order, so Q8_1 activations need no extra layout.
 */
final class LegacyVectorKernel implements RowKernel {

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
    static LegacyVectorKernel of(GgmlType type) {
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
        return ((IntVector) ByteVector.fromMemorySegment(B16, w, at, Simd.LE).convertShape(VectorOperators.B2I, I16, 0))
                .and(0xFF);
    }

    private static float finish(FloatVector lo, FloatVector hi, float summs) {
        return GgmlSums.hsum8(lo.lane(0), lo.lane(4), lo.lane(8), lo.lane(12), hi.lane(0), hi.lane(4), hi.lane(8), hi.lane(12))
                + summs;
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

    /** Four activations against one row: each block's codes decoded once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        int size = form.size(), qsAt = form.qsAt(), qhAt = form.qhAt(), bias = form.bias();
        boolean fifthBit = qhAt >= 0, affine = form.affine();
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        FloatVector lo0 = FloatVector.zero(S16), lo1 = lo0, lo2 = lo0, lo3 = lo0, hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0;
        float m0 = 0, m1 = 0, m2 = 0, m3 = 0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + (long) size * b;
            IntVector bytes = bytes(w, blk + qsAt);
            int qh = fifthBit ? w.get(Layouts.I32, blk + qhAt) : 0;
            FloatVector qLo = codes(bytes, 0, fifthBit, qh, bias), qHi = codes(bytes, 1, fifthBit, qh, bias);
            float dw = Layouts.f16(w, blk);
            int a = 32 * b;
            FloatVector d0 = FloatVector.broadcast(S16, dw * x0.scales[b]);
            lo0 = d0.fma(quads(qLo.mul(FloatVector.fromArray(S16, x0.values, a))), lo0);
            hi0 = d0.fma(quads(qHi.mul(FloatVector.fromArray(S16, x0.values, a + 16))), hi0);
            FloatVector d1 = FloatVector.broadcast(S16, dw * x1.scales[b]);
            lo1 = d1.fma(quads(qLo.mul(FloatVector.fromArray(S16, x1.values, a))), lo1);
            hi1 = d1.fma(quads(qHi.mul(FloatVector.fromArray(S16, x1.values, a + 16))), hi1);
            FloatVector d2 = FloatVector.broadcast(S16, dw * x2.scales[b]);
            lo2 = d2.fma(quads(qLo.mul(FloatVector.fromArray(S16, x2.values, a))), lo2);
            hi2 = d2.fma(quads(qHi.mul(FloatVector.fromArray(S16, x2.values, a + 16))), hi2);
            FloatVector d3 = FloatVector.broadcast(S16, dw * x3.scales[b]);
            lo3 = d3.fma(quads(qLo.mul(FloatVector.fromArray(S16, x3.values, a))), lo3);
            hi3 = d3.fma(quads(qHi.mul(FloatVector.fromArray(S16, x3.values, a + 16))), hi3);
            if (affine) {
                float mw = Layouts.f16(w, blk + 2);
                m0 = Math.fma(mw, x0.sums[b], m0);
                m1 = Math.fma(mw, x1.sums[b], m1);
                m2 = Math.fma(mw, x2.sums[b], m2);
                m3 = Math.fma(mw, x3.sums[b], m3);
            }
        }
        outs[from][row] = finish(lo0, hi0, m0);
        outs[from + 1][row] = finish(lo1, hi1, m1);
        outs[from + 2][row] = finish(lo2, hi2, m2);
        outs[from + 3][row] = finish(lo3, hi3, m3);
    }
}
