package dev.lazarus.kt.tensor;

import static dev.lazarus.kt.tensor.Layouts.f16;
import static dev.lazarus.kt.tensor.Layouts.u8;

import java.lang.foreign.MemorySegment;

/**
 * Q4_K rows against a Q8_K activation in the rounding order of llama-server's CPU backend, which repacks
 * Q4_K matrices of a multiple of 8 rows at load (its CPU_REPACK buffer, {@code q4_K_8x8_q8_K}) and then
 * computes each row as one f32 lane: per 256-value super-block the exact integer sums
 * {@code Σ scale_j·(q·y)_j} and {@code Σ min_j·bsum_j}, each folded into its own accumulator by
 * {@code fma(sum, d_w·d_y, acc)} (resp. {@code dmin_w·d_y}), and the two accumulators subtracted at the
 * end. The in-place kernel rounds differently (block scale applied to f32 lanes, the min term multiplied
 * twice), which is enough to flip later Q8 roundings.
 */
final class GgmlKQuantKernels {

    private GgmlKQuantKernels() {
    }

    static float q4kRepacked(MemorySegment w, long o, Activation x, int n) {
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
            }
            float dy = x.scales[b];
            acc = Math.fma((float) isum, f16(w, blk) * dy, acc);
            accMin = Math.fma((float) minSum, f16(w, blk + 2) * dy, accMin);
        }
        return acc - accMin;
    }
}
