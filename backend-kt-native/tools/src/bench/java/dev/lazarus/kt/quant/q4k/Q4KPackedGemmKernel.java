package dev.lazarus.kt.quant.q4k;

import static dev.lazarus.kt.tensor.Lanes16.F_ODD_QUADS;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP2;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP4;
import static dev.lazarus.kt.tensor.Lanes16.F_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.F_UPPER_HALF;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Lanes16;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * llama-server's repacked-Q4_K GEMM order ({@code GgmlKQuantKernels.q4kRepackedGemm}: one fold per pair of
 * sub-blocks), which it runs on the activation rows of a batch in groups of four, on the {@link Q4KPacked} layout:
 * bit for bit {@link Q4KRepackedKernel#GEMM}. The group kernel of a dense matrix repacked at load; decode takes
 * {@link Q4KPackedKernel}. Quants masked in place as explained at {@link Q4KPackedKernel}.
 */
public final class Q4KPackedGemmKernel implements RowKernel {

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final int Q = Q4KPacked.QUANT_BYTES;
    private static final int H = Q4KPacked.HEADER_BYTES;
    /** Sub-block k's lanes hold q·16^k, its scale is taken times 16^-k: see {@link Q4KPackedKernel#UNIT}. */
    private static final float[] UNIT = Q4KPackedKernel.UNIT;

    /** The order of the matrix's super-blocks ({@link RowGroups}). */
    private final RowGroups groups;
    /** Byte offset of the matrix's headers in its segment. */
    private final long headers;

    public Q4KPackedGemmKernel(RowGroups groups) {
        this.groups = groups;
        this.headers = groups.blocks() * Q;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        float[] xs = x.values;
        float acc = 0, accMin = 0;
        int row = groups.row(o, Q), step = groups.stride(row);
        long g = groups.block(row, 0);
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            long scales = w.get(Layouts.I64, h), mins = w.get(Layouts.I64, h + 8);
            float dy = x.scales[b], d = w.get(Layouts.F32, h + 16) * dy, dmin = w.get(Layouts.F32, h + 20) * dy;
            IntVector v0 = IntVector.fromMemorySegment(I, w, g * Q, Simd.LE);
            IntVector v1 = IntVector.fromMemorySegment(I, w, g * Q + 64, Simd.LE);
            for (int p = 0; p < 4; p++) {
                FloatVector sum = FloatVector.zero(F);
                for (int k = 2 * p; k < 2 * p + 2; k++) {
                    int at = 256 * b + 32 * k;
                    IntVector n0 = k < 7 ? v0.and(0xF << 4 * k) : v0.lanewise(VectorOperators.LSHR, 28);
                    IntVector n1 = k < 7 ? v1.and(0xF << 4 * k) : v1.lanewise(VectorOperators.LSHR, 28);
                    FloatVector lo = ((FloatVector) n0.convert(VectorOperators.I2F, 0)).mul(FloatVector.fromArray(F, xs, at));
                    lo = ((FloatVector) n1.convert(VectorOperators.I2F, 0)).fma(FloatVector.fromArray(F, xs, at + 16), lo);
                    sum = lo.fma(FloatVector.broadcast(F, (float) ((int) (scales >>> 8 * k) & 0xFF) * UNIT[k]), sum);
                }
                int isum = ((IntVector) sum.convert(VectorOperators.F2I, 0)).reduceLanes(VectorOperators.ADD);
                acc = Math.fma((float) isum, d, acc);
                int k = 16 * b + 4 * p, minLow = (int) (mins >>> 16 * p) & 0xFF, minHigh = (int) (mins >>> 16 * p + 8) & 0xFF;
                accMin = Math.fma((float) (minLow * (x.bsums[k] + x.bsums[k + 1]) + minHigh * (x.bsums[k + 2] + x.bsums[k + 3])),
                        dmin, accMin);
            }
        }
        return acc - accMin;
    }

    /** Four activations, each chunk's quants converted once (see {@code Q4KRepackedKernel.gemm4}). */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        float[] sums = new float[128];
        long[] mins = new long[2];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, min0 = 0, min1 = 0, min2 = 0, min3 = 0;
        int r = groups.row(o, Q), step = groups.stride(r);
        long g = groups.block(r, 0);
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            long m = w.get(Layouts.I64, h + 8);
            mins[0] = Long.expand(m, 0x00FF00FF00FF00FFL) * 0x0101L; // each min twice: against both 16-value bsums
            mins[1] = Long.expand(m >>> 32, 0x00FF00FF00FF00FFL) * 0x0101L;
            superBlock4Pairs(w, g * Q, w.get(Layouts.I64, h), mins, x0, x1, x2, x3, 256 * b, sums);
            float dw = w.get(Layouts.F32, h + 16), dminw = w.get(Layouts.F32, h + 20);
            float d0 = dw * x0.scales[b], d1 = dw * x1.scales[b], d2 = dw * x2.scales[b], d3 = dw * x3.scales[b];
            float m0 = dminw * x0.scales[b], m1 = dminw * x1.scales[b], m2 = dminw * x2.scales[b], m3 = dminw * x3.scales[b];
            for (int p = 0; p < 4; p++) {
                acc0 = Math.fma(sums[16 * p], d0, acc0);
                acc1 = Math.fma(sums[16 * p + 8], d1, acc1);
                acc2 = Math.fma(sums[16 * p + 4], d2, acc2);
                acc3 = Math.fma(sums[16 * p + 12], d3, acc3);
                min0 = Math.fma(sums[64 + 4 * p], m0, min0);
                min1 = Math.fma(sums[80 + 4 * p], m1, min1);
                min2 = Math.fma(sums[96 + 4 * p], m2, min2);
                min3 = Math.fma(sums[112 + 4 * p], m3, min3);
            }
        }
        outs[from][row] = acc0 - min0;
        outs[from + 1][row] = acc1 - min1;
        outs[from + 2][row] = acc2 - min2;
        outs[from + 3][row] = acc3 - min3;
    }

    /** {@code Q4KRepackedKernel.superBlock4Pairs} on the packed quants at {@code q}, same output layout. */
    private static void superBlock4Pairs(MemorySegment w, long q, long scales, long[] mins,
                                         Activation x0, Activation x1, Activation x2, Activation x3, int at0, float[] sums) {
        float[] v0s = x0.values, v1s = x1.values, v2s = x2.values, v3s = x3.values;
        IntVector v0 = IntVector.fromMemorySegment(I, w, q, Simd.LE), v1 = IntVector.fromMemorySegment(I, w, q + 64, Simd.LE);
        FloatVector zero = FloatVector.zero(F);
        for (int p = 0; p < 4; p++) {
            FloatVector s0 = zero, s1 = zero, s2 = zero, s3 = zero;
            for (int k = 2 * p; k < 2 * p + 2; k++) {
                int at = at0 + 32 * k;
                FloatVector l = (FloatVector) (k < 7 ? v0.and(0xF << 4 * k) : v0.lanewise(VectorOperators.LSHR, 28))
                        .convert(VectorOperators.I2F, 0);
                FloatVector u = (FloatVector) (k < 7 ? v1.and(0xF << 4 * k) : v1.lanewise(VectorOperators.LSHR, 28))
                        .convert(VectorOperators.I2F, 0);
                FloatVector sc = FloatVector.broadcast(F, (float) ((int) (scales >>> 8 * k) & 0xFF) * UNIT[k]);
                s0 = u.fma(FloatVector.fromArray(F, v0s, at + 16), l.mul(FloatVector.fromArray(F, v0s, at))).fma(sc, s0);
                s1 = u.fma(FloatVector.fromArray(F, v1s, at + 16), l.mul(FloatVector.fromArray(F, v1s, at))).fma(sc, s1);
                s2 = u.fma(FloatVector.fromArray(F, v2s, at + 16), l.mul(FloatVector.fromArray(F, v2s, at))).fma(sc, s2);
                s3 = u.fma(FloatVector.fromArray(F, v3s, at + 16), l.mul(FloatVector.fromArray(F, v3s, at))).fma(sc, s3);
            }
            // the four pair sums (exact integers below 2^23) summed across lanes together: lanes 0, 8, 4, 12
            FloatVector z01 = s0.blend(s1, F_UPPER_HALF).add(s1.blend(s0, F_UPPER_HALF).rearrange(F_SWAP8));
            FloatVector z23 = s2.blend(s3, F_UPPER_HALF).add(s3.blend(s2, F_UPPER_HALF).rearrange(F_SWAP8));
            FloatVector t = z01.blend(z23, F_ODD_QUADS).add(z23.blend(z01, F_ODD_QUADS).rearrange(F_SWAP4));
            t = t.add(t.rearrange(F_SWAP2));
            t.add(t.rearrange(F_SWAP1)).intoArray(sums, 16 * p);
        }
        Q4KRepackedKernel.minSums4(mins, x0, x1, x2, x3, at0, sums);
    }
}
