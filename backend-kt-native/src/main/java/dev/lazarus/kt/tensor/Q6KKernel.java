package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K rows in ggml's vec_dot_q6_K_q8_K order ({@link GgmlKQuantKernels#q6k} states it one value at a
 * time), vectorized where the arithmetic is exact: lane k of a super-block, the integer
 * {@code Σ scale·(q - 32)·y} over values 4k..4k+3 of its eight 32-value groups, stays below
 * 8·4·128·32·127 &lt; 2^24, so it is formed in f32 vectors in any order (products per 16-value half with
 * its scale, then neighbours added pairwise twice as in {@link Q8_0Kernel}); the float steps, one
 * {@code fma(d_y·d_w, lane, acc)} per super-block and lane and {@link GgmlSums#hsum8}, keep ggml's order.
 */
final class Q6KKernel implements RowKernel {

    static final Q6KKernel INSTANCE = new Q6KKernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorShuffle<Float> PAIRS = VectorShuffle.fromOp(S16, i -> i ^ 1);
    private static final VectorShuffle<Float> QUADS = VectorShuffle.fromOp(S16, i -> i ^ 2);

    private Q6KKernel() {
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        FloatVector accLo = FloatVector.zero(S16), accHi = accLo;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            FloatVector lo = FloatVector.zero(S16), hi = lo;
            for (int h = 0; h < 2; h++) {
                for (int g = 0; g < 4; g++) {
                    int at = 256 * b + 128 * h + 32 * g;
                    long scale = blk + 192 + 8L * h + 2L * g;
                    lo = scaled(w, blk, h, g, 0, xs, at, Layouts.i8(w, scale)).add(lo);
                    hi = scaled(w, blk, h, g, 16, xs, at + 16, Layouts.i8(w, scale + 1)).add(hi);
                }
            }
            FloatVector d = FloatVector.broadcast(S16, x.scales[b] * Layouts.f16(w, blk + 208));
            accLo = d.fma(groupsOf4(lo), accLo);
            accHi = d.fma(groupsOf4(hi), accHi);
        }
        return GgmlSums.hsum8(accLo.lane(0), accLo.lane(4), accLo.lane(8), accLo.lane(12),
                accHi.lane(0), accHi.lane(4), accHi.lane(8), accHi.lane(12));
    }

    /** scale·(q - 32)·y for values e0..e0+15 of group g of half h (exact integers in f32). */
    private static FloatVector scaled(MemorySegment w, long blk, int h, int g, int e0, float[] xs, int at, int scale) {
        ByteVector ql = ByteVector.fromMemorySegment(B16, w, blk + 64L * h + 32L * (g & 1) + e0, Simd.LE);
        ByteVector qh = ByteVector.fromMemorySegment(B16, w, blk + 128 + 32L * h + e0, Simd.LE);
        ByteVector nibble = (g < 2 ? ql : ql.lanewise(VectorOperators.LSHR, 4)).and((byte) 0xF);
        ByteVector high = qh.lanewise(VectorOperators.LSHR, 2 * g).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
        ByteVector q = nibble.or(high).sub((byte) 32);
        FloatVector qf = (FloatVector) q.convertShape(VectorOperators.B2F, S16, 0);
        return qf.mul(FloatVector.fromArray(S16, xs, at)).mul(scale);
    }

    private static FloatVector groupsOf4(FloatVector p) {
        p = p.add(p.rearrange(PAIRS));
        return p.add(p.rearrange(QUADS));
    }
}
