package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.lazarus.kt.gguf.GgmlCodec;
import dev.lazarus.kt.gguf.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * What a KV cache of each block type stores, block by hand: ggml-cpu's {@code from_float} (x86 Q8_0, the reference
 * quantizers otherwise), and the values it reads back ({@link GgmlCodec#decode}, ggml's {@code to_float}).
 */
class CpuFromFloatTest {

    @Test
    void q8_0RoundsTiesToEvenWithTheMultiplierOf127OverAmax() {
        float[] x = new float[32];
        x[0] = 127f;    // amax 127: d = 1, id = 127/127 = 1
        x[1] = 2.5f;    // a tie: 2 (the reference quantizer's roundf gives 3)
        x[2] = -2.5f;   // -2
        x[3] = 3.5f;    // 4
        x[4] = -0.4f;   // 0
        byte[] block = write(GgmlType.Q8_0, x);
        assertThat(f16(block, 0)).isEqualTo(1f);
        assertThat(new byte[] {block[2], block[3], block[4], block[5], block[6]}).containsExactly(127, 2, -2, 4, 0);
        float[] back = read(GgmlType.Q8_0, block);
        assertThat(back[1]).isEqualTo(2f);
        assertThat(back[3]).isEqualTo(4f);
    }

    @Test
    void q4_0AndQ5_0MapTheLargestMagnitudeToTheLowestLevel() {
        float[] x = new float[32];
        x[0] = -8f;     // max = -8: d = 1 for Q4_0 (max / -8)
        x[1] = 3f;
        x[2] = 7.4f;    // 7.4 + 8.5 = 15.9, truncated to 15: 7
        byte[] q4 = write(GgmlType.Q4_0, x);
        assertThat(f16(q4, 0)).isEqualTo(1f);
        assertThat(q4[2] & 0xF).isEqualTo(0);          // value 0: quant 0 -> -8
        assertThat(q4[3] & 0xF).isEqualTo(11);         // value 1: 3 + 8
        assertThat(q4[2] >> 4 & 0xF).isEqualTo(8);     // value 16: 0 + 8
        assertThat(read(GgmlType.Q4_0, q4)).startsWith(-8f, 3f, 7f, 0f);
        x[0] = -16f;    // Q5_0: d = -16 / -16 = 1, quants 0..31
        x[2] = 15.2f;
        assertThat(read(GgmlType.Q5_0, write(GgmlType.Q5_0, x))).startsWith(-16f, 3f, 15f, 0f);
    }

    @Test
    void q4_1StoresTheMinimumAndSteps() {
        float[] x = new float[32];
        for (int i = 0; i < 32; i++) {
            x[i] = i % 16; // min 0, max 15: d = 1, m = 0
        }
        byte[] block = write(GgmlType.Q4_1, x);
        assertThat(f16(block, 0)).isEqualTo(1f);
        assertThat(f16(block, 2)).isEqualTo(0f);
        assertThat(read(GgmlType.Q4_1, block)).containsExactly(x);
    }

    @Test
    void iq4NlTakesTheNearestTableValueAndTheLeastSquaresScale() {
        float[] x = new float[32];
        x[0] = -127f;   // the largest magnitude, negative: d = max / -127 = 1, so each value's table entry is its nearest
        byte[] block = write(GgmlType.IQ4_NL, x);
        // every other value is 0: nearest entry 1 (index 8); weights x² make the least-squares scale 127^4 / 127^4 = 1
        assertThat(f16(block, 0)).isEqualTo(1f);
        assertThat(block[2] & 0xFF).isEqualTo(0x80);   // value 0: index 0 (-127); value 16: index 8
        assertThat(block[3] & 0xFF).isEqualTo(0x88);
        float[] back = read(GgmlType.IQ4_NL, block);
        assertThat(back[0]).isEqualTo(-127f);
        assertThat(back[1]).isEqualTo(1f);

        x[1] = 13f;     // exactly entry 9
        x[2] = 60f;     // 53 (index 12) is nearer than 69 (index 13)
        block = write(GgmlType.IQ4_NL, x);
        assertThat(block[3] & 0xF).isEqualTo(9);
        assertThat(block[4] & 0xF).isEqualTo(12);
        // d = Σ x²·q·x / Σ x²·q² over the three non-zero values, rounded to f16
        double num = Math.pow(127, 4) + Math.pow(13, 4) + 3600.0 * 53 * 60;
        double den = Math.pow(127, 4) + Math.pow(13, 4) + 3600.0 * 53 * 53;
        assertThat(f16(block, 0)).isEqualTo(Float.float16ToFloat(Float.floatToFloat16((float) (num / den))));
    }

    private static byte[] write(GgmlType type, float[] x) {
        byte[] out = new byte[Math.toIntExact(type.bytesFor(x.length))];
        CpuFromFloat.write(type, x, 0, x.length, MemorySegment.ofArray(out), 0);
        return out;
    }

    private static float[] read(GgmlType type, byte[] block) {
        float[] out = new float[32];
        GgmlCodec.decode(type, MemorySegment.ofArray(block), 0, out, 0, 32);
        return out;
    }

    private static float f16(byte[] block, int at) {
        return Float.float16ToFloat(MemorySegment.ofArray(block).get(Layouts.I16, at));
    }
}
