package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Layouts.f16;
import static dev.lazarus.kt.tensor.Layouts.u8;

import java.lang.foreign.MemorySegment;

/**
 * K-quant rows against a Q8_K activation in the rounding orders of llama-server's CPU backend.
 *
 * <p>Q4_K: llama-server repacks
 * Q4_K matrices of a multiple of 8 rows at load (its CPU_REPACK buffer, {@code q4_K_8x8_q8_K}) and then
 * computes each row as one f32 lane: per 256-value super-block the exact integer sums
 * {@code Σ scale_j·(q·y)_j} and {@code Σ min_j·bsum_j}, each folded into its own accumulator by
 * {@code fma(sum, d_w·d_y, acc)} (resp. {@code dmin_w·d_y}), and the two accumulators subtracted at the
 * end (the GEMV; batches of four or more rows take {@link #q4kRepackedGemm}). The in-place kernel rounds differently (block scale applied to f32 lanes, the min term multiplied
 * twice), which is enough to flip later Q8 roundings.
 *
 * <p>Q6_K (never repacked on x86): {@code ggml_vec_dot_q6_K_q8_K}'s AVX2 form in Debian's build, eight f32
 * lanes, lane k holding per super-block the exact integer sum over its eight 32-value groups of
 * {@code scale · Σ q·y} over values 4k..4k+3 of each group (q the unsigned 6-bit code; the value's 16-value
 * half decides the scale), less {@code 32·(scale_2k·bsum_2k + scale_2k+1·bsum_2k+1)}: the -32 offset comes
 * off through the activation's 16-value sums, which puts a different integer in each lane than subtracting it
 * per value would (same total, different f32 roundings). Folded in by {@code fma(d_y·d_w, lane, acc)} and
 * summed by {@link GgmlSums#hsum8}.
 *
 * <p>These are the orders stated one value at a time. The matrices run {@code Q4KRepackedKernel},
 * {@code Q6KKernel} (bench sources) and {@code Q4KQ5KKernel} instead, vector forms held bit-identical to {@link #q4kRepacked},
 * {@link #q4kRepackedGemm}, {@link #q6k}, {@link #q4kInPlace} and {@link #q5kInPlace} by their tests.
 * A batch of 8 or more vectors on a matrix that is not repacked takes {@code Q4KQ5KKernel.Order#TILED} instead.
 */
public final class GgmlKQuantKernels {

    private GgmlKQuantKernels() {
    }

    public static float q4kRepacked(MemorySegment w, long o, Activation x, int n) {
        return q4kRepacked(w, o, x, n, 8);
    }

    /**
     * The repacked GEMM ({@code ggml_gemm_q4_K_8x8_q8_K}), which llama-server runs on the activation rows of a
     * batch in groups of four: the same integer sums, but folded into the accumulators once per pair of
     * 32-value sub-blocks instead of once per super-block.
     */
    public static float q4kRepackedGemm(MemorySegment w, long o, Activation x, int n) {
        return q4kRepacked(w, o, x, n, 2);
    }

    /** {@code subBlocksPerFold} sub-blocks' integer sums are added before each fma into the accumulators. */
    private static float q4kRepacked(MemorySegment w, long o, Activation x, int n, int subBlocksPerFold) {
        float acc = 0, accMin = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 144L * b;
            long scales = blk + 4, qs = blk + 16;
            int isum = 0, minSum = 0;
            for (int j = 0; j < 8; j++) {
                int dot = 0;
                for (int l = 0; l < 32; l++) {
                    int byteVal = u8(w, qs + 32L * (j / 2) + l);
                    int q = (j & 1) == 0 ? byteVal & 0xF : byteVal >> 4;
                    dot += q * (int) x.values[256 * b + 32 * j + l];
                }
                isum += Layouts.kScale(w, scales, j) * dot;
                minSum += Layouts.kMin(w, scales, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
                if ((j + 1) % subBlocksPerFold == 0) {
                    float dy = x.scales[b];
                    acc = Math.fma((float) isum, f16(w, blk) * dy, acc);
                    accMin = Math.fma((float) minSum, f16(w, blk + 2) * dy, accMin);
                    isum = 0;
                    minSum = 0;
                }
            }
        }
        return acc - accMin;
    }

    public static float q6k(MemorySegment w, long o, Activation x, int n) {
        float[] acc = new float[8];
        int[] lanes = new int[8];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            java.util.Arrays.fill(lanes, 0);
            for (int h = 0; h < 2; h++) {
                for (int g = 0; g < 4; g++) {
                    for (int e = 0; e < 32; e++) {
                        int low = u8(w, blk + 64L * h + 32L * (g & 1) + e);
                        int q = (g < 2 ? low & 0xF : low >> 4) | ((u8(w, blk + 128 + 32L * h + e) >> (2 * g)) & 3) << 4;
                        int scale = Layouts.i8(w, blk + 192 + 8L * h + 2L * g + (e >> 4));
                        lanes[e >> 2] += scale * q * (int) x.values[256 * b + 128 * h + 32 * g + e];
                    }
                }
            }
            // the -32 offset comes off per lane as 32·(scale·bsum) of sub-blocks 2k and 2k+1, not per value
            for (int k = 0; k < 8; k++) {
                lanes[k] -= 32 * (Layouts.i8(w, blk + 192 + 2L * k) * x.bsums[16 * b + 2 * k]
                        + Layouts.i8(w, blk + 193 + 2L * k) * x.bsums[16 * b + 2 * k + 1]);
            }
            float d = x.scales[b] * f16(w, blk + 208);
            for (int k = 0; k < 8; k++) {
                acc[k] = Math.fma(d, (float) lanes[k], acc[k]);
            }
        }
        return GgmlSums.hsum8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]);
    }

    /**
     * Q4_K in place ({@code ggml_vec_dot_q4_K_q8_K}, AVX2 form), for the matrices llama-server does not
     * repack (a 3-D weight multiplied per slice, e.g. deepseek2's per-head {@code attn_v_b}): eight f32
     * lanes, lane k holding per super-block the exact integer {@code Σ scale_j · (q·y)} over values
     * 4k..4k+3 of every 32-value group j, folded in by {@code fma(d_y·d_w, lane, acc)}; the mins in four lanes
     * (lane i: groups 2i and 2i+1) by {@code fma(-d_y·dmin_w, Σ min·bsum, accMin)}; the result
     * {@code hsum_float_8(acc) + ((m0 + m2) + (m1 + m3))}.
     */
    public static float q4kInPlace(MemorySegment w, long o, Activation x, int n) {
        float[] acc = new float[8];
        float[] accMin = new float[4];
        int[] lanes = new int[8];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 144L * b;
            long scales = blk + 4, qs = blk + 16;
            java.util.Arrays.fill(lanes, 0);
            for (int j = 0; j < 8; j++) {
                int scale = Layouts.kScale(w, scales, j);
                for (int l = 0; l < 32; l++) {
                    int byteVal = u8(w, qs + 32L * (j / 2) + l);
                    int q = (j & 1) == 0 ? byteVal & 0xF : byteVal >> 4;
                    lanes[l >> 2] += scale * q * (int) x.values[256 * b + 32 * j + l];
                }
            }
            float d = x.scales[b] * f16(w, blk);
            float dmin = -x.scales[b] * f16(w, blk + 2);
            for (int k = 0; k < 8; k++) {
                acc[k] = Math.fma(d, (float) lanes[k], acc[k]);
            }
            for (int i = 0; i < 4; i++) {
                int g0 = x.bsums[16 * b + 4 * i] + x.bsums[16 * b + 4 * i + 1];
                int g1 = x.bsums[16 * b + 4 * i + 2] + x.bsums[16 * b + 4 * i + 3];
                int prod = Layouts.kMin(w, scales, 2 * i) * g0 + Layouts.kMin(w, scales, 2 * i + 1) * g1;
                accMin[i] = Math.fma(dmin, (float) prod, accMin[i]);
            }
        }
        float mins = (accMin[0] + accMin[2]) + (accMin[1] + accMin[3]);
        return GgmlSums.hsum8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]) + mins;
    }

    /**
     * Q5_K ({@code ggml_vec_dot_q5_K_q8_K}, AVX2 form; x86 never repacks it): the integer lanes as
     * {@link #q4kInPlace} with the fifth bit, the mins summed to one integer per super-block and folded into
     * a scalar by {@code fma(-d_y·dmin_w, Σ, summs)}; the result {@code hsum_float_8(acc) + summs}.
     */
    public static float q5kInPlace(MemorySegment w, long o, Activation x, int n) {
        float[] acc = new float[8];
        float summs = 0;
        int[] lanes = new int[8];
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 176L * b;
            long scales = blk + 4, qh = blk + 16, qs = blk + 48;
            java.util.Arrays.fill(lanes, 0);
            int mins = 0;
            for (int j = 0; j < 8; j++) {
                int scale = Layouts.kScale(w, scales, j);
                for (int l = 0; l < 32; l++) {
                    int byteVal = u8(w, qs + 32L * (j / 2) + l);
                    int q = ((j & 1) == 0 ? byteVal & 0xF : byteVal >> 4) | ((u8(w, qh + l) >> j) & 1) << 4;
                    lanes[l >> 2] += scale * q * (int) x.values[256 * b + 32 * j + l];
                }
                mins += Layouts.kMin(w, scales, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
            }
            float d = x.scales[b] * f16(w, blk);
            float dmin = -x.scales[b] * f16(w, blk + 2);
            for (int k = 0; k < 8; k++) {
                acc[k] = Math.fma(d, (float) lanes[k], acc[k]);
            }
            summs = Math.fma(dmin, (float) mins, summs);
        }
        return GgmlSums.hsum8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]) + summs;
    }
}
