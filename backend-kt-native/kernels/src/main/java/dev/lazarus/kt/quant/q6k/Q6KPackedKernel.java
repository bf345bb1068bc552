package dev.lazarus.kt.quant.q6k;

import static dev.lazarus.kt.tensor.Lanes16.F_UPPER_HALF;
import static dev.lazarus.kt.tensor.Lanes16.I_EVENS_TWICE;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.I_UPPER_HALF;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Lanes16;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowGroups;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@link Q6KInt16Kernel} on {@link Q6KPacked}'s layout: the same short lanes, products, integer lanes and float
 * folds (bit for bit its results, so llama-server's {@code vec_dot_q6_K_q8_K} order), with each plane's 32 codes
 * one byte-to-short load instead of being assembled from {@code ql} and {@code qh}. Super-block b of row r lies at
 * index {@code groups.block(r, b)} of the codes and of the headers ({@link RowGroups}: rows interleaved in pairs,
 * which {@link #dotRows} reads as one stream).
 *
 * <p>{@link #tiled}: llama-server's tiled matmul order ({@code Q4KQ5KKernel.Order#TILED}, batches of
 * {@code KernelTable#TILED_MIN_BATCH} or more vectors routed to an expert in prefill), four activations at a time in
 * the same int16 products, as {@link Q6KInt16Kernel#TILED} on ggml's blocks.
 */
public final class Q6KPackedKernel implements RowKernel {

    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    private static final VectorSpecies<Byte> B32 = ByteVector.SPECIES_256;
    private static final int C = Q6KPacked.CODE_BYTES;
    private static final int H = Q6KPacked.HEADER_BYTES;

    /** The order of the matrix's super-blocks. */
    private final RowGroups groups;
    /** Byte offset of the matrix's headers in its segment. */
    private final long headers;
    /** llama-server's tiled order rather than vec_dot's. */
    private final boolean tiled;

    public Q6KPackedKernel(RowGroups groups) {
        this(groups, false);
    }

    private Q6KPackedKernel(RowGroups groups, boolean tiled) {
        this.groups = groups;
        this.headers = groups.blocks() * C;
        this.tiled = tiled;
    }

    /** The kernel of batches of {@code KernelTable#TILED_MIN_BATCH} or more, in llama-server's tiled order. */
    public static Q6KPackedKernel tiled(RowGroups groups) {
        return new Q6KPackedKernel(groups, true);
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        if (tiled) {
            return RowKernel.dotPadded(this, w, o, x, n);
        }
        int[] lanes = new int[Q6KInt16Kernel.LANES];
        float[] acc = new float[Q6KInt16Kernel.LANES];
        int row = groups.row(o, C), step = groups.stride(row);
        long g = groups.block(row, 0);
        short[] xq = x.form(Q6KInt16Kernel.ACTIVATION_ORDER); // the activation in this kernel's order
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            superBlock(w, g * C, h, xq, x.bsums, 256 * b, lanes);
            float d = x.scales[b] * w.get(Layouts.F32, h + 16);
            FloatVector.broadcast(F, d).fma((FloatVector) IntVector.fromArray(I, lanes, 0).convert(VectorOperators.I2F, 0),
                    FloatVector.fromArray(F, acc, 0)).intoArray(acc, 0);
        }
        return Q6KInt16Kernel.lanesSum(acc, 0);
    }

    /**
     * Rows in the pairs of the layout ({@link #superBlock2}), with one scratch for the whole range; a row without its
     * pair in the range alone.
     */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        if (tiled) {
            RowKernel.super.dotRows(w, rowBytes, x, n, out, rowStart, rowEnd);
            return;
        }
        float[] acc = new float[Q6KInt16Kernel.LANES];
        int r = rowStart;
        if ((r & 1) != 0 && r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
            r++;
        }
        for (; r + 1 < rowEnd; r += 2) {
            java.util.Arrays.fill(acc, 0f);
            int step = groups.stride(r);
            // side by side in groups of two or more, a row apart in groups of one
            long gA = groups.block(r, 0), gB = groups.block(r + 1, 0);
            short[] xq = x.form(Q6KInt16Kernel.ACTIVATION_ORDER); // the activation in this kernel's order
            for (int b = 0; b < n / 256; b++, gA += step, gB += step) {
                long hA = headers + gA * H, hB = headers + gB * H;
                float dy = x.scales[b];
                superBlock2(w, gA * C, gB * C, hA, hB, xq, x.bsums, 256 * b,
                        dy * w.get(Layouts.F32, hA + 16), dy * w.get(Layouts.F32, hB + 16), acc);
            }
            out[r] = Q6KInt16Kernel.lanesSum(acc, 0);
            out[r + 1] = Q6KInt16Kernel.lanesSum(acc, 8);
        }
        if (r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
        }
    }

    /** The tiled order's integer stage is four activations wide. */
    @Override
    public boolean fourWide() {
        return tiled;
    }

    /**
     * Four activations in the tiled order ({@link #superBlock4Tiled}: each super-block's codes loaded once for all
     * four, {@code fma(d_w·(float) s1, d_y, acc)}); in vec_dot's order four single dots.
     */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        if (!tiled) {
            RowKernel.super.dotVectors4(w, o, xs, from, n, outs, row);
            return;
        }
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        int[] sums = new int[GROUP];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
        int r = groups.row(o, C), step = groups.stride(r);
        long g = groups.block(r, 0);
        for (int b = 0; b < n / 256; b++, g += step) {
            long h = headers + g * H;
            superBlock4Tiled(w, g * C, h, x0, x1, x2, x3, 256 * b, sums);
            float d = w.get(Layouts.F32, h + 16);
            acc0 = Math.fma(d * (float) sums[0], x0.scales[b], acc0);
            acc1 = Math.fma(d * (float) sums[1], x1.scales[b], acc1);
            acc2 = Math.fma(d * (float) sums[2], x2.scales[b], acc2);
            acc3 = Math.fma(d * (float) sums[3], x3.scales[b], acc3);
        }
        outs[from][row] = acc0;
        outs[from + 1][row] = acc1;
        outs[from + 2][row] = acc2;
        outs[from + 3][row] = acc3;
    }

    /**
     * sums[a] = the exact {@code Σ scale·(q - 32)·y} of the super-block (codes at q, headers at hd) against
     * activation a: as {@link #superBlock} forms its lanes, the eight planes loaded once, reduced.
     */
    private static void superBlock4Tiled(MemorySegment w, long q, long hd, Activation x0, Activation x1, Activation x2,
                                         Activation x3, int at, int[] sums) {
        IntVector sc = (IntVector) ByteVector.fromMemorySegment(B16, w, hd, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
        IntVector sc00 = sc.rearrange(Q6KInt16Kernel.SCALES_00), sc01 = sc.rearrange(Q6KInt16Kernel.SCALES_01);
        IntVector sc10 = sc.rearrange(Q6KInt16Kernel.SCALES_10), sc11 = sc.rearrange(Q6KInt16Kernel.SCALES_11);
        ShortVector q00 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q01 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 32, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q02 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 64, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q03 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 96, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q10 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 128, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q11 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 160, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q12 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 192, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        ShortVector q13 = (ShortVector) ByteVector.fromMemorySegment(B32, w, q + 224, Simd.LE).convertShape(VectorOperators.B2S, S, 0);
        for (int a = 0; a < GROUP; a++) {
            Activation x = a == 0 ? x0 : a == 1 ? x1 : a == 2 ? x2 : x3;
            short[] ys = x.form(Q6KInt16Kernel.ACTIVATION_ORDER);
            ShortVector e0 = q00.mul(ShortVector.fromArray(S, ys, at)).add(q02.mul(ShortVector.fromArray(S, ys, at + 64)));
            ShortVector o0 = q01.mul(ShortVector.fromArray(S, ys, at + 32)).add(q03.mul(ShortVector.fromArray(S, ys, at + 96)));
            ShortVector e1 = q10.mul(ShortVector.fromArray(S, ys, at + 128)).add(q12.mul(ShortVector.fromArray(S, ys, at + 192)));
            ShortVector o1 = q11.mul(ShortVector.fromArray(S, ys, at + 160)).add(q13.mul(ShortVector.fromArray(S, ys, at + 224)));
            IntVector i = e0.reinterpretAsInts();
            IntVector acc = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc00);
            i = o0.reinterpretAsInts();
            acc = acc.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc01));
            i = e1.reinterpretAsInts();
            acc = acc.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc10));
            i = o1.reinterpretAsInts();
            acc = acc.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc11));
            IntVector offsets = sc.mul(IntVector.fromArray(I, x.bsums, at / 16)).lanewise(VectorOperators.LSHL, 5);
            sums[a] = acc.sub(offsets).reduceLanes(VectorOperators.ADD);
        }
    }

    /** lanes[k] (and lanes[8 + k]) = ggml's integer lane k of the super-block with codes at q, headers at hd. */
    private static void superBlock(MemorySegment w, long q, long hd, short[] ys, int[] bsums, int at, int[] lanes) {
        IntVector sc = (IntVector) ByteVector.fromMemorySegment(B16, w, hd, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
        IntVector acc = IntVector.zero(I);
        for (int h = 0; h < 2; h++) {
            int a = at + 128 * h;
            long c = q + 128L * h;
            ShortVector even = ((ShortVector) ByteVector.fromMemorySegment(B32, w, c, Simd.LE)
                    .convertShape(VectorOperators.B2S, S, 0)).mul(ShortVector.fromArray(S, ys, a))
                    .add(((ShortVector) ByteVector.fromMemorySegment(B32, w, c + 64, Simd.LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(ShortVector.fromArray(S, ys, a + 64)));
            ShortVector odd = ((ShortVector) ByteVector.fromMemorySegment(B32, w, c + 32, Simd.LE)
                    .convertShape(VectorOperators.B2S, S, 0)).mul(ShortVector.fromArray(S, ys, a + 32))
                    .add(((ShortVector) ByteVector.fromMemorySegment(B32, w, c + 96, Simd.LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(ShortVector.fromArray(S, ys, a + 96)));
            // as Q6KInt16Kernel: neighbouring shorts summed into int lanes, scaled
            IntVector x = even.reinterpretAsInts();
            acc = acc.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(sc.rearrange(h == 0 ? Q6KInt16Kernel.SCALES_00 : Q6KInt16Kernel.SCALES_10)));
            x = odd.reinterpretAsInts();
            acc = acc.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(sc.rearrange(h == 0 ? Q6KInt16Kernel.SCALES_01 : Q6KInt16Kernel.SCALES_11)));
        }
        IntVector terms = sc.mul(IntVector.fromArray(I, bsums, at / 16));
        IntVector offsets = terms.add(terms.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE)
                .lanewise(VectorOperators.LSHL, 5);
        acc.add(acc.rearrange(I_SWAP8)).sub(offsets).intoArray(lanes, 0);
    }

    /**
     * {@link #superBlock} of two rows (codes at qA, qB; headers at hA, hB), sharing the activation's loads, folded at
     * once: acc[k] += dA·laneA_k, acc[8 + k] += dB·laneB_k.
     */
    private static void superBlock2(MemorySegment w, long qA, long qB, long hA, long hB, short[] ys, int[] bsums, int at,
                                    float dA, float dB, float[] acc) {
        IntVector scA = (IntVector) ByteVector.fromMemorySegment(B16, w, hA, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
        IntVector scB = (IntVector) ByteVector.fromMemorySegment(B16, w, hB, Simd.LE).convertShape(VectorOperators.B2I, I, 0);
        IntVector accA = IntVector.zero(I), accB = accA;
        for (int h = 0; h < 2; h++) {
            int a = at + 128 * h;
            long cA = qA + 128L * h, cB = qB + 128L * h;
            ShortVector y0 = ShortVector.fromArray(S, ys, a), y1 = ShortVector.fromArray(S, ys, a + 32);
            ShortVector y2 = ShortVector.fromArray(S, ys, a + 64), y3 = ShortVector.fromArray(S, ys, a + 96);
            ShortVector evenA = ((ShortVector) ByteVector.fromMemorySegment(B32, w, cA, Simd.LE)
                    .convertShape(VectorOperators.B2S, S, 0)).mul(y0)
                    .add(((ShortVector) ByteVector.fromMemorySegment(B32, w, cA + 64, Simd.LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(y2));
            ShortVector oddA = ((ShortVector) ByteVector.fromMemorySegment(B32, w, cA + 32, Simd.LE)
                    .convertShape(VectorOperators.B2S, S, 0)).mul(y1)
                    .add(((ShortVector) ByteVector.fromMemorySegment(B32, w, cA + 96, Simd.LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(y3));
            ShortVector evenB = ((ShortVector) ByteVector.fromMemorySegment(B32, w, cB, Simd.LE)
                    .convertShape(VectorOperators.B2S, S, 0)).mul(y0)
                    .add(((ShortVector) ByteVector.fromMemorySegment(B32, w, cB + 64, Simd.LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(y2));
            ShortVector oddB = ((ShortVector) ByteVector.fromMemorySegment(B32, w, cB + 32, Simd.LE)
                    .convertShape(VectorOperators.B2S, S, 0)).mul(y1)
                    .add(((ShortVector) ByteVector.fromMemorySegment(B32, w, cB + 96, Simd.LE)
                            .convertShape(VectorOperators.B2S, S, 0)).mul(y3));
            VectorShuffle<Integer> evenScales = h == 0 ? Q6KInt16Kernel.SCALES_00 : Q6KInt16Kernel.SCALES_10;
            VectorShuffle<Integer> oddScales = h == 0 ? Q6KInt16Kernel.SCALES_01 : Q6KInt16Kernel.SCALES_11;
            IntVector x = evenA.reinterpretAsInts();
            accA = accA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(scA.rearrange(evenScales)));
            x = oddA.reinterpretAsInts();
            accA = accA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(scA.rearrange(oddScales)));
            x = evenB.reinterpretAsInts();
            accB = accB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(scB.rearrange(evenScales)));
            x = oddB.reinterpretAsInts();
            accB = accB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(scB.rearrange(oddScales)));
        }
        // the fold of Q6KInt16Kernel.superBlock2: row A in lanes 0-7, B in 8-15
        IntVector bs = IntVector.fromArray(I, bsums, at / 16);
        IntVector tA = scA.mul(bs), tB = scB.mul(bs);
        IntVector offsets = tA.add(tA.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE)
                .blend(tB.add(tB.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE),
                        I_UPPER_HALF).lanewise(VectorOperators.LSHL, 5);
        IntVector z = accA.blend(accB, I_UPPER_HALF)
                .add(accB.blend(accA, I_UPPER_HALF).rearrange(I_SWAP8)).sub(offsets);
        FloatVector d = FloatVector.broadcast(F, dA).blend(FloatVector.broadcast(F, dB), F_UPPER_HALF);
        d.fma((FloatVector) z.convert(VectorOperators.I2F, 0), FloatVector.fromArray(F, acc, 0)).intoArray(acc, 0);
    }
}
