package dev.lazarus.kt.quant.q6k;

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
 * Q6_K rows in the vec_dot_q6_K_q8_K order of Debian's build ({@code GgmlKQuantKernels.q6k} states it one
 * value at a time), vectorized where the arithmetic is exact:
 *
 * <ul>
 *   <li>the products {@code scale·q·y} of the unsigned 6-bit codes are summed per value position of a 32-value
 *       group over the super-block's eight groups in f32 vectors (|Σ| &lt; 8·63·127·128 &lt; 2^24: exact, in
 *       any order);</li>
 *   <li>ggml's lane k (positions 4k..4k+3) is completed in int vectors, since a sum of four positions may pass
 *       2^24: the position sums converted (F2I, exact), neighbours added pairwise twice, less the -32 offset
 *       taken off per lane through the activation's bsums, {@code 32·(scale_2k·bsum_2k + scale_2k+1·bsum_2k+1)},
 *       computed in the same int vectors;</li>
 *   <li>the float steps keep ggml's order: {@code fma(d_y·d_w, (float) lane, acc)} per super-block and lane,
 *       then {@link GgmlSums#hsum8}.</li>
 * </ul>
 *
 * <p>The bytes of a 16-value slice are widened to int lanes once for the four groups that share them (low and
 * high nibbles of two {@code ql} runs, four bit pairs of one {@code qh} run) and the codes put together with int
 * shifts (x86 has no byte shifts); the sixteen scales come from two long loads. Written for C2 as
 * {@code Q4KRepackedKernel} is: one method per super-block, no vector crosses a call (the position sums go
 * through a small float array to {@link #fold}), scratch allocated once per row range.
 */
public final class Q6KKernel implements RowKernel {

    public static final Q6KKernel INSTANCE = new Q6KKernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I16 = IntVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorShuffle<Integer> PAIRS = VectorShuffle.fromOp(I16, i -> i ^ 1);
    private static final VectorShuffle<Integer> QUADS = VectorShuffle.fromOp(I16, i -> i ^ 2);
    /** Lane 4k of the first half takes ggml lane k's bsum term (k &lt; 4), held at lane 2k of the pair sums. */
    private static final VectorShuffle<Integer> OFFSETS_LO = VectorShuffle.fromOp(I16, i -> i >> 1);
    /** Lane 4k of the second half takes ggml lane 4 + k's, at lane 8 + 2k. */
    private static final VectorShuffle<Integer> OFFSETS_HI = VectorShuffle.fromOp(I16, i -> 8 + (i >> 1));
    /** Accumulator floats per activation: ggml's lanes 0-3 at 0, 4, 8, 12 and lanes 4-7 at 16, 20, 24, 28. */
    private static final int ACC = 32;
    /** Position sums per activation: positions 0-15, then 16-31, of a 32-value group. */
    private static final int SUMS = 32;

    private Q6KKernel() {
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        return dot(w, o, x, n, new float[ACC], new float[SUMS]);
    }

    /** The rows of a range with one scratch (the accumulators zeroed per row). */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        float[] acc = new float[ACC];
        float[] sums = new float[SUMS];
        for (int r = rowStart; r < rowEnd; r++) {
            java.util.Arrays.fill(acc, 0f);
            out[r] = dot(w, r * rowBytes, x, n, acc, sums);
        }
    }

    private static float dot(MemorySegment w, long o, Activation x, int n, float[] acc, float[] sums) {
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            superBlock(w, blk, x.values, 256 * b, sums);
            fold(w, blk, sums, 0, x.bsums, 16 * b, x.scales[b] * Layouts.f16(w, blk + 208), acc, 0);
        }
        return lanesSum(acc, 0);
    }

    /** Four activations against one row: each slice's codes assembled once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float[] acc = new float[GROUP * ACC];
        float[] sums = new float[GROUP * SUMS];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            superBlock4(w, blk, x0.values, x1.values, x2.values, x3.values, 256 * b, sums);
            float dw = Layouts.f16(w, blk + 208);
            for (int i = 0; i < GROUP; i++) {
                Activation x = xs[from + i];
                fold(w, blk, sums, SUMS * i, x.bsums, 16 * b, x.scales[b] * dw, acc, ACC * i);
            }
        }
        for (int i = 0; i < GROUP; i++) {
            outs[from + i][row] = lanesSum(acc, ACC * i);
        }
    }

    private static float lanesSum(float[] acc, int off) {
        return GgmlSums.hsum8(acc[off], acc[off + 4], acc[off + 8], acc[off + 12],
                acc[off + 16], acc[off + 20], acc[off + 24], acc[off + 28]);
    }

    /**
     * acc += d · ggml's eight lanes, from the super-block's position sums: ints from here on (a lane may pass
     * 2^24), the bsum term taken off per lane, one conversion to float per lane. Only lanes 4k of each half
     * matter (the others carry partial sums nobody reads).
     */
    private static void fold(MemorySegment w, long blk, float[] sums, int sumsAt, int[] bsums, int bsumsAt, float d,
                             float[] acc, int accAt) {
        IntVector scales = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 192, Simd.LE)
                .convertShape(VectorOperators.B2I, I16, 0);
        IntVector terms = scales.mul(IntVector.fromArray(I16, bsums, bsumsAt));
        IntVector offsets = terms.add(terms.rearrange(PAIRS)).lanewise(VectorOperators.LSHL, 5);
        FloatVector dv = FloatVector.broadcast(S16, d);
        IntVector lo = (IntVector) FloatVector.fromArray(S16, sums, sumsAt).convert(VectorOperators.F2I, 0);
        lo = lo.add(lo.rearrange(PAIRS));
        lo = lo.add(lo.rearrange(QUADS)).sub(offsets.rearrange(OFFSETS_LO));
        dv.fma((FloatVector) lo.convert(VectorOperators.I2F, 0), FloatVector.fromArray(S16, acc, accAt))
                .intoArray(acc, accAt);
        IntVector hi = (IntVector) FloatVector.fromArray(S16, sums, sumsAt + 16).convert(VectorOperators.F2I, 0);
        hi = hi.add(hi.rearrange(PAIRS));
        hi = hi.add(hi.rearrange(QUADS)).sub(offsets.rearrange(OFFSETS_HI));
        dv.fma((FloatVector) hi.convert(VectorOperators.I2F, 0), FloatVector.fromArray(S16, acc, accAt + 16))
                .intoArray(acc, accAt + 16);
    }

    /** sums[0..32) = Σ over the eight groups of scale·q·y per value position (exact integers in f32). */
    private static void superBlock(MemorySegment w, long blk, float[] xs, int at, float[] sums) {
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
                FloatVector q0 = (FloatVector) ql0.and(0xF).or(qh.and(3).lanewise(VectorOperators.LSHL, 4))
                        .convert(VectorOperators.I2F, 0);
                FloatVector q1 = (FloatVector) ql1.and(0xF).or(qh.and(0xC).lanewise(VectorOperators.LSHL, 2))
                        .convert(VectorOperators.I2F, 0);
                FloatVector q2 = (FloatVector) ql0.lanewise(VectorOperators.LSHR, 4).and(0xF).or(qh.and(0x30))
                        .convert(VectorOperators.I2F, 0);
                FloatVector q3 = (FloatVector) ql1.lanewise(VectorOperators.LSHR, 4).and(0xF)
                        .or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30)).convert(VectorOperators.I2F, 0);
                // the scales of the four groups' halves e0 / 16: bytes 2g + e0 / 16 of this half's eight
                long sb = (h == 0 ? scales0 : scales1) >>> 8 * (e0 >> 4);
                int a = at + 128 * h + e0;
                FloatVector s = q0.mul(FloatVector.fromArray(S16, xs, a)).mul((float) (byte) sb);
                s = q1.mul(FloatVector.fromArray(S16, xs, a + 32)).fma(FloatVector.broadcast(S16, (float) (byte) (sb >>> 16)), s);
                s = q2.mul(FloatVector.fromArray(S16, xs, a + 64)).fma(FloatVector.broadcast(S16, (float) (byte) (sb >>> 32)), s);
                s = q3.mul(FloatVector.fromArray(S16, xs, a + 96)).fma(FloatVector.broadcast(S16, (float) (byte) (sb >>> 48)), s);
                if (e0 == 0) {
                    lo = lo.add(s);
                } else {
                    hi = hi.add(s);
                }
            }
        }
        lo.intoArray(sums, 0);
        hi.intoArray(sums, 16);
    }

    /** {@link #superBlock} for four activations, the codes assembled once; sums holds four {@link #SUMS} runs. */
    private static void superBlock4(MemorySegment w, long blk, float[] x0, float[] x1, float[] x2, float[] x3, int at,
                                    float[] sums) {
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
                FloatVector q0 = (FloatVector) ql0.and(0xF).or(qh.and(3).lanewise(VectorOperators.LSHL, 4))
                        .convert(VectorOperators.I2F, 0);
                FloatVector q1 = (FloatVector) ql1.and(0xF).or(qh.and(0xC).lanewise(VectorOperators.LSHL, 2))
                        .convert(VectorOperators.I2F, 0);
                FloatVector q2 = (FloatVector) ql0.lanewise(VectorOperators.LSHR, 4).and(0xF).or(qh.and(0x30))
                        .convert(VectorOperators.I2F, 0);
                FloatVector q3 = (FloatVector) ql1.lanewise(VectorOperators.LSHR, 4).and(0xF)
                        .or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30)).convert(VectorOperators.I2F, 0);
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
        lo0.intoArray(sums, 0);
        hi0.intoArray(sums, 16);
        lo1.intoArray(sums, SUMS);
        hi1.intoArray(sums, SUMS + 16);
        lo2.intoArray(sums, 2 * SUMS);
        hi2.intoArray(sums, 2 * SUMS + 16);
        lo3.intoArray(sums, 3 * SUMS);
        hi3.intoArray(sums, 3 * SUMS + 16);
    }
}
