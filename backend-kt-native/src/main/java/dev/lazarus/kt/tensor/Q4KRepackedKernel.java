package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K rows as llama-server's repacked GEMV and GEMM round them ({@link GgmlKQuantKernels#q4kRepacked} and
 * {@link GgmlKQuantKernels#q4kRepackedGemm} state the order one value at a time), vectorized where the
 * arithmetic is exact: the scaled dot of a pair of sub-blocks is an integer below 2·63·32·15·127 &lt; 2^24,
 * so it is formed in f32 vectors and summed across lanes in any order without a rounding, then carried on
 * as an int; the sums over a super-block (which may pass 2^24) stay integers, and only the float steps,
 * the two fma folds per {@code subBlocksPerFold} sub-blocks and the final subtraction, keep ggml's order.
 */
final class Q4KRepackedKernel implements RowKernel {

    /** llama-server's GEMV (one activation row): one fold per 256-value super-block. */
    static final Q4KRepackedKernel GEMV = new Q4KRepackedKernel(8);
    /** Its GEMM (activation rows in groups of four): one fold per pair of sub-blocks. */
    static final Q4KRepackedKernel GEMM = new Q4KRepackedKernel(2);

    private static final VectorSpecies<Float> S16 = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;

    private final int subBlocksPerFold;

    private Q4KRepackedKernel(int subBlocksPerFold) {
        this.subBlocksPerFold = subBlocksPerFold;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] out = new float[1];
        dots(w, o, new Activation[] {x}, 0, 1, n, new float[][] {out}, 0);
        return out[0];
    }

    /** Four activations against one row: each block's quants and scales unpacked once, every product exactly {@link #dot}. */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        dots(w, o, xs, from, GROUP, n, outs, row);
    }

    private void dots(MemorySegment w, long o, Activation[] xs, int from, int count, int n, float[][] outs, int row) {
        float[] acc = new float[count], accMin = new float[count];
        int[] isum = new int[count], minSum = new int[count];
        FloatVector[] q = new FloatVector[4];
        int[] scale = new int[8], min = new int[8];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 144L * b;
            long qs = blk + 16;
            for (int j = 0; j < 8; j++) {
                scale[j] = Layouts.kScale(w, blk + 4, j);
                min[j] = Layouts.kMin(w, blk + 4, j);
            }
            float d = Layouts.f16(w, blk), dmin = Layouts.f16(w, blk + 2);
            for (int pair = 0; pair < 4; pair++) {
                // sub-blocks 2·pair (low nibbles) and 2·pair + 1 (high nibbles) share 32 bytes
                ByteVector b0 = ByteVector.fromMemorySegment(B16, w, qs + 32L * pair, Simd.LE);
                ByteVector b1 = ByteVector.fromMemorySegment(B16, w, qs + 32L * pair + 16, Simd.LE);
                q[0] = floats(b0.and((byte) 0xF));
                q[1] = floats(b1.and((byte) 0xF));
                q[2] = floats(b0.lanewise(VectorOperators.LSHR, 4).and((byte) 0xF));
                q[3] = floats(b1.lanewise(VectorOperators.LSHR, 4).and((byte) 0xF));
                int j = 2 * pair;
                for (int v = 0; v < count; v++) {
                    Activation x = xs[from + v];
                    isum[v] += pairSum(q, scale[j], scale[j + 1], x.values, 256 * b + 64 * pair);
                    int[] bs = x.bsums;
                    int at = 16 * b + 2 * j;
                    minSum[v] += min[j] * (bs[at] + bs[at + 1]);
                    minSum[v] += min[j + 1] * (bs[at + 2] + bs[at + 3]);
                    if ((j + 2) % subBlocksPerFold == 0) {
                        float dy = x.scales[b];
                        acc[v] = Math.fma((float) isum[v], d * dy, acc[v]);
                        accMin[v] = Math.fma((float) minSum[v], dmin * dy, accMin[v]);
                        isum[v] = 0;
                        minSum[v] = 0;
                    }
                }
            }
        }
        for (int v = 0; v < count; v++) {
            outs[from + v][row] = acc[v] - accMin[v];
        }
    }

    private static FloatVector floats(ByteVector v) {
        return (FloatVector) v.convertShape(VectorOperators.B2F, S16, 0);
    }

    /**
     * scale_lo·Σ(q·x) of the low sub-block plus scale_hi·Σ(q·x) of the high one: exact in f32 lane by lane
     * and in the sum (at most 2·63·32·15·127 &lt; 2^24), so the lanes may be added in any order.
     */
    private static int pairSum(FloatVector[] q, int scaleLo, int scaleHi, float[] x, int at) {
        FloatVector lo = q[0].mul(FloatVector.fromArray(S16, x, at)).add(q[1].mul(FloatVector.fromArray(S16, x, at + 16)));
        FloatVector hi = q[2].mul(FloatVector.fromArray(S16, x, at + 32)).add(q[3].mul(FloatVector.fromArray(S16, x, at + 48)));
        return (int) lo.mul(scaleLo).add(hi.mul(scaleHi)).reduceLanes(VectorOperators.ADD);
    }
}
