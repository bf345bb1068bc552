package dev.lazarus.kt.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Decoding of blocks built by hand from ggml's struct definitions (ggml-common.h, dequantize_row_*). */
class GgmlCodecLayoutTest {

    @Test
    void q8_0IsAnF16ScaleAnd32SignedBytes() {
        byte[] b = new byte[34];
        b[1] = 0x40; // f16 2.0
        for (int i = 0; i < 32; i++) {
            b[2 + i] = (byte) (i - 16);
        }
        float[] out = decode(GgmlType.Q8_0, b, 32);
        for (int i = 0; i < 32; i++) {
            assertThat(out[i]).isEqualTo(2f * (i - 16));
        }
    }

    @Test
    void q4_kPacksSixBitScalesAndMinsAndNibbles() {
        int[] sc = {1, 2, 3, 4, 40, 41, 42, 43};
        int[] m = {5, 6, 7, 8, 50, 51, 52, 53};
        byte[] b = new byte[144];
        b[1] = 0x3c; // d = 1.0
        b[3] = 0x38; // dmin = 0.5
        // get_scale_min_k4: groups 4-7 keep their low nibbles in bytes 8-11 and their top 2 bits in bytes 0-7
        int[] scales = {0x81, 0x82, 0x83, 0x84, 0xC5, 0xC6, 0xC7, 0xC8, 0x28, 0x39, 0x4A, 0x5B};
        for (int i = 0; i < 12; i++) {
            b[4 + i] = (byte) scales[i];
        }
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                b[16 + 32 * c + l] = (byte) ((l % 16) | ((15 - l % 16) << 4));
            }
        }
        float[] out = decode(GgmlType.Q4_K, b, 256);
        for (int e = 0; e < 256; e++) {
            int j = e / 32, l = e % 32;
            int q = j % 2 == 0 ? l % 16 : 15 - l % 16;
            assertThat(out[e]).as("value %d", e).isEqualTo(1f * sc[j] * q - 0.5f * m[j]);
        }
    }

    @Test
    void q5_kAddsTheFifthBitFromQh() {
        byte[] b = new byte[176];
        b[1] = 0x34; // d = 0.25
        b[3] = 0x3c; // dmin = 1
        for (int i = 0; i < 4; i++) {
            b[4 + i] = 1; // scales 0-3 = 1, mins 0-3 = 0
        }
        b[12] = 0x11;
        b[13] = 0x11;
        b[14] = 0x11;
        b[15] = 0x11; // groups 4-7: scale 1, min 1
        for (int l = 0; l < 32; l++) {
            int bits = 0;
            for (int g = 0; g < 8; g++) {
                bits |= ((32 * g + l) % 32 >> 4) << g; // value e has q = e % 32
            }
            b[16 + l] = (byte) bits;
        }
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                b[48 + 32 * c + l] = (byte) ((l & 0xF) | ((l & 0xF) << 4));
            }
        }
        float[] out = decode(GgmlType.Q5_K, b, 256);
        for (int e = 0; e < 256; e++) {
            float min = e / 32 >= 4 ? 1 : 0;
            assertThat(out[e]).as("value %d", e).isEqualTo(0.25f * (e % 32) - min);
        }
    }

    @Test
    void q6_kSplitsSixBitsIntoQlAndQhWithSignedScalesPer16() {
        byte[] b = new byte[210];
        for (int h = 0; h < 2; h++) {
            for (int l = 0; l < 32; l++) {
                int q1 = (128 * h + l) % 64, q2 = (128 * h + 32 + l) % 64, q3 = (128 * h + 64 + l) % 64, q4 = (128 * h + 96 + l) % 64;
                b[64 * h + l] = (byte) ((q1 & 0xF) | ((q3 & 0xF) << 4));
                b[64 * h + 32 + l] = (byte) ((q2 & 0xF) | ((q4 & 0xF) << 4));
                b[128 + 32 * h + l] = (byte) ((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
            }
        }
        for (int g = 0; g < 16; g++) {
            b[192 + g] = (byte) (g - 8);
        }
        b[209] = 0x38; // d = 0.5
        float[] out = decode(GgmlType.Q6_K, b, 256);
        for (int e = 0; e < 256; e++) {
            assertThat(out[e]).as("value %d", e).isEqualTo(0.5f * (e / 16 - 8) * (e % 64 - 32));
        }
    }

    @Test
    void floatTypesAreLittleEndianBitPatterns() {
        assertThat(decode(GgmlType.F16, new byte[] {0x00, 0x3c, 0x00, (byte) 0xc0, 0x01, 0x00}, 3))
                .containsExactly(1f, -2f, 0x1p-24f);
        assertThat(decode(GgmlType.BF16, new byte[] {(byte) 0x80, 0x3f, 0x40, (byte) 0xc0}, 2)).containsExactly(1f, -3f);
        assertThat(decode(GgmlType.F32, new byte[] {0, 0, (byte) 0x80, 0x3f}, 1)).containsExactly(1f);
    }

    @Test
    void bf16RoundsToNearestEven() {
        assertThat(GgmlCodec.f32ToBf16(Float.intBitsToFloat(0x3f808000))).isEqualTo((short) 0x3f80); // tie, even stays
        assertThat(GgmlCodec.f32ToBf16(Float.intBitsToFloat(0x3f818000))).isEqualTo((short) 0x3f82); // tie, odd rounds up
        assertThat(GgmlCodec.f32ToBf16(Float.intBitsToFloat(0x3f808001))).isEqualTo((short) 0x3f81);
        assertThat(Float.isNaN(GgmlCodec.bf16ToF32(GgmlCodec.f32ToBf16(Float.NaN)))).isTrue();
    }

    @Test
    void q8_0EncoderRoundsHalfAwayFromZeroLikeGgmlsReference() {
        float[] x = new float[32];
        x[0] = 127;   // d = 1
        x[1] = 2.5f;
        x[2] = -2.5f;
        x[3] = 0.49f;
        byte[] b = GgmlCodec.encode(GgmlType.Q8_0, x);
        assertThat(new byte[] {b[2], b[3], b[4], b[5]}).containsExactly(127, 3, -3, 0);
    }

    private static float[] decode(GgmlType type, byte[] bytes, int n) {
        float[] out = new float[n];
        GgmlCodec.decode(type, MemorySegment.ofArray(bytes), 0, out, 0, n);
        return out;
    }
}
