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

    /**
     * Four activations against one row, every product exactly {@link #dot}: two {@link #pair}s, each block's quants
     * unpacked once per pair.
     *
     * <p>Not all four in one method (as before): that method's parse reached about 22,500 C2 nodes, past the 18,000 at
     * which C2 stops inlining methods that are not the JDK's own ({@code NodeCountInliningCutoff}); C2 then leaves the
     * vector-passing helpers {@link #lanes} / {@link #finish} out of line and boxes every vector they take. Alone in the
     * JVM it got away with it (only {@link #finish}, after the loop, was cut off), but once the JDK's shared Vector
     * API call sites ({@code FloatVector.fma}, {@code IntVector.lanewise}) had also seen the 512-bit vectors of every
     * other kernel, C2 inlined those for both shapes, ran out sooner and cut off {@link #lanes} inside the loop: Q8_0
     * prefill 4-7x slower whenever a Q4_K model had run first (docs/benchmarks.md, "Q8_0 prefill no longer depends
     * on what ran before"). A pair parses to about 16,000 nodes even then.
     */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        pair(w, o, xs[from], xs[from + 1], n, outs[from], outs[from + 1], row);
        pair(w, o, xs[from + 2], xs[from + 3], n, outs[from + 2], outs[from + 3], row);
    }

    /** outX[row], outY[row] = {@link #dot} of the row at {@code o} with x and with y. */
    private static void pair(MemorySegment w, long o, Activation x, Activation y, int n, float[] outX, float[] outY,
                             int row) {
        float[] xs = x.byLane, ys = y.byLane;
        FloatVector accX = FloatVector.zero(F8), accY = accX;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            IntVector p = packed(w, blk);
            FloatVector q0 = quant(p, 0), q1 = quant(p, 1), q2 = quant(p, 2), q3 = quant(p, 3);
            float dw = Layouts.f16(w, blk);
            int at = 32 * b;
            accX = FloatVector.broadcast(F8, dw * x.scales[b]).fma(lanes(q0, q1, q2, q3, xs, at), accX);
            accY = FloatVector.broadcast(F8, dw * y.scales[b]).fma(lanes(q0, q1, q2, q3, ys, at), accY);
        }
        outX[row] = finish(accX);
        outY[row] = finish(accY);
    }
}
