package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q8_0 rows in ggml's AVX2 order ({@link LegacyQuantKernels#ggmlOrder}, which states it one value at a
 * time), vectorized without changing a single rounding: lane k of a block is the integer dot of values
 * 4k..4k+3, exact in f32 (|Σ| ≤ 4·128·127 &lt; 2^24), so it may be formed in any order — here as products
 * in 16-lane vectors whose neighbours are added pairwise twice (after which lanes 4k..4k+3 of the first
 * half all hold lane k, and of the second half lane 4 + k). Only the float steps must keep ggml's order,
 * and they do: one {@code fma(d_w·d_x, lane, acc)} per block and lane, {@link GgmlSums#hsum8} at the end.
 */
final class Q8_0Kernel implements RowKernel {

    static final Q8_0Kernel INSTANCE = new Q8_0Kernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorShuffle<Float> PAIRS = VectorShuffle.fromOp(S16, i -> i ^ 1);
    private static final VectorShuffle<Float> QUADS = VectorShuffle.fromOp(S16, i -> i ^ 2);

    private Q8_0Kernel() {
    }

    /** The 16 quants at {@code at}, as floats. */
    private static FloatVector quants(MemorySegment w, long at) {
        return (FloatVector) ByteVector.fromMemorySegment(B16, w, at, Simd.LE).convertShape(VectorOperators.B2F, S16, 0);
    }

    /** Lanes 4k..4k+3 of the result: the exact Σ of products 4k..4k+3 of {@code q·x}. */
    private static FloatVector groupsOf4(FloatVector q, float[] x, int at) {
        FloatVector p = q.mul(FloatVector.fromArray(S16, x, at));
        p = p.add(p.rearrange(PAIRS));
        return p.add(p.rearrange(QUADS));
    }

    private static float finish(FloatVector lo, FloatVector hi) {
        // + 0f: ggml adds its (here zero) affine term, which turns a -0 sum into +0
        return GgmlSums.hsum8(lo.lane(0), lo.lane(4), lo.lane(8), lo.lane(12),
                hi.lane(0), hi.lane(4), hi.lane(8), hi.lane(12)) + 0f;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        FloatVector lo = FloatVector.zero(S16), hi = lo;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            FloatVector d = FloatVector.broadcast(S16, Layouts.f16(w, blk) * x.scales[b]);
            lo = d.fma(groupsOf4(quants(w, blk + 2), xs, 32 * b), lo);
            hi = d.fma(groupsOf4(quants(w, blk + 18), xs, 32 * b + 16), hi);
        }
        return finish(lo, hi);
    }

    /** Four activations against one row: each block's quants widened once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        FloatVector lo0 = FloatVector.zero(S16), hi0 = lo0, lo1 = lo0, hi1 = lo0, lo2 = lo0, hi2 = lo0, lo3 = lo0, hi3 = lo0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            FloatVector qLo = quants(w, blk + 2), qHi = quants(w, blk + 18);
            float dw = Layouts.f16(w, blk);
            int at = 32 * b;
            FloatVector d = FloatVector.broadcast(S16, dw * x0.scales[b]);
            lo0 = d.fma(groupsOf4(qLo, x0.values, at), lo0);
            hi0 = d.fma(groupsOf4(qHi, x0.values, at + 16), hi0);
            d = FloatVector.broadcast(S16, dw * x1.scales[b]);
            lo1 = d.fma(groupsOf4(qLo, x1.values, at), lo1);
            hi1 = d.fma(groupsOf4(qHi, x1.values, at + 16), hi1);
            d = FloatVector.broadcast(S16, dw * x2.scales[b]);
            lo2 = d.fma(groupsOf4(qLo, x2.values, at), lo2);
            hi2 = d.fma(groupsOf4(qHi, x2.values, at + 16), hi2);
            d = FloatVector.broadcast(S16, dw * x3.scales[b]);
            lo3 = d.fma(groupsOf4(qLo, x3.values, at), lo3);
            hi3 = d.fma(groupsOf4(qHi, x3.values, at + 16), hi3);
        }
        outs[from][row] = finish(lo0, hi0);
        outs[from + 1][row] = finish(lo1, hi1);
        outs[from + 2][row] = finish(lo2, hi2);
        outs[from + 3][row] = finish(lo3, hi3);
    }
}
