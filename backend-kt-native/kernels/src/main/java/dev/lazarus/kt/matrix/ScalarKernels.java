package dev.lazarus.kt.matrix;

import static dev.lazarus.kt.tensor.Layouts.f16;
import static dev.lazarus.kt.tensor.Layouts.i8;
import static dev.lazarus.kt.tensor.Layouts.u8;

import dev.lazarus.kt.gguf.GgmlType;
import dev.lazarus.kt.quant.legacy.LegacyQuantKernels;
import dev.lazarus.kt.tensor.Activation;
import dev.lazarus.kt.tensor.Layouts;
import dev.lazarus.kt.tensor.RowKernel;
import java.lang.foreign.MemorySegment;

/**
 * Plain scalar dot products, one per weight type, written after ggml's generic vec_dot_*
 * references: integer sums inside a block, one float multiply per block (or per value for the float
 * types). The tests hold the vector kernels against these.
 */
final class ScalarKernels {

    private ScalarKernels() {
    }

    static RowKernel of(GgmlType type) {
        return switch (type) {
            case F32 -> ScalarKernels::f32;
            case F16 -> ScalarKernels::f16Row;
            case BF16 -> ScalarKernels::bf16;
            case Q8_0 -> ScalarKernels::q8_0;
            case Q4_K -> (w, o, x, n) -> q45k(w, o, x, n, false);
            case Q5_K -> (w, o, x, n) -> q45k(w, o, x, n, true);
            case Q6_K -> ScalarKernels::q6k;
            case Q4_0, Q4_1, Q5_0, Q5_1 -> LegacyQuantKernels.reference(type);
            default -> throw new IllegalArgumentException("no kernel for " + type);
        };
    }

    private static float f32(MemorySegment w, long o, Activation x, int n) {
        float sum = 0;
        for (int i = 0; i < n; i++) {
            sum += w.get(Layouts.F32, o + 4L * i) * x.values[i];
        }
        return sum;
    }

    private static float f16Row(MemorySegment w, long o, Activation x, int n) {
        float sum = 0;
        for (int i = 0; i < n; i++) {
            sum += f16(w, o + 2L * i) * x.values[i];
        }
        return sum;
    }

    private static float bf16(MemorySegment w, long o, Activation x, int n) {
        float sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Float.intBitsToFloat((w.get(Layouts.I16, o + 2L * i) & 0xffff) << 16) * x.values[i];
        }
        return sum;
    }

    private static float q8_0(MemorySegment w, long o, Activation x, int n) {
        float sum = 0;
        for (int b = 0; b < n / 32; b++) {
            long blk = o + 34L * b;
            int isum = 0;
            for (int i = 0; i < 32; i++) {
                isum += i8(w, blk + 2 + i) * (int) x.values[32 * b + i];
            }
            sum += isum * (f16(w, blk) * x.scales[b]);
        }
        return sum;
    }

    private static float q45k(MemorySegment w, long o, Activation x, int n, boolean five) {
        float sum = 0;
        int typeSize = five ? 176 : 144;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + (long) typeSize * b;
            long scales = blk + 4, qh = blk + 16, qs = five ? blk + 48 : blk + 16;
            int isum = 0, minSum = 0;
            for (int j = 0; j < 8; j++) {
                int groupSum = 0;
                for (int l = 0; l < 32; l++) {
                    int e = 32 * j + l;
                    int byteVal = u8(w, qs + 32L * (j / 2) + l);
                    int q = (j % 2 == 0) ? byteVal & 0xF : byteVal >> 4;
                    if (five) {
                        q |= ((u8(w, qh + l) >> j) & 1) << 4;
                    }
                    groupSum += q * (int) x.values[256 * b + e];
                }
                isum += Layouts.kScale(w, scales, j) * groupSum;
                minSum += Layouts.kMin(w, scales, j) * (x.bsums[16 * b + 2 * j] + x.bsums[16 * b + 2 * j + 1]);
            }
            float d = x.scales[b];
            sum += f16(w, blk) * d * isum - f16(w, blk + 2) * d * minSum;
        }
        return sum;
    }

    private static float q6k(MemorySegment w, long o, Activation x, int n) {
        float sum = 0;
        for (int b = 0; b < n / 256; b++) {
            long blk = o + 210L * b;
            int isum = 0;
            for (int g = 0; g < 16; g++) {
                int groupSum = 0;
                for (int i = 0; i < 16; i++) {
                    int e = 16 * g + i;
                    int half = e / 128, k = (e % 128) / 32, l = e % 32;
                    int lo = u8(w, blk + 64L * half + 32L * (k & 1) + l);
                    int hi = u8(w, blk + 128 + 32L * half + l);
                    int q = ((k < 2 ? lo & 0xF : lo >> 4) | (((hi >> (2 * k)) & 3) << 4)) - 32;
                    groupSum += q * (int) x.values[256 * b + e];
                }
                isum += i8(w, blk + 192 + g) * groupSum;
            }
            sum += f16(w, blk + 208) * x.scales[b] * isum;
        }
        return sum;
    }
}
