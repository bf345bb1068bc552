package dev.lazarus.kt.tensor;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Q4_K rows as llama-server's repacked GEMV and GEMM round them ({@link GgmlKQuantKernels#q4kRepacked} and
 * {@link GgmlKQuantKernels#q4kRepackedGemm} state the order one value at a time), vectorized where the
 * arithmetic is exact: the 32-value dot of a sub-block is an integer below 32·15·127 &lt; 2^24, so it is
 * formed in f32 vectors and summed across lanes in any order without a rounding, then carried on as an
 * int; the scaled sums {@code Σ scale·dot} (which may pass 2^24) stay integers, and only the float steps,
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
        float[] xs = x.values;
        float acc = 0, accMin = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 144L * b;
            long scales = blk + 4, qs = blk + 16;
            float dy = x.scales[b];
            int isum = 0, minSum = 0;
            for (int pair = 0; pair < 4; pair++) {
                // sub-blocks 2·pair (low nibbles) and 2·pair + 1 (high nibbles) share 32 bytes
                ByteVector q0 = ByteVector.fromMemorySegment(B16, w, qs + 32L * pair, Simd.LE);
                ByteVector q1 = ByteVector.fromMemorySegment(B16, w, qs + 32L * pair + 16, Simd.LE);
                int at = 256 * b + 64 * pair;
                int lowDot = dot32(q0.and((byte) 0xF), q1.and((byte) 0xF), xs, at);
                int highDot = dot32(q0.lanewise(VectorOperators.LSHR, 4).and((byte) 0xF),
                        q1.lanewise(VectorOperators.LSHR, 4).and((byte) 0xF), xs, at + 32);
                for (int half = 0; half < 2; half++) {
                    int j = 2 * pair + half;
                    isum += Layouts.kScale(w, scales, j) * (half == 0 ? lowDot : highDot);
                    minSum += Layouts.kMin(w, scales, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
                    if ((j + 1) % subBlocksPerFold == 0) {
                        acc = Math.fma((float) isum, Layouts.f16(w, blk) * dy, acc);
                        accMin = Math.fma((float) minSum, Layouts.f16(w, blk + 2) * dy, accMin);
                        isum = 0;
                        minSum = 0;
                    }
                }
            }
        }
        return acc - accMin;
    }

    /** The exact Σ q·x of 32 values: quants of two 16-byte vectors against x[at..at+32). */
    private static int dot32(ByteVector lo, ByteVector hi, float[] x, int at) {
        FloatVector p = ((FloatVector) lo.convertShape(VectorOperators.B2F, S16, 0)).mul(FloatVector.fromArray(S16, x, at));
        p = ((FloatVector) hi.convertShape(VectorOperators.B2F, S16, 0)).fma(FloatVector.fromArray(S16, x, at + 16), p);
        return (int) p.reduceLanes(VectorOperators.ADD);
    }
}
