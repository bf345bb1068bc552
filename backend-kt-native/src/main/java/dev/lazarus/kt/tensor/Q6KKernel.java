package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
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
 *
 * <p>The bytes of a 16-value slice are widened to int lanes once for the four groups that share them
 * (low and high nibbles of two {@code ql} runs, four bit pairs of one {@code qh} run), and the 6-bit
 * quants are put together with int shifts (x86 has no byte shifts). The vector code is written out flat:
 * a helper taking or returning vectors that C2 does not inline boxes them.
 */
final class Q6KKernel implements RowKernel {

    static final Q6KKernel INSTANCE = new Q6KKernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
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
                for (int e0 = 0; e0 < 32; e0 += 16) {
                    IntVector ql0 = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 64L * h + e0, Simd.LE)
                            .convertShape(VectorOperators.B2I, I16, 0);
                    IntVector ql1 = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 64L * h + 32 + e0, Simd.LE)
                            .convertShape(VectorOperators.B2I, I16, 0);
                    IntVector qh = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 128 + 32L * h + e0, Simd.LE)
                            .convertShape(VectorOperators.B2I, I16, 0);
                    FloatVector q0 = (FloatVector) ql0.and(0xF).or(qh.and(3).lanewise(VectorOperators.LSHL, 4)).sub(32)
                            .convert(VectorOperators.I2F, 0);
                    FloatVector q1 = (FloatVector) ql1.and(0xF).or(qh.and(0xC).lanewise(VectorOperators.LSHL, 2)).sub(32)
                            .convert(VectorOperators.I2F, 0);
                    FloatVector q2 = (FloatVector) ql0.lanewise(VectorOperators.LSHR, 4).and(0xF).or(qh.and(0x30)).sub(32)
                            .convert(VectorOperators.I2F, 0);
                    FloatVector q3 = (FloatVector) ql1.lanewise(VectorOperators.LSHR, 4).and(0xF)
                            .or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30)).sub(32).convert(VectorOperators.I2F, 0);
                    int at = 256 * b + 128 * h + e0;
                    long scale = blk + 192 + 8L * h + (e0 >> 4);
                    FloatVector s = q0.mul(FloatVector.fromArray(S16, xs, at)).mul(Layouts.i8(w, scale));
                    s = q1.mul(FloatVector.fromArray(S16, xs, at + 32)).fma(FloatVector.broadcast(S16, Layouts.i8(w, scale + 2)), s);
                    s = q2.mul(FloatVector.fromArray(S16, xs, at + 64)).fma(FloatVector.broadcast(S16, Layouts.i8(w, scale + 4)), s);
                    s = q3.mul(FloatVector.fromArray(S16, xs, at + 96)).fma(FloatVector.broadcast(S16, Layouts.i8(w, scale + 6)), s);
                    if (e0 == 0) {
                        lo = lo.add(s);
                    } else {
                        hi = hi.add(s);
                    }
                }
            }
            FloatVector d = FloatVector.broadcast(S16, x.scales[b] * Layouts.f16(w, blk + 208));
            lo = lo.add(lo.rearrange(PAIRS));
            hi = hi.add(hi.rearrange(PAIRS));
            accLo = d.fma(lo.add(lo.rearrange(QUADS)), accLo);
            accHi = d.fma(hi.add(hi.rearrange(QUADS)), accHi);
        }
        return GgmlSums.hsum8(accLo.lane(0), accLo.lane(4), accLo.lane(8), accLo.lane(12),
                accHi.lane(0), accHi.lane(4), accHi.lane(8), accHi.lane(12));
    }

    /** Four activations against one row: each slice's quants assembled once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float[] v0 = x0.values, v1 = x1.values, v2 = x2.values, v3 = x3.values;
        FloatVector zero = FloatVector.zero(S16);
        FloatVector accLo0 = zero, accLo1 = zero, accLo2 = zero, accLo3 = zero;
        FloatVector accHi0 = zero, accHi1 = zero, accHi2 = zero, accHi3 = zero;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            FloatVector lo0 = zero, lo1 = zero, lo2 = zero, lo3 = zero, hi0 = zero, hi1 = zero, hi2 = zero, hi3 = zero;
            for (int h = 0; h < 2; h++) {
                for (int e0 = 0; e0 < 32; e0 += 16) {
                    IntVector ql0 = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 64L * h + e0, Simd.LE)
                            .convertShape(VectorOperators.B2I, I16, 0);
                    IntVector ql1 = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 64L * h + 32 + e0, Simd.LE)
                            .convertShape(VectorOperators.B2I, I16, 0);
                    IntVector qh = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 128 + 32L * h + e0, Simd.LE)
                            .convertShape(VectorOperators.B2I, I16, 0);
                    FloatVector q0 = (FloatVector) ql0.and(0xF).or(qh.and(3).lanewise(VectorOperators.LSHL, 4)).sub(32)
                            .convert(VectorOperators.I2F, 0);
                    FloatVector q1 = (FloatVector) ql1.and(0xF).or(qh.and(0xC).lanewise(VectorOperators.LSHL, 2)).sub(32)
                            .convert(VectorOperators.I2F, 0);
                    FloatVector q2 = (FloatVector) ql0.lanewise(VectorOperators.LSHR, 4).and(0xF).or(qh.and(0x30)).sub(32)
                            .convert(VectorOperators.I2F, 0);
                    FloatVector q3 = (FloatVector) ql1.lanewise(VectorOperators.LSHR, 4).and(0xF)
                            .or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30)).sub(32).convert(VectorOperators.I2F, 0);
                    int at = 256 * b + 128 * h + e0;
                    long scale = blk + 192 + 8L * h + (e0 >> 4);
                    FloatVector sc0 = FloatVector.broadcast(S16, Layouts.i8(w, scale));
                    FloatVector sc1 = FloatVector.broadcast(S16, Layouts.i8(w, scale + 2));
                    FloatVector sc2 = FloatVector.broadcast(S16, Layouts.i8(w, scale + 4));
                    FloatVector sc3 = FloatVector.broadcast(S16, Layouts.i8(w, scale + 6));
                    FloatVector s0 = q0.mul(FloatVector.fromArray(S16, v0, at)).mul(sc0);
                    s0 = q1.mul(FloatVector.fromArray(S16, v0, at + 32)).fma(sc1, s0);
                    s0 = q2.mul(FloatVector.fromArray(S16, v0, at + 64)).fma(sc2, s0);
                    s0 = q3.mul(FloatVector.fromArray(S16, v0, at + 96)).fma(sc3, s0);
                    FloatVector s1 = q0.mul(FloatVector.fromArray(S16, v1, at)).mul(sc0);
                    s1 = q1.mul(FloatVector.fromArray(S16, v1, at + 32)).fma(sc1, s1);
                    s1 = q2.mul(FloatVector.fromArray(S16, v1, at + 64)).fma(sc2, s1);
                    s1 = q3.mul(FloatVector.fromArray(S16, v1, at + 96)).fma(sc3, s1);
                    FloatVector s2 = q0.mul(FloatVector.fromArray(S16, v2, at)).mul(sc0);
                    s2 = q1.mul(FloatVector.fromArray(S16, v2, at + 32)).fma(sc1, s2);
                    s2 = q2.mul(FloatVector.fromArray(S16, v2, at + 64)).fma(sc2, s2);
                    s2 = q3.mul(FloatVector.fromArray(S16, v2, at + 96)).fma(sc3, s2);
                    FloatVector s3 = q0.mul(FloatVector.fromArray(S16, v3, at)).mul(sc0);
                    s3 = q1.mul(FloatVector.fromArray(S16, v3, at + 32)).fma(sc1, s3);
                    s3 = q2.mul(FloatVector.fromArray(S16, v3, at + 64)).fma(sc2, s3);
                    s3 = q3.mul(FloatVector.fromArray(S16, v3, at + 96)).fma(sc3, s3);
                    if (e0 == 0) {
                        lo0 = lo0.add(s0);
                        lo1 = lo1.add(s1);
                        lo2 = lo2.add(s2);
                        lo3 = lo3.add(s3);
                    } else {
                        hi0 = hi0.add(s0);
                        hi1 = hi1.add(s1);
                        hi2 = hi2.add(s2);
                        hi3 = hi3.add(s3);
                    }
                }
            }
            float dw = Layouts.f16(w, blk + 208);
            FloatVector d0 = FloatVector.broadcast(S16, x0.scales[b] * dw);
            lo0 = lo0.add(lo0.rearrange(PAIRS));
            hi0 = hi0.add(hi0.rearrange(PAIRS));
            accLo0 = d0.fma(lo0.add(lo0.rearrange(QUADS)), accLo0);
            accHi0 = d0.fma(hi0.add(hi0.rearrange(QUADS)), accHi0);
            FloatVector d1 = FloatVector.broadcast(S16, x1.scales[b] * dw);
            lo1 = lo1.add(lo1.rearrange(PAIRS));
            hi1 = hi1.add(hi1.rearrange(PAIRS));
            accLo1 = d1.fma(lo1.add(lo1.rearrange(QUADS)), accLo1);
            accHi1 = d1.fma(hi1.add(hi1.rearrange(QUADS)), accHi1);
            FloatVector d2 = FloatVector.broadcast(S16, x2.scales[b] * dw);
            lo2 = lo2.add(lo2.rearrange(PAIRS));
            hi2 = hi2.add(hi2.rearrange(PAIRS));
            accLo2 = d2.fma(lo2.add(lo2.rearrange(QUADS)), accLo2);
            accHi2 = d2.fma(hi2.add(hi2.rearrange(QUADS)), accHi2);
            FloatVector d3 = FloatVector.broadcast(S16, x3.scales[b] * dw);
            lo3 = lo3.add(lo3.rearrange(PAIRS));
            hi3 = hi3.add(hi3.rearrange(PAIRS));
            accLo3 = d3.fma(lo3.add(lo3.rearrange(QUADS)), accLo3);
            accHi3 = d3.fma(hi3.add(hi3.rearrange(QUADS)), accHi3);
        }
        outs[from][row] = GgmlSums.hsum8(accLo0.lane(0), accLo0.lane(4), accLo0.lane(8), accLo0.lane(12),
                accHi0.lane(0), accHi0.lane(4), accHi0.lane(8), accHi0.lane(12));
        outs[from + 1][row] = GgmlSums.hsum8(accLo1.lane(0), accLo1.lane(4), accLo1.lane(8), accLo1.lane(12),
                accHi1.lane(0), accHi1.lane(4), accHi1.lane(8), accHi1.lane(12));
        outs[from + 2][row] = GgmlSums.hsum8(accLo2.lane(0), accLo2.lane(4), accLo2.lane(8), accLo2.lane(12),
                accHi2.lane(0), accHi2.lane(4), accHi2.lane(8), accHi2.lane(12));
        outs[from + 3][row] = GgmlSums.hsum8(accLo3.lane(0), accLo3.lane(4), accLo3.lane(8), accLo3.lane(12),
                accHi3.lane(0), accHi3.lane(4), accHi3.lane(8), accHi3.lane(12));
    }
}
