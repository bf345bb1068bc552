package dev.lazarus.kt.quant.q6k;

import static dev.lazarus.kt.tensor.Lanes16.F_UPPER_HALF;
import static dev.lazarus.kt.tensor.Lanes16.I_EVENS_TWICE;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP1;
import static dev.lazarus.kt.tensor.Lanes16.I_SWAP8;
import static dev.lazarus.kt.tensor.Lanes16.I_UPPER_HALF;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.GgmlSums;
import dev.lazarus.kt.tensor.Lanes16;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.Q8KShortOrder;
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
 * Q6_K rows in llama-server's {@code vec_dot_q6_K_q8_K} order ({@code GgmlKQuantKernels.q6k}) with 16-bit integer
 * products, on ggml's own blocks (dense matrices, memory-mapped experts; the RAM tier's packed copies take
 * {@link Q6KPackedKernel}, which shares this class's lane order and constants): bit for bit the results of
 * {@code Q6KKernel} (bench sources), since everything up to ggml's eight integer lanes per super-block is exact.
 *
 * <p>The unsigned 6-bit code times an int8 quant fits in 16 bits ({@code |q·y| ≤ 63·128 = 8064}) and four such
 * products still do ({@code ≤ 32256}). A half super-block's 64 {@code ql} bytes read as 32 shorts: nibble p of short
 * t is the low bits of value {@code e = 2·(t mod 16) + p / 2} of the 32-value group {@code g = t / 16 + 2·(p mod 2)}
 * (its {@code qh} bits: bits {@code 2g} of byte e of the half's 32 {@code qh} bytes, which the same 16 shorts hold
 * for both halves of the vector once their copy in the upper lanes is shifted right by 2). So planes p and p + 2
 * give every lane the same group and 16-value sub-block: their products are added in shorts (two per lane), the
 * neighbouring lanes summed into int lanes ({@code ((x << 16) + x) >> 16}: lane m holds values 4k..4k+3, k = m mod 8,
 * of one sub-block: exactly a piece of ggml's lane k), multiplied by the sub-block scale and accumulated. The -32
 * offset comes off through the activation's 16-value sums as in ggml; the float steps are ggml's:
 * {@code fma(d_y·d_w, (float) lane, acc)} per super-block and lane, then {@link GgmlSums#hsum8}. The activation comes
 * in {@link #ACTIVATION_ORDER}, the quants in this order.
 *
 * <p>Written for C2 as {@code Q6KKernel} (bench sources) is: one method per super-block, no vector crosses a call (a single row's
 * integer lanes go through a small int array to the float fold), scratch allocated once per row range. Decode takes
 * rows in pairs: the activation's loads shared, one conversion and fma for both rows' lanes. Four activations in
 * this order (batches of four to seven) assemble each code once for all four ({@link #superBlock4}).
 *
 * <p>{@link #TILED}: llama-server's tiled matmul order ({@code Q4KQ5KKernel.Order#TILED} for Q4_K and Q5_K), which batches of
 * {@code KernelTable#TILED_MIN_BATCH} or more vectors take (prefill), four activations at a time in the same int16
 * products ({@link #superBlock4Tiled}; fewer than four padded to four): there a super-block's integers are summed to one exact
 * {@code s1 = Σ scale·(q - 32)·y} before its float steps {@code fma(d_w·(float) s1, d_y, acc)}, so the lanes are
 * simply reduced.
 */
public final class Q6KInt16Kernel implements RowKernel {

    /**
     * The Q8_K quants in the order of ggml's Q6_K {@code ql} bytes read as shorts (which {@link Q6KPacked} keeps):
     * value {@code 128c + 32·(t / 16 + 2·(p mod 2)) + 2·(t mod 16) + p / 2} at {@code 128c + 32p + t}.
     */
    static final Q8KShortOrder ACTIVATION_ORDER =
            new Q8KShortOrder((c, p, t) -> 128 * c + 32 * ((t >> 4) + 2 * (p & 1)) + 2 * (t & 15) + (p >> 1));

    /** llama-server's {@code vec_dot_q6_K_q8_K} order (decode, batches of fewer than eight vectors). */
    public static final Q6KInt16Kernel INSTANCE = new Q6KInt16Kernel(false);
    /** Its tiled matmul order (batches of {@code KernelTable#TILED_MIN_BATCH} vectors or more). */
    public static final Q6KInt16Kernel TILED = new Q6KInt16Kernel(true);

    private static final VectorSpecies<Short> S = ShortVector.SPECIES_512;
    private static final VectorSpecies<Integer> I = IntVector.SPECIES_512;
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    /** The 16 {@code qh} shorts of the first, resp. second half super-block, in both halves of a vector. */
    private static final VectorShuffle<Short> QH_HALF0 = VectorShuffle.fromOp(S, i -> i & 15);
    private static final VectorShuffle<Short> QH_HALF1 = VectorShuffle.fromOp(S, i -> 16 + (i & 15));
    /** Upper lanes (groups 1 and 3) shifted right by 2, so that every lane's bits sit where the lower lanes' do. */
    private static final ShortVector QH_ALIGN = ShortVector.fromArray(S, new short[] {
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 0);
    /** Int lane m of half h and plane parity p takes the scale of sub-block 8h + 4p + m / 4. */
    static final VectorShuffle<Integer> SCALES_00 = VectorShuffle.fromOp(I, i -> i >> 2);
    static final VectorShuffle<Integer> SCALES_01 = VectorShuffle.fromOp(I, i -> 4 + (i >> 2));
    static final VectorShuffle<Integer> SCALES_10 = VectorShuffle.fromOp(I, i -> 8 + (i >> 2));
    static final VectorShuffle<Integer> SCALES_11 = VectorShuffle.fromOp(I, i -> 12 + (i >> 2));
    private static final short NIBBLE = 0xF;
    private static final short HIGH_BITS = 0x30;
    private static final int BLOCK_BYTES = 210;
    /** Int lanes per row and super-block: ggml's lanes 0-7, then the same again. */
    static final int LANES = 16;

    /** {@link #TILED}'s order rather than vec_dot's. */
    private final boolean tiled;

    private Q6KInt16Kernel(boolean tiled) {
        this.tiled = tiled;
    }

    @Override
    public float dot(MemorySegment w, long o, Activation x, int n) {
        if (tiled) {
            return RowKernel.dotPadded(this, w, o, x, n);
        }
        int[] lanes = new int[LANES];
        float[] acc = new float[LANES];
        short[] xq = x.form(ACTIVATION_ORDER); // the activation in this kernel's order
        for (int b = 0; b < n / 256; b++) {
            long blk = o + BLOCK_BYTES * b;
            superBlock(w, blk, xq, x.bsums, 256 * b, lanes, 0);
            float d = x.scales[b] * Layouts.f16(w, blk + 208);
            FloatVector.broadcast(F, d).fma((FloatVector) IntVector.fromArray(I, lanes, 0).convert(VectorOperators.I2F, 0),
                    FloatVector.fromArray(F, acc, 0)).intoArray(acc, 0);
        }
        return lanesSum(acc, 0);
    }

    /** Rows in pairs ({@link #superBlock2}), with one scratch for the whole range. */
    @Override
    public void dotRows(MemorySegment w, long rowBytes, Activation x, int n, float[] out, int rowStart, int rowEnd) {
        if (tiled) {
            RowKernel.super.dotRows(w, rowBytes, x, n, out, rowStart, rowEnd);
            return;
        }
        float[] acc = new float[LANES];
        int r = rowStart;
        for (; r + 1 < rowEnd; r += 2) {
            java.util.Arrays.fill(acc, 0f);
            long o = r * rowBytes;
            short[] xq = x.form(ACTIVATION_ORDER); // the activation in this kernel's order
            for (int b = 0; b < n / 256; b++) {
                long blkA = o + BLOCK_BYTES * b, blkB = blkA + rowBytes;
                float dy = x.scales[b];
                superBlock2(w, blkA, blkB, xq, x.bsums, 256 * b,
                        dy * Layouts.f16(w, blkA + 208), dy * Layouts.f16(w, blkB + 208), acc);
            }
            out[r] = lanesSum(acc, 0);
            out[r + 1] = lanesSum(acc, 8);
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
     * Four activations, each super-block's codes assembled once for all four: in vec_dot's order ggml's eight lanes
     * of each ({@link #superBlock4}), two activations' lanes folded per float vector; in the tiled order one exact
     * integer each ({@link #superBlock4Tiled}).
     */
    @Override
    public void dotVectors4(MemorySegment w, long o, Activation[] xs, int from, int n, float[][] outs, int row) {
        if (!tiled) {
            float[] acc = new float[2 * LANES];
            int[] lanes = new int[2 * LANES + 8];
            for (int b = 0; b < n / 256; b++) {
                long blk = o + BLOCK_BYTES * b;
                float d = Layouts.f16(w, blk + 208);
                superBlock4(w, blk, xs[from], xs[from + 1], xs[from + 2], xs[from + 3], 256 * b,
                        xs[from].scales[b] * d, xs[from + 1].scales[b] * d, xs[from + 2].scales[b] * d,
                        xs[from + 3].scales[b] * d, lanes, acc);
            }
            for (int a = 0; a < GROUP; a++) {
                outs[from + a][row] = lanesSum(acc, 8 * a);
            }
            return;
        }
        Activation x0 = xs[from], x1 = xs[from + 1], x2 = xs[from + 2], x3 = xs[from + 3];
        int[] sums = new int[16];
        float acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + BLOCK_BYTES * b;
            superBlock4Tiled(w, blk, x0, x1, x2, x3, 256 * b, sums);
            float d = Layouts.f16(w, blk + 208);
            acc0 = Math.fma(d * (float) sums[0], x0.scales[b], acc0);
            acc1 = Math.fma(d * (float) sums[8], x1.scales[b], acc1);
            acc2 = Math.fma(d * (float) sums[4], x2.scales[b], acc2);
            acc3 = Math.fma(d * (float) sums[12], x3.scales[b], acc3);
        }
        outs[from][row] = acc0;
        outs[from + 1][row] = acc1;
        outs[from + 2][row] = acc2;
        outs[from + 3][row] = acc3;
    }

    /**
     * {@link #superBlock} of the super-block at blk against four activations, its codes assembled once: activation
     * a's eight integer lanes through lanes[8a..8a + 8) (scratch of 40 ints), then folded two activations per vector,
     * acc[8a + k] += d_a·lane_k (d_a = d_y·d_w).
     */
    private static void superBlock4(MemorySegment w, long blk, Activation x0, Activation x1, Activation x2,
                                    Activation x3, int at, float d0, float d1, float d2, float d3, int[] lanes,
                                    float[] acc) {
        IntVector sc = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 192, Simd.LE)
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector sc00 = sc.rearrange(SCALES_00), sc01 = sc.rearrange(SCALES_01);
        IntVector sc10 = sc.rearrange(SCALES_10), sc11 = sc.rearrange(SCALES_11);
        ShortVector qh = ShortVector.fromMemorySegment(S, w, blk + 128, Simd.LE);
        ShortVector ql = ShortVector.fromMemorySegment(S, w, blk, Simd.LE);
        ShortVector hb = qh.rearrange(QH_HALF0).lanewise(VectorOperators.LSHR, QH_ALIGN);
        ShortVector q00 = ql.and(NIBBLE).or(hb.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS));
        ShortVector q02 = ql.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).or(hb.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS));
        ShortVector q01 = ql.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hb.and(HIGH_BITS));
        ShortVector q03 = ql.lanewise(VectorOperators.LSHR, 12).or(hb.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS));
        ql = ShortVector.fromMemorySegment(S, w, blk + 64, Simd.LE);
        hb = qh.rearrange(QH_HALF1).lanewise(VectorOperators.LSHR, QH_ALIGN);
        ShortVector q10 = ql.and(NIBBLE).or(hb.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS));
        ShortVector q12 = ql.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).or(hb.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS));
        ShortVector q11 = ql.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hb.and(HIGH_BITS));
        ShortVector q13 = ql.lanewise(VectorOperators.LSHR, 12).or(hb.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS));
        for (int a = 0; a < GROUP; a++) {
            Activation x = a == 0 ? x0 : a == 1 ? x1 : a == 2 ? x2 : x3;
            short[] ys = x.form(ACTIVATION_ORDER);
            ShortVector e0 = q00.mul(ShortVector.fromArray(S, ys, at)).add(q02.mul(ShortVector.fromArray(S, ys, at + 64)));
            ShortVector o0 = q01.mul(ShortVector.fromArray(S, ys, at + 32)).add(q03.mul(ShortVector.fromArray(S, ys, at + 96)));
            ShortVector e1 = q10.mul(ShortVector.fromArray(S, ys, at + 128)).add(q12.mul(ShortVector.fromArray(S, ys, at + 192)));
            ShortVector o1 = q11.mul(ShortVector.fromArray(S, ys, at + 160)).add(q13.mul(ShortVector.fromArray(S, ys, at + 224)));
            IntVector i = e0.reinterpretAsInts();
            IntVector s = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc00);
            i = o0.reinterpretAsInts();
            s = s.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc01));
            i = e1.reinterpretAsInts();
            s = s.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc10));
            i = o1.reinterpretAsInts();
            s = s.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc11));
            // as superBlock: lanes 0-7 ggml's lanes less their offsets (8-15 the same again, overwritten by the
            // next activation's store)
            IntVector terms = sc.mul(IntVector.fromArray(I, x.bsums, at / 16));
            IntVector offsets = terms.add(terms.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE).lanewise(VectorOperators.LSHL, 5);
            s.add(s.rearrange(I_SWAP8)).sub(offsets).intoArray(lanes, 8 * a);
        }
        FloatVector d01 = FloatVector.broadcast(F, d0).blend(FloatVector.broadcast(F, d1), F_UPPER_HALF);
        d01.fma((FloatVector) IntVector.fromArray(I, lanes, 0).convert(VectorOperators.I2F, 0), FloatVector.fromArray(F, acc, 0))
                .intoArray(acc, 0);
        FloatVector d23 = FloatVector.broadcast(F, d2).blend(FloatVector.broadcast(F, d3), F_UPPER_HALF);
        d23.fma((FloatVector) IntVector.fromArray(I, lanes, 16).convert(VectorOperators.I2F, 0), FloatVector.fromArray(F, acc, 16))
                .intoArray(acc, 16);
    }

    /**
     * The exact {@code Σ scale·(q - 32)·y} of the super-block at blk against activations 0-3 at sums[0, 8, 4, 12]: its
     * codes assembled once (the eight planes of {@link #superBlock}), each activation's products formed as there, their
     * int lanes less the offset term {@code 32·scale·bsum} per 16 values, each reduced.
     */
    private static void superBlock4Tiled(MemorySegment w, long blk, Activation x0, Activation x1, Activation x2,
                                         Activation x3, int at, int[] sums) {
        IntVector sc = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 192, Simd.LE)
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector sc00 = sc.rearrange(SCALES_00), sc01 = sc.rearrange(SCALES_01);
        IntVector sc10 = sc.rearrange(SCALES_10), sc11 = sc.rearrange(SCALES_11);
        ShortVector qh = ShortVector.fromMemorySegment(S, w, blk + 128, Simd.LE);
        // planes 0 and 2: groups 0 | 1 (lower | upper lanes); planes 1 and 3: groups 2 | 3; of halves 0 and 1
        ShortVector ql = ShortVector.fromMemorySegment(S, w, blk, Simd.LE);
        ShortVector hb = qh.rearrange(QH_HALF0).lanewise(VectorOperators.LSHR, QH_ALIGN);
        ShortVector q00 = ql.and(NIBBLE).or(hb.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS));
        ShortVector q02 = ql.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).or(hb.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS));
        ShortVector q01 = ql.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hb.and(HIGH_BITS));
        ShortVector q03 = ql.lanewise(VectorOperators.LSHR, 12).or(hb.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS));
        ql = ShortVector.fromMemorySegment(S, w, blk + 64, Simd.LE);
        hb = qh.rearrange(QH_HALF1).lanewise(VectorOperators.LSHR, QH_ALIGN);
        ShortVector q10 = ql.and(NIBBLE).or(hb.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS));
        ShortVector q12 = ql.lanewise(VectorOperators.LSHR, 8).and(NIBBLE).or(hb.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS));
        ShortVector q11 = ql.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hb.and(HIGH_BITS));
        ShortVector q13 = ql.lanewise(VectorOperators.LSHR, 12).or(hb.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS));
        // each activation's products as superBlock forms them (neighbouring shorts summed into int lanes,
        // ((x << 16) + x) >> 16, each times its sub-block's scale), less 32·scale·bsum per 16 values; activation a's
        // sum at sums[0, 8, 4, 12][a]. (Written out per activation with one shared reduction it measured 1.06x this
        // loop on the kernel alone, under 1 % of a prefill: not worth four copies.)
        for (int a = 0; a < 4; a++) {
            Activation x = a == 0 ? x0 : a == 1 ? x1 : a == 2 ? x2 : x3;
            short[] ys = x.form(ACTIVATION_ORDER);
            ShortVector e0 = q00.mul(ShortVector.fromArray(S, ys, at)).add(q02.mul(ShortVector.fromArray(S, ys, at + 64)));
            ShortVector o0 = q01.mul(ShortVector.fromArray(S, ys, at + 32)).add(q03.mul(ShortVector.fromArray(S, ys, at + 96)));
            ShortVector e1 = q10.mul(ShortVector.fromArray(S, ys, at + 128)).add(q12.mul(ShortVector.fromArray(S, ys, at + 192)));
            ShortVector o1 = q11.mul(ShortVector.fromArray(S, ys, at + 160)).add(q13.mul(ShortVector.fromArray(S, ys, at + 224)));
            IntVector i = e0.reinterpretAsInts();
            IntVector t = i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc00);
            i = o0.reinterpretAsInts();
            t = t.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc01));
            i = e1.reinterpretAsInts();
            t = t.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc10));
            i = o1.reinterpretAsInts();
            t = t.add(i.lanewise(VectorOperators.LSHL, 16).add(i).lanewise(VectorOperators.ASHR, 16).mul(sc11))
                    .sub(sc.mul(IntVector.fromArray(I, x.bsums, at / 16)).lanewise(VectorOperators.LSHL, 5));
            sums[(a & 1) * 8 + (a >> 1) * 4] = t.reduceLanes(VectorOperators.ADD);
        }
    }

    static float lanesSum(float[] acc, int at) {
        return GgmlSums.hsum8(acc[at], acc[at + 1], acc[at + 2], acc[at + 3],
                acc[at + 4], acc[at + 5], acc[at + 6], acc[at + 7]);
    }

    /**
     * lanes[at + k] (and lanes[at + 8 + k]) = ggml's integer lane k of the super-block at blk: Σ scale·q·y over
     * values 4k..4k+3 of its eight groups less {@code 32·(scale_2k·bsum_2k + scale_2k+1·bsum_2k+1)}.
     */
    private static void superBlock(MemorySegment w, long blk, short[] ys, int[] bsums, int at, int[] lanes, int lanesAt) {
        IntVector sc = (IntVector) ByteVector.fromMemorySegment(B16, w, blk + 192, Simd.LE)
                .convertShape(VectorOperators.B2I, I, 0);
        ShortVector qh = ShortVector.fromMemorySegment(S, w, blk + 128, Simd.LE);
        IntVector acc = IntVector.zero(I);
        for (int h = 0; h < 2; h++) {
            ShortVector ql = ShortVector.fromMemorySegment(S, w, blk + 64L * h, Simd.LE);
            ShortVector hb = qh.rearrange(h == 0 ? QH_HALF0 : QH_HALF1).lanewise(VectorOperators.LSHR, QH_ALIGN);
            int a = at + 128 * h;
            // planes 0 and 2: groups 0 | 1 (lower | upper lanes); planes 1 and 3: groups 2 | 3
            ShortVector q0 = ql.and(NIBBLE).or(hb.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS));
            ShortVector q2 = ql.lanewise(VectorOperators.LSHR, 8).and(NIBBLE)
                    .or(hb.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS));
            ShortVector even = q0.mul(ShortVector.fromArray(S, ys, a)).add(q2.mul(ShortVector.fromArray(S, ys, a + 64)));
            ShortVector q1 = ql.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hb.and(HIGH_BITS));
            ShortVector q3 = ql.lanewise(VectorOperators.LSHR, 12).or(hb.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS));
            ShortVector odd = q1.mul(ShortVector.fromArray(S, ys, a + 32)).add(q3.mul(ShortVector.fromArray(S, ys, a + 96)));
            IntVector x = even.reinterpretAsInts();
            acc = acc.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(sc.rearrange(h == 0 ? SCALES_00 : SCALES_10)));
            x = odd.reinterpretAsInts();
            acc = acc.add(x.lanewise(VectorOperators.LSHL, 16).add(x).lanewise(VectorOperators.ASHR, 16)
                    .mul(sc.rearrange(h == 0 ? SCALES_01 : SCALES_11)));
        }
        IntVector terms = sc.mul(IntVector.fromArray(I, bsums, at / 16));
        IntVector offsets = terms.add(terms.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE).lanewise(VectorOperators.LSHL, 5);
        acc.add(acc.rearrange(I_SWAP8)).sub(offsets).intoArray(lanes, lanesAt);
    }

    /**
     * {@link #superBlock} of the super-blocks at blkA and blkB of two rows, sharing the activation's loads, folded
     * at once: acc[k] += dA·laneA_k, acc[8 + k] += dB·laneB_k.
     */
    private static void superBlock2(MemorySegment w, long blkA, long blkB, short[] ys, int[] bsums, int at, float dA,
                                    float dB, float[] acc) {
        IntVector scA = (IntVector) ByteVector.fromMemorySegment(B16, w, blkA + 192, Simd.LE)
                .convertShape(VectorOperators.B2I, I, 0);
        IntVector scB = (IntVector) ByteVector.fromMemorySegment(B16, w, blkB + 192, Simd.LE)
                .convertShape(VectorOperators.B2I, I, 0);
        ShortVector qhA = ShortVector.fromMemorySegment(S, w, blkA + 128, Simd.LE);
        ShortVector qhB = ShortVector.fromMemorySegment(S, w, blkB + 128, Simd.LE);
        IntVector accA = IntVector.zero(I), accB = accA;
        for (int h = 0; h < 2; h++) {
            VectorShuffle<Short> half = h == 0 ? QH_HALF0 : QH_HALF1;
            ShortVector qlA = ShortVector.fromMemorySegment(S, w, blkA + 64L * h, Simd.LE);
            ShortVector qlB = ShortVector.fromMemorySegment(S, w, blkB + 64L * h, Simd.LE);
            ShortVector hbA = qhA.rearrange(half).lanewise(VectorOperators.LSHR, QH_ALIGN);
            ShortVector hbB = qhB.rearrange(half).lanewise(VectorOperators.LSHR, QH_ALIGN);
            int a = at + 128 * h;
            ShortVector y0 = ShortVector.fromArray(S, ys, a), y2 = ShortVector.fromArray(S, ys, a + 64);
            ShortVector evenA = qlA.and(NIBBLE).or(hbA.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS)).mul(y0)
                    .add(qlA.lanewise(VectorOperators.LSHR, 8).and(NIBBLE)
                            .or(hbA.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS)).mul(y2));
            ShortVector evenB = qlB.and(NIBBLE).or(hbB.lanewise(VectorOperators.LSHL, 4).and(HIGH_BITS)).mul(y0)
                    .add(qlB.lanewise(VectorOperators.LSHR, 8).and(NIBBLE)
                            .or(hbB.lanewise(VectorOperators.LSHR, 4).and(HIGH_BITS)).mul(y2));
            ShortVector y1 = ShortVector.fromArray(S, ys, a + 32), y3 = ShortVector.fromArray(S, ys, a + 96);
            ShortVector oddA = qlA.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hbA.and(HIGH_BITS)).mul(y1)
                    .add(qlA.lanewise(VectorOperators.LSHR, 12)
                            .or(hbA.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS)).mul(y3));
            ShortVector oddB = qlB.lanewise(VectorOperators.LSHR, 4).and(NIBBLE).or(hbB.and(HIGH_BITS)).mul(y1)
                    .add(qlB.lanewise(VectorOperators.LSHR, 12)
                            .or(hbB.lanewise(VectorOperators.LSHR, 8).and(HIGH_BITS)).mul(y3));
            VectorShuffle<Integer> evenScales = h == 0 ? SCALES_00 : SCALES_10, oddScales = h == 0 ? SCALES_01 : SCALES_11;
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
        // lanes 0-7: ggml's lanes of row A, 8-15 of row B, each less its offset term
        IntVector bs = IntVector.fromArray(I, bsums, at / 16);
        IntVector tA = scA.mul(bs), tB = scB.mul(bs);
        IntVector offsets = tA.add(tA.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE)
                .blend(tB.add(tB.rearrange(I_SWAP1)).rearrange(I_EVENS_TWICE), I_UPPER_HALF).lanewise(VectorOperators.LSHL, 5);
        IntVector z = accA.blend(accB, I_UPPER_HALF).add(accB.blend(accA, I_UPPER_HALF).rearrange(I_SWAP8)).sub(offsets);
        FloatVector d = FloatVector.broadcast(F, dA).blend(FloatVector.broadcast(F, dB), F_UPPER_HALF);
        d.fma((FloatVector) z.convert(VectorOperators.I2F, 0), FloatVector.fromArray(F, acc, 0)).intoArray(acc, 0);
    }
}
