package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q8_0 rows in ggml's AVX2 order ({@link LegacyQuantKernels#ggmlOrder}, which states it one value at a
 * time), vectorized without changing a single rounding. Lane k of a block is the integer dot of values
 * 4k..4k+3: read as little-endian ints, the block's 32 quants are exactly those eight groups of four, one
 * per int lane, so shifting out byte j of every lane gives value 4k + j in lane k; the activation keeps its
 * quants in the same order ({@link Activation#byLane}). Products and their four-term sums are exact in f32
 * (|Σ| ≤ 4·128·127 &lt; 2^24), so only the float steps must keep ggml's order, and they do: one
 * {@code fma(d_w·d_x, lane, acc)} per block and lane, {@link GgmlSums#hsum8} at the end.
 */
final class Q8_0Kernel implements RowKernel {

    static final Q8_0Kernel INSTANCE = new Q8_0Kernel();

    private static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;

    private Q8_0Kernel() {
    }

    /** Byte {@code j} (0..3) of every int lane, sign-extended, as floats. */
    private static FloatVector quant(IntVector packed, int j) {
        IntVector v = j == 3 ? packed : packed.lanewise(VectorOperators.LSHL, 24 - 8 * j);
        return (FloatVector) v.lanewise(VectorOperators.ASHR, 24).convert(VectorOperators.I2F, 0);
    }

    private static IntVector packed(MemorySegment w, long blk) {
        return IntVector.fromMemorySegment(I8, w, blk + 2, Simd.LE);
    }

    /** The eight exact lane sums of a block against the activation's quants at {@code at}. */
    private static FloatVector lanes(FloatVector q0, FloatVector q1, FloatVector q2, FloatVector q3, float[] x, int at) {
        FloatVector l = q0.mul(FloatVector.fromArray(F8, x, at));
        l = q1.fma(FloatVector.fromArray(F8, x, at + 8), l);
        l = q2.fma(FloatVector.fromArray(F8, x, at + 16), l);
        return q3.fma(FloatVector.fromArray(F8, x, at + 24), l);
    }

    private static float finish(FloatVector acc) {
        // + 0f: ggml adds its (here zero) affine term, which turns a -0 sum into +0
        return GgmlSums.hsum8(acc.lane(0), acc.lane(1), acc.lane(2), acc.lane(3),
                acc.lane(4), acc.lane(5), acc.lane(6), acc.lane(7)) + 0f;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.byLane;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            IntVector p = packed(w, blk);
            FloatVector l = lanes(quant(p, 0), quant(p, 1), quant(p, 2), quant(p, 3), xs, 32 * b);
            acc = FloatVector.broadcast(F8, Layouts.f16(w, blk) * x.scales[b]).fma(l, acc);
        }
        return finish(acc);
    }

    /** Four activations against one row: each block's quants unpacked once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        FloatVector acc0 = FloatVector.zero(F8), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            IntVector p = packed(w, blk);
            FloatVector q0 = quant(p, 0), q1 = quant(p, 1), q2 = quant(p, 2), q3 = quant(p, 3);
            float dw = Layouts.f16(w, blk);
            int at = 32 * b;
            acc0 = FloatVector.broadcast(F8, dw * x0.scales[b]).fma(lanes(q0, q1, q2, q3, x0.byLane, at), acc0);
            acc1 = FloatVector.broadcast(F8, dw * x1.scales[b]).fma(lanes(q0, q1, q2, q3, x1.byLane, at), acc1);
            acc2 = FloatVector.broadcast(F8, dw * x2.scales[b]).fma(lanes(q0, q1, q2, q3, x2.byLane, at), acc2);
            acc3 = FloatVector.broadcast(F8, dw * x3.scales[b]).fma(lanes(q0, q1, q2, q3, x3.byLane, at), acc3);
        }
        outs[from][row] = finish(acc0);
        outs[from + 1][row] = finish(acc1);
        outs[from + 2][row] = finish(acc2);
        outs[from + 3][row] = finish(acc3);
    }
}
