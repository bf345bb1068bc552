package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q6_K rows in ggml's vec_dot_q6_K_q8_K order ({@link GgmlKQuantKernels#q6k} states it one value at a
 * time), vectorized where the arithmetic is exact: the products {@code scale·q·y} of the unsigned 6-bit codes
 * are summed per value position over the eight 32-value groups in f32 vectors (|Σ| &lt; 8·63·127·128 &lt;
 * 2^24, exact), lane k of a super-block (values 4k..4k+3 of every group) is then completed as an int and has
 * the -32 offset taken off through the activation's sums, {@code 32·(scale_2k·bsum_2k + scale_2k+1·bsum_2k+1)},
 * as Debian's build does; the float steps, one {@code fma(d_y·d_w, lane, acc)} per super-block and lane and
 * {@link GgmlSums#hsum8}, keep ggml's order.
 */
final class Q6KKernel implements RowKernel {

    static final Q6KKernel INSTANCE = new Q6KKernel();

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;

    private Q6KKernel() {
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        float[] acc = new float[8];
        float[] products = new float[2 * S16.length()];
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
            // each of the 16 lanes holds eight products, |Σ| < 8·63·127·128 < 2^24: exact; the groups of four
            // (which may pass 2^24) are added as ints, and the -32 offset comes off per lane through the bsums
            lo.intoArray(products, 0);
            hi.intoArray(products, S16.length());
            float d = x.scales[b] * Layouts.f16(w, blk + 208);
            for (int k = 0; k < 8; k++) {
                int lane = (int) products[4 * k] + (int) products[4 * k + 1] + (int) products[4 * k + 2] + (int) products[4 * k + 3];
                lane -= 32 * (Layouts.i8(w, blk + 192 + 2L * k) * x.bsums[16 * b + 2 * k]
                        + Layouts.i8(w, blk + 193 + 2L * k) * x.bsums[16 * b + 2 * k + 1]);
                acc[k] = Math.fma(d, (float) lane, acc[k]);
            }
        }
        return GgmlSums.hsum8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]);
    }

    /** scale·q·y (q the unsigned 6-bit code) for values e0..e0+15 of group g of half h (exact integers in f32). */
    private static FloatVector scaled(MemorySegment w, long blk, int h, int g, int e0, float[] xs, int at, int scale) {
        ByteVector ql = ByteVector.fromMemorySegment(B16, w, blk + 64L * h + 32L * (g & 1) + e0, Simd.LE);
        ByteVector qh = ByteVector.fromMemorySegment(B16, w, blk + 128 + 32L * h + e0, Simd.LE);
        ByteVector nibble = (g < 2 ? ql : ql.lanewise(VectorOperators.LSHR, 4)).and((byte) 0xF);
        ByteVector high = qh.lanewise(VectorOperators.LSHR, 2 * g).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
        ByteVector q = nibble.or(high);
        FloatVector qf = (FloatVector) q.convertShape(VectorOperators.B2F, S16, 0);
        return qf.mul(FloatVector.fromArray(S16, xs, at)).mul(scale);
    }
}
