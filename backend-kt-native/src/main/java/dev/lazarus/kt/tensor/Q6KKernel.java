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
}
