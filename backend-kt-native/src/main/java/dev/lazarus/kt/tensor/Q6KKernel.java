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
 * quants are put together with int shifts (x86 has no byte shifts); the sixteen scales come from two
 * long loads. Each super-block is its own method that takes and returns no vectors: ggml's accumulator
 * lanes live in a float array between super-blocks. Vector helpers that C2 does not inline box their
 * vectors, and one method for the whole row grew past C2's inlining node budget, which left vector
 * operations uninlined (both measured several times slower).
 */
final class Q6KKernel implements RowKernel {

    static final Q6KKernel INSTANCE = new Q6KKernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorShuffle<Float> PAIRS = VectorShuffle.fromOp(S16, i -> i ^ 1);
    private static final VectorShuffle<Float> QUADS = VectorShuffle.fromOp(S16, i -> i ^ 2);
    /** Accumulator floats per activation: ggml's lanes 0-3 at 0, 4, 8, 12 and lanes 4-7 at 16, 20, 24, 28. */
    private static final int ACC = 32;

    private Q6KKernel() {
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        return dot(w, o, x, n, new float[ACC]);
    }

    /** The rows of a range with one accumulator array (zeroed per row). */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        float[] acc = new float[ACC];
        for (int r = rowStart; r < rowEnd; r++) {
            java.util.Arrays.fill(acc, 0f);
            out[r] = dot(w, r * rowBytes, x, n, acc);
        }
    }

    private static float dot(MemorySegment w, long o, Activation x, int n, float[] acc) {
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            superBlock(w, blk, x.values, 256 * b, x.scales[b] * Layouts.f16(w, blk + 208), acc);
        }
        return lanesSum(acc, 0);
    }

    /** Four activations against one row: each slice's quants assembled once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float[] acc = new float[4 * ACC];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            float dw = Layouts.f16(w, blk + 208);
            superBlock4(w, blk, x0.values, x1.values, x2.values, x3.values, 256 * b,
                x0.scales[b] * dw, x1.scales[b] * dw, x2.scales[b] * dw, x3.scales[b] * dw, acc);
        }
        for (int i = 0; i < 4; i++) {
            outs[from + i][row] = lanesSum(acc, ACC * i);
        }
    }

    private static float lanesSum(float[] acc, int off) {
        return GgmlSums.hsum8(acc[off], acc[off + 4], acc[off + 8], acc[off + 12],
                acc[off + 16], acc[off + 20], acc[off + 24], acc[off + 28]);
    }

    /** acc += d · (the super-block's lanes against xs[at..at+256)), in the layout of {@link #ACC}. */
    private static void superBlock(MemorySegment w, long blk, float[] xs, int at, float d, float[] acc) {
        long scales0 = w.get(Layouts.I64, blk + 192), scales1 = w.get(Layouts.I64, blk + 200);
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
                // the scales of the four groups' halves e0 / 16: bytes 2g + e0 / 16 of this half's eight
                long sb = (h == 0 ? scales0 : scales1) >>> 8 * (e0 >> 4);
                FloatVector sc0 = FloatVector.broadcast(S16, (float) (byte) sb);
                FloatVector sc1 = FloatVector.broadcast(S16, (float) (byte) (sb >>> 16));
                FloatVector sc2 = FloatVector.broadcast(S16, (float) (byte) (sb >>> 32));
                FloatVector sc3 = FloatVector.broadcast(S16, (float) (byte) (sb >>> 48));
                int a = at + 128 * h + e0;
                FloatVector s = q0.mul(FloatVector.fromArray(S16, xs, a)).mul(sc0);
                s = q1.mul(FloatVector.fromArray(S16, xs, a + 32)).fma(sc1, s);
                s = q2.mul(FloatVector.fromArray(S16, xs, a + 64)).fma(sc2, s);
                s = q3.mul(FloatVector.fromArray(S16, xs, a + 96)).fma(sc3, s);
                if (e0 == 0) {
                    lo = lo.add(s);
                } else {
                    hi = hi.add(s);
                }
            }
        }
        lo = lo.add(lo.rearrange(PAIRS));
        hi = hi.add(hi.rearrange(PAIRS));
        FloatVector dv = FloatVector.broadcast(S16, d);
        dv.fma(lo.add(lo.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 0)).intoArray(acc, 0);
        dv.fma(hi.add(hi.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 16)).intoArray(acc, 16);
    }

    /** {@link #superBlock} for four activations, the quants assembled once; acc holds four {@link #ACC} runs. */
    private static void superBlock4(MemorySegment w, long blk, float[] x0, float[] x1, float[] x2, float[] x3, int at,
                                    float d0, float d1, float d2, float d3, float[] acc) {
        long scales0 = w.get(Layouts.I64, blk + 192), scales1 = w.get(Layouts.I64, blk + 200);
        FloatVector zero = FloatVector.zero(S16);
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
                // the scales of the four groups' halves e0 / 16: bytes 2g + e0 / 16 of this half's eight
                long sb = (h == 0 ? scales0 : scales1) >>> 8 * (e0 >> 4);
                FloatVector sc0 = FloatVector.broadcast(S16, (float) (byte) sb);
                FloatVector sc1 = FloatVector.broadcast(S16, (float) (byte) (sb >>> 16));
                FloatVector sc2 = FloatVector.broadcast(S16, (float) (byte) (sb >>> 32));
                FloatVector sc3 = FloatVector.broadcast(S16, (float) (byte) (sb >>> 48));
                int a = at + 128 * h + e0;
                FloatVector s0 = q0.mul(FloatVector.fromArray(S16, x0, a)).mul(sc0);
                s0 = q1.mul(FloatVector.fromArray(S16, x0, a + 32)).fma(sc1, s0);
                s0 = q2.mul(FloatVector.fromArray(S16, x0, a + 64)).fma(sc2, s0);
                s0 = q3.mul(FloatVector.fromArray(S16, x0, a + 96)).fma(sc3, s0);
                FloatVector s1 = q0.mul(FloatVector.fromArray(S16, x1, a)).mul(sc0);
                s1 = q1.mul(FloatVector.fromArray(S16, x1, a + 32)).fma(sc1, s1);
                s1 = q2.mul(FloatVector.fromArray(S16, x1, a + 64)).fma(sc2, s1);
                s1 = q3.mul(FloatVector.fromArray(S16, x1, a + 96)).fma(sc3, s1);
                FloatVector s2 = q0.mul(FloatVector.fromArray(S16, x2, a)).mul(sc0);
                s2 = q1.mul(FloatVector.fromArray(S16, x2, a + 32)).fma(sc1, s2);
                s2 = q2.mul(FloatVector.fromArray(S16, x2, a + 64)).fma(sc2, s2);
                s2 = q3.mul(FloatVector.fromArray(S16, x2, a + 96)).fma(sc3, s2);
                FloatVector s3 = q0.mul(FloatVector.fromArray(S16, x3, a)).mul(sc0);
                s3 = q1.mul(FloatVector.fromArray(S16, x3, a + 32)).fma(sc1, s3);
                s3 = q2.mul(FloatVector.fromArray(S16, x3, a + 64)).fma(sc2, s3);
                s3 = q3.mul(FloatVector.fromArray(S16, x3, a + 96)).fma(sc3, s3);
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
        lo0 = lo0.add(lo0.rearrange(PAIRS));
        hi0 = hi0.add(hi0.rearrange(PAIRS));
        FloatVector dv0 = FloatVector.broadcast(S16, d0);
        dv0.fma(lo0.add(lo0.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 0)).intoArray(acc, 0);
        dv0.fma(hi0.add(hi0.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 16)).intoArray(acc, 16);
        lo1 = lo1.add(lo1.rearrange(PAIRS));
        hi1 = hi1.add(hi1.rearrange(PAIRS));
        FloatVector dv1 = FloatVector.broadcast(S16, d1);
        dv1.fma(lo1.add(lo1.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 32)).intoArray(acc, 32);
        dv1.fma(hi1.add(hi1.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 48)).intoArray(acc, 48);
        lo2 = lo2.add(lo2.rearrange(PAIRS));
        hi2 = hi2.add(hi2.rearrange(PAIRS));
        FloatVector dv2 = FloatVector.broadcast(S16, d2);
        dv2.fma(lo2.add(lo2.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 64)).intoArray(acc, 64);
        dv2.fma(hi2.add(hi2.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 80)).intoArray(acc, 80);
        lo3 = lo3.add(lo3.rearrange(PAIRS));
        hi3 = hi3.add(hi3.rearrange(PAIRS));
        FloatVector dv3 = FloatVector.broadcast(S16, d3);
        dv3.fma(lo3.add(lo3.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 96)).intoArray(acc, 96);
        dv3.fma(hi3.add(hi3.rearrange(QUADS)), FloatVector.fromArray(S16, acc, 112)).intoArray(acc, 112);
    }
}
