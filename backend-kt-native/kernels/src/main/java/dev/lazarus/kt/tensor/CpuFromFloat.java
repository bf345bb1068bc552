package dev.lazarus.kt.tensor;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * ggml-cpu's {@code from_float} of a type: what its {@code set_rows} and {@code cpy} write when f32 values are stored
 * as that type (a KV cache of {@code -ctk}/{@code -ctv} type). Q8_0's is the x86 SIMD quantizer, which rounds
 * differently from ggml's reference one ({@link #q8_0}); Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL call their reference
 * quantizers ({@link GgmlCodec#encode}); F16 and BF16 round to nearest even.
 */
public final class CpuFromFloat {

    private CpuFromFloat() {
    }

    /** Writes {@code count} values from {@code src[srcOffset]} as {@code type} into {@code dst} at {@code dstOffset}. */
    public static void write(GgmlType type, float[] src, int srcOffset, int count, MemorySegment dst, long dstOffset) {
        if (type == GgmlType.Q8_0) {
            for (int b = 0; b < count / 32; b++) {
                q8_0(src, srcOffset + 32 * b, dst, dstOffset + 34L * b);
            }
        } else {
            GgmlCodec.encode(type, src, srcOffset, count, dst, dstOffset);
        }
    }

    /**
     * One block as ggml's x86 {@code quantize_row_q8_0} (AVX2/AVX-512 builds): d = amax / 127 stored as f16, the
     * values multiplied by 127 / amax (not by 1 / d) and rounded to nearest even (the reference rounds half away from
     * zero) — as {@link Activation}'s Q8_0 form.
     */
    static void q8_0(float[] x, int off, MemorySegment dst, long block) {
        float amax = 0;
        for (int i = 0; i < 32; i++) {
            amax = Math.max(amax, Math.abs(x[off + i]));
        }
        dst.set(Layouts.I16, block, Float.floatToFloat16(amax / 127f));
        float id = amax != 0 ? 127f / amax : 0;
        for (int i = 0; i < 32; i++) {
            dst.set(ValueLayout.JAVA_BYTE, block + 2 + i, (byte) Math.rint(x[off + i] * id));
        }
    }
}
