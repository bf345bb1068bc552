package dev.lazarus.kt.quant.q4k;

import static dev.lazarus.kt.tensor.Lanes16.I_EVENS_TWICE;
import static dev.lazarus.kt.tensor.Lanes16.I_ODD_QUADS;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP2;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP4;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.I_UPPER_HALF;

import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Lanes16;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.Q8KShortOrder;
import dev.lazarus.kt.tensor.RowKernel;
import dev.lazarus.kt.tensor.Simd;
import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * llama-server's repacked-Q4_K GEMV order ({@link Q4KRepackedKernel#GEMV}) on ggml's own blocks, read in place
 * (dense matrices, memory-mapped experts), with decode's rows in pairs computed in 16-bit integer products as
 * {@link Q4KInt16Kernel} does; one row and four activations are {@link Q4KRepackedKernel#GEMV}'s. Bit for bit
 * its results: everything inside a super-block is an exact integer.
 *
 * <p>ggml's 128 quant bytes read as two vectors of 32 shorts: short t of vector v holds values {@code 2m} and
 * {@code 2m + 1} (m = t mod 16) of the sub-block pair {@code 2v + t / 16}, nibble p being value
 * {@code 2m + p / 2} of the pair's sub-block {@code p mod 2}. So a lane of an even plane (0, 2) always holds one
 * sub-block, and of an odd plane its neighbour: four short accumulators per row (vector × even/odd plane), two
 * products per lane, against {@link #ACTIVATION_ORDER} (the quants in this order). Two neighbouring short
 * lanes belong to the same sub-block, so each accumulator is summed pairwise into int lanes (shift, add, shift),
 * the lanes 0-7 holding one sub-block and 8-15 the next but one, and multiplied by their scales.
 *
 * <p>Four activations (prefill) take the planes out once for all four ({@link #superBlock4}) and reduce each
 * activation's lanes per pair of sub-blocks, the integers both of llama-server's orders fold: {@link #INSTANCE} adds
 * the four pairs for its GEMV (one fold per super-block, routed experts read in place), {@link #GEMM} folds each pair
 * as its repacked GEMM does (dense matrices, activation rows in groups of four).
 */
public final class Q4KInt16InPlaceKernel implements RowKernel {

    /**
     * The Q8_K quants in the order of ggml's Q4_K quant bytes read as shorts: value {@code 2·(t mod 16) + p / 2} of
     * sub-block {@code 2·(2c + t / 16) + p mod 2} at {@code 128c + 32p + t}.
     */
    static final Q8KShortOrder ACTIVATION_ORDER =
            new Q8KShortOrder((c, p, t) -> 32 * (2 * (2 * c + (t >> 4)) + (p & 1)) + 2 * (t & 15) + (p >> 1));

    /** llama-server's repacked GEMV order (decode; four activations of a routed expert read in place). */
    public static final Q4KInt16InPlaceKernel INSTANCE = new Q4KInt16InPlaceKernel(false);
    /** Its repacked GEMM order ({@link Q4KRepackedKernel#GEMM}): the group kernel of dense matrices in prefill. */
    public static final Q4KInt16InPlaceKernel GEMM = new Q4KInt16InPlaceKernel(true);

    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Long> L2 = LongVector.SPECIES_128;
    /** From a row's eight scales in lanes 0-7 (and again in 8-15): sub-blocks 4v + k (lanes 0-7), 4v + k + 2 (8-15). */
    private static final VectorShuffle<Integer> SUB_0_2 = VectorShuffle.fromOp(I, i -> i < 8 ? 0 : 2);
    private static final VectorShuffle<Integer> SUB_1_3 = VectorShuffle.fromOp(I, i -> i < 8 ? 1 : 3);
    private static final VectorShuffle<Integer> SUB_4_6 = VectorShuffle.fromOp(I, i -> i < 8 ? 4 : 6);
    private static final VectorShuffle<Integer> SUB_5_7 = VectorShuffle.fromOp(I, i -> i < 8 ? 5 : 7);
    /** Lane i takes lane i / 2: a super-block's eight mins (in lanes 0-7), each against its two 16-value bsums. */
    private static final VectorShuffle<Integer> HALVES = VectorShuffle.fromOp(I, i -> i >> 1);
    private static final VectorMask<Integer> ODD_LANES = VectorMask.fromLong(I, 0xAAAAL);
    private static final VectorMask<Integer> ODD_PAIRS = VectorMask.fromLong(I, 0xCCCCL);
    /** Where {@link #superBlock4} leaves pair p's Σ scale·(q·y) of the four activations. */
    private static final int[] SUM_AT = {0, 8, 4, 12};
    private static final VectorSpecies<Integer> I4 = IntVector.SPECIES_128;
    private static final VectorSpecies<Float> F4 = FloatVector.SPECIES_128;
    private static final short NIBBLE = 0xF;
    private static final int BLOCK_BYTES = 144;

    /** Fold per pair of sub-blocks (the GEMM) rather than per super-block (the GEMV). */
    private final boolean foldPerPair;

    private Q4KInt16InPlaceKernel(boolean foldPerPair) {
        this.foldPerPair = foldPerPair;
    }

    /**
     * One row (an odd row at the end of a range; a routed expert's vectors of a batch) in the f32-lane stage of
     * {@link Q4KRepackedKernel}, the same order bit for bit: for a single row it is the faster stage (on Zen 4 about
     * 1.6x an int16 one-row form, ExpertKernelBench Q4_K batch 3 in-place, docs/engine.md "Kernel room").
     */
    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        return (foldPerPair ? Q4KRepackedKernel.GEMM : Q4KRepackedKernel.GEMV).dot(w, o, x, n);
    }

    /**
     * Four activations, each super-block's planes taken out once ({@link #superBlock4}), folded in this kernel's
     * order, the four activations in the lanes of one vector: per pair of sub-blocks {@code fma((float) Σ, d_w·d_y,
     * acc)} and its twin for the mins (GEMM), or the pairs' integers added first and folded once per super-block
     * (GEMV).
     */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        int blocks = n / 256;
        // d_y of activation a and super-block b at 4b + a
        float[] dy = new float[GROUP * blocks];
        for (int b = 0; b < blocks; b++) {
            for (int a = 0; a < GROUP; a++) {
                dy[GROUP * b + a] = xs[from + a].scales[b];
            }
        }
        int[] sums = new int[32];
        FloatVector acc = FloatVector.zero(F4), accMin = acc;
        for (int b = 0; b < blocks; b++) {
            long blk = o + BLOCK_BYTES * b;
            long packed = w.get(Layouts.I64, blk + 4);
            int packedHigh = w.get(Layouts.I32, blk + 12);
            superBlock4(w, blk + 16, Layouts.kScales(packed, packedHigh), Layouts.kMins(packed, packedHigh),
                    xs[from], xs[from + 1], xs[from + 2], xs[from + 3], 256 * b, sums);
            FloatVector y = FloatVector.fromArray(F4, dy, GROUP * b);
            FloatVector d = y.mul(Layouts.f16(w, blk)), dmin = y.mul(Layouts.f16(w, blk + 2));
            if (foldPerPair) {
                for (int p = 0; p < 4; p++) {
                    acc = ((FloatVector) IntVector.fromArray(I4, sums, SUM_AT[p]).convert(VectorOperators.I2F, 0)).fma(d, acc);
                    accMin = ((FloatVector) IntVector.fromArray(I4, sums, 16 + 4 * p).convert(VectorOperators.I2F, 0)).fma(dmin, accMin);
                }
            } else {
                IntVector s = IntVector.fromArray(I4, sums, 0).add(IntVector.fromArray(I4, sums, 4))
                        .add(IntVector.fromArray(I4, sums, 8)).add(IntVector.fromArray(I4, sums, 12));
                IntVector m = IntVector.fromArray(I4, sums, 16).add(IntVector.fromArray(I4, sums, 20))
                        .add(IntVector.fromArray(I4, sums, 24)).add(IntVector.fromArray(I4, sums, 28));
                acc = ((FloatVector) s.convert(VectorOperators.I2F, 0)).fma(d, acc);
                accMin = ((FloatVector) m.convert(VectorOperators.I2F, 0)).fma(dmin, accMin);
            }
        }
        FloatVector result = acc.sub(accMin);
        for (int a = 0; a < GROUP; a++) {
            outs[from + a][row] = result.lane(a);
        }
    }

    /**
     * One super-block (quants at q, unpacked {@code scales} and {@code mins} one per byte) against four activations,
     * per pair of sub-blocks, as exact ints: activation a's pair p Σ scale·(q·y) at {@link #SUM_AT}[p] + a, its
     * Σ min·bsum at 16 + 4p + a. The eight nibble planes are taken out once; each activation's four short
     * accumulators are widened pairwise and scaled into two int vectors (lanes 0-7 of s01 pair 0, lanes 8-15 pair 1;
     * of s23 pairs 2 and 3), and all four activations' vectors reduced together. Written out flat (a loop over the
     * activations through a scratch array measured 20 % slower in {@link Q4KInt16Kernel}'s twin).
     */
    private static void superBlock4(MemorySegment w, long q, long scales, long mins, Activation x0, Activation x1,
                                    Activation x2, Activation x3, int at, int[] sums) {
        ShortVector v0 = ShortVector.fromMemorySegment(S, w, q, Simd.LE), v1 = ShortVector.fromMemorySegment(S, w, q + 64, Simd.LE);
        // even planes: sub-blocks 0 | 2 (vector 0), 4 | 6 (vector 1); odd planes: 1 | 3, 5 | 7
        ShortVector p00 = v0.and(NIBBLE), p01 = v0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE);
        ShortVector p02 = v0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE), p03 = v0.lanewise(VectorOperators.LSHR, 12);
        ShortVector p10 = v1.and(NIBBLE), p11 = v1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE);
        ShortVector p12 = v1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE), p13 = v1.lanewise(VectorOperators.LSHR, 12);
        IntVector sc = (IntVector) LongVector.broadcast(L2, scales).reinterpretAsBytes().convertShape(VectorOperators.B2I, I, 0);
        IntVector sc02 = sc.rearrange(SUB_0_2), sc13 = sc.rearrange(SUB_1_3), sc46 = sc.rearrange(SUB_4_6), sc57 = sc.rearrange(SUB_5_7);
        short[] ys;
        ShortVector e0, o0, e1, o1;
        IntVector i;
        // neighbouring shorts summed into int lanes, ((x << 16) + x) >> 16, and scaled
        ys = x0.form(ACTIVATION_ORDER);
        e0 = p00.mul(ShortVector.fromArray(S, ys, at)).add(p02.mul(ShortVector.fromArray(S, ys, at + 64)));
        o0 = p01.mul(ShortVector.fromArray(S, ys, at + 32)).add(p03.mul(ShortVector.fromArray(S, ys, at + 96)));
        e1 = p10.mul(ShortVector.fromArray(S, ys, at + 128)).add(p12.mul(ShortVector.fromArray(S, ys, at + 192)));
        o1 = p11.mul(ShortVector.fromArray(S, ys, at + 160)).add(p13.mul(ShortVector.fromArray(S, ys, at + 224)));
        i = e0.reinterpretAsInts();
        IntVector s01x0 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc02);
        i = o0.reinterpretAsInts();
        s01x0 = s01x0.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc13));
        i = e1.reinterpretAsInts();
        IntVector s23x0 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc46);
        i = o1.reinterpretAsInts();
        s23x0 = s23x0.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc57));
        ys = x1.form(ACTIVATION_ORDER);
        e0 = p00.mul(ShortVector.fromArray(S, ys, at)).add(p02.mul(ShortVector.fromArray(S, ys, at + 64)));
        o0 = p01.mul(ShortVector.fromArray(S, ys, at + 32)).add(p03.mul(ShortVector.fromArray(S, ys, at + 96)));
        e1 = p10.mul(ShortVector.fromArray(S, ys, at + 128)).add(p12.mul(ShortVector.fromArray(S, ys, at + 192)));
        o1 = p11.mul(ShortVector.fromArray(S, ys, at + 160)).add(p13.mul(ShortVector.fromArray(S, ys, at + 224)));
        i = e0.reinterpretAsInts();
        IntVector s01x1 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc02);
        i = o0.reinterpretAsInts();
        s01x1 = s01x1.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc13));
        i = e1.reinterpretAsInts();
        IntVector s23x1 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc46);
        i = o1.reinterpretAsInts();
        s23x1 = s23x1.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc57));
        ys = x2.form(ACTIVATION_ORDER);
        e0 = p00.mul(ShortVector.fromArray(S, ys, at)).add(p02.mul(ShortVector.fromArray(S, ys, at + 64)));
        o0 = p01.mul(ShortVector.fromArray(S, ys, at + 32)).add(p03.mul(ShortVector.fromArray(S, ys, at + 96)));
        e1 = p10.mul(ShortVector.fromArray(S, ys, at + 128)).add(p12.mul(ShortVector.fromArray(S, ys, at + 192)));
        o1 = p11.mul(ShortVector.fromArray(S, ys, at + 160)).add(p13.mul(ShortVector.fromArray(S, ys, at + 224)));
        i = e0.reinterpretAsInts();
        IntVector s01x2 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc02);
        i = o0.reinterpretAsInts();
        s01x2 = s01x2.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc13));
        i = e1.reinterpretAsInts();
        IntVector s23x2 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc46);
        i = o1.reinterpretAsInts();
        s23x2 = s23x2.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc57));
        ys = x3.form(ACTIVATION_ORDER);
        e0 = p00.mul(ShortVector.fromArray(S, ys, at)).add(p02.mul(ShortVector.fromArray(S, ys, at + 64)));
        o0 = p01.mul(ShortVector.fromArray(S, ys, at + 32)).add(p03.mul(ShortVector.fromArray(S, ys, at + 96)));
        e1 = p10.mul(ShortVector.fromArray(S, ys, at + 128)).add(p12.mul(ShortVector.fromArray(S, ys, at + 192)));
        o1 = p11.mul(ShortVector.fromArray(S, ys, at + 160)).add(p13.mul(ShortVector.fromArray(S, ys, at + 224)));
        i = e0.reinterpretAsInts();
        IntVector s01x3 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc02);
        i = o0.reinterpretAsInts();
        s01x3 = s01x3.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc13));
        i = e1.reinterpretAsInts();
        IntVector s23x3 = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc46);
        i = o1.reinterpretAsInts();
        s23x3 = s23x3.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc57));
        // eight-lane sums of the eight vectors together: after folding lanes i ^ 4, i ^ 2, i ^ 1 lane i holds activation
        // i mod 4's pair 2·(i / 4 mod 2) + i / 8
        IntVector z0 = s01x0.blend(s23x0, I_ODD_QUADS).add(s23x0.blend(s01x0, I_ODD_QUADS).rearrange(I_SWAP4));
        IntVector z1 = s01x2.blend(s23x2, I_ODD_QUADS).add(s23x2.blend(s01x2, I_ODD_QUADS).rearrange(I_SWAP4));
        IntVector z2 = s01x1.blend(s23x1, I_ODD_QUADS).add(s23x1.blend(s01x1, I_ODD_QUADS).rearrange(I_SWAP4));
        IntVector z3 = s01x3.blend(s23x3, I_ODD_QUADS).add(s23x3.blend(s01x3, I_ODD_QUADS).rearrange(I_SWAP4));
        IntVector y0 = z0.blend(z1, ODD_PAIRS).add(z1.blend(z0, ODD_PAIRS).rearrange(I_SWAP2));
        IntVector y1 = z2.blend(z3, ODD_PAIRS).add(z3.blend(z2, ODD_PAIRS).rearrange(I_SWAP2));
        y0.blend(y1, ODD_LANES).add(y1.blend(y0, ODD_LANES).rearrange(I_SWAP1)).intoArray(sums, 0);
        // the mins, lane i: min_(i/2)·bsum_i; the quads (pairs) summed: lane 4p + a holds activation a's pair p
        IntVector mn = ((IntVector) LongVector.broadcast(L2, mins).reinterpretAsBytes().convertShape(VectorOperators.B2I, I, 0))
                .rearrange(HALVES);
        int bs = at / 16;
        IntVector m0 = mn.mul(IntVector.fromArray(I, x0.bsums, bs)), m1 = mn.mul(IntVector.fromArray(I, x1.bsums, bs));
        IntVector m2 = mn.mul(IntVector.fromArray(I, x2.bsums, bs)), m3 = mn.mul(IntVector.fromArray(I, x3.bsums, bs));
        IntVector w0 = m0.blend(m1, ODD_LANES).add(m1.blend(m0, ODD_LANES).rearrange(I_SWAP1));
        IntVector w1 = m2.blend(m3, ODD_LANES).add(m3.blend(m2, ODD_LANES).rearrange(I_SWAP1));
        w0.blend(w1, ODD_PAIRS).add(w1.blend(w0, ODD_PAIRS).rearrange(I_SWAP2)).intoArray(sums, 16);
    }
    /** Rows in pairs ({@link #superBlock2}), with one scratch for the whole range. */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        if (foldPerPair) {
            RowKernel.super.dotRows(w, rowBytes, x, n, out, rowStart, rowEnd);
            return;
        }
        int[] sums = new int[16];
        long[] headerWords = new long[4];
        int r = rowStart;
        for (; r + 1 < rowEnd; r += 2) {
            long o = r * rowBytes;
            float accA = 0, accB = 0, minA = 0, minB = 0;
            short[] xq = x.form(ACTIVATION_ORDER); // the activation in this kernel's order
            for (int b = 0; b < n / 256; b++) {
                long blkA = o + BLOCK_BYTES * b, blkB = blkA + rowBytes;
                long packedA = w.get(Layouts.I64, blkA + 4), packedB = w.get(Layouts.I64, blkB + 4);
                int packedHighA = w.get(Layouts.I32, blkA + 12), packedHighB = w.get(Layouts.I32, blkB + 12);
                headerWords[0] = Layouts.kScales(packedA, packedHighA);
                headerWords[1] = Layouts.kScales(packedB, packedHighB);
                headerWords[2] = Layouts.kMins(packedA, packedHighA);
                headerWords[3] = Layouts.kMins(packedB, packedHighB);
                superBlock2(w, blkA + 16, blkB + 16, headerWords, xq, x.bsums, 256 * b, sums);
                float dy = x.scales[b];
                accA = Math.fma((float) sums[0], Layouts.f16(w, blkA) * dy, accA);
                accB = Math.fma((float) sums[8], Layouts.f16(w, blkB) * dy, accB);
                minA = Math.fma((float) sums[4], Layouts.f16(w, blkA + 2) * dy, minA);
                minB = Math.fma((float) sums[12], Layouts.f16(w, blkB + 2) * dy, minB);
            }
            out[r] = accA - minA;
            out[r + 1] = accB - minB;
        }
        if (r < rowEnd) {
            out[r] = dot(w, r * rowBytes, x, n);
        }
    }

    /**
     * Σ scale·(q·y) of one super-block of each of two rows (quants at qA, qB) into sums[0] and sums[8], their
     * Σ min·bsum into sums[4] and sums[12], in int lanes (exact) and reduced together; {@code headerWords}: the
     * unpacked scales of A and B, then their mins.
     */
    private static void superBlock2(MemorySegment w, long qA, long qB, long[] headerWords, short[] ys, int[] bsums,
                                    int at, int[] sums) {
        ShortVector a0 = ShortVector.fromMemorySegment(S, w, qA, Simd.LE), a1 = ShortVector.fromMemorySegment(S, w, qA + 64, Simd.LE);
        ShortVector b0 = ShortVector.fromMemorySegment(S, w, qB, Simd.LE), b1 = ShortVector.fromMemorySegment(S, w, qB + 64, Simd.LE);
        // even planes: sub-blocks 0 | 2 (vector 0), 4 | 6 (vector 1); odd planes: 1 | 3, 5 | 7
        ShortVector y = ShortVector.fromArray(S, ys, at);
        ShortVector evenA0 = a0.and(NIBBLE).mul(y), evenB0 = b0.and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 32);
        ShortVector oddA0 = a0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        ShortVector oddB0 = b0.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 64);
        evenA0 = evenA0.add(a0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        evenB0 = evenB0.add(b0.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 96);
        oddA0 = oddA0.add(a0.lanewise(VectorOperators.LSHR, 12).mul(y));
        oddB0 = oddB0.add(b0.lanewise(VectorOperators.LSHR, 12).mul(y));
        y = ShortVector.fromArray(S, ys, at + 128);
        ShortVector evenA1 = a1.and(NIBBLE).mul(y), evenB1 = b1.and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 160);
        ShortVector oddA1 = a1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        ShortVector oddB1 = b1.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).mul(y);
        y = ShortVector.fromArray(S, ys, at + 192);
        evenA1 = evenA1.add(a1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        evenB1 = evenB1.add(b1.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).mul(y));
        y = ShortVector.fromArray(S, ys, at + 224);
        oddA1 = oddA1.add(a1.lanewise(VectorOperators.LSHR, 12).mul(y));
        oddB1 = oddB1.add(b1.lanewise(VectorOperators.LSHR, 12).mul(y));
        // neighbouring shorts summed into int lanes: ((x << 16) + x) >> 16 = high + low (|sum| < 2^15), then scaled
        IntVector scA = (IntVector) LongVector.broadcast(L2, headerWords[0]).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector scB = (IntVector) LongVector.broadcast(L2, headerWords[1]).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector x = evenA0.reinterpretAsInts();
        IntVector sA = x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_0_2));
        x = oddA0.reinterpretAsInts();
        sA = sA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_1_3)));
        x = evenA1.reinterpretAsInts();
        sA = sA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_4_6)));
        x = oddA1.reinterpretAsInts();
        sA = sA.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scA.rearrange(SUB_5_7)));
        x = evenB0.reinterpretAsInts();
        IntVector sB = x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_0_2));
        x = oddB0.reinterpretAsInts();
        sB = sB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_1_3)));
        x = evenB1.reinterpretAsInts();
        sB = sB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_4_6)));
        x = oddB1.reinterpretAsInts();
        sB = sB.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16).mul(scB.rearrange(SUB_5_7)));
        // lanes 0-7 min_j·bsum32_j of row A, lanes 8-15 of row B, then all four sums reduced together
        IntVector m = (IntVector) LongVector.fromArray(L2, headerWords, 2).reinterpretAsBytes()
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector bs = IntVector.fromArray(I, bsums, at / 16);
        m = m.mul(bs.add(bs.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE));
        IntVector z = sA.blend(sB, I_UPPER_HALF).add(sB.blend(sA, I_UPPER_HALF).rearrange(I_SWAP8));
        z = z.add(z.rearrange(I_SWAP4)).blend(m.add(m.rearrange(I_SWAP4)), I_ODD_QUADS);
        z = z.add(z.rearrange(I_SWAP2));
        z.add(z.rearrange(I_SWAP1)).intoArray(sums, 0);
    }
}
