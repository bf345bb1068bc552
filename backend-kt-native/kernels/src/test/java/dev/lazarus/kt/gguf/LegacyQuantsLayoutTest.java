package dev.lazarus.kt.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The block layouts of Q4_0, Q4_1, Q5_0 and Q5_1 as ggml defines them, decoded from hand-built bytes. */
class LegacyQuantsLayoutTest {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void q5_0KeepsValueJInTheLowNibbleOfByteJAndValueJPlus16InTheHighNibbleWithFifthBitsInQh() {
        MemorySegment block = MemorySegment.ofArray(new byte[22]);
        block.set(I16, 0, Float.floatToFloat16(0.5f));
        block.set(I32, 2, 1 << 1 | 1 << 17); // fifth bits of values 1 and 17
        block.set(ValueLayout.JAVA_BYTE, 6, (byte) 0x3A); // value 0 = 0xA, value 16 = 0x3
        block.set(ValueLayout.JAVA_BYTE, 7, (byte) 0xF2); // value 1 = 0x12, value 17 = 0x1F
        float[] out = new float[32];
        GgmlCodec.decode(GgmlType.Q5_0, block, 0, out, 0, 32);
        assertThat(out[0]).isEqualTo((10 - 16) * 0.5f);
        assertThat(out[16]).isEqualTo((3 - 16) * 0.5f);
        assertThat(out[1]).isEqualTo((0x12 - 16) * 0.5f);
        assertThat(out[17]).isEqualTo((0x1F - 16) * 0.5f);
        assertThat(out[2]).isEqualTo(-16 * 0.5f);
    }

    @Test
    void q4_1AddsTheF16OffsetAfterTheScale() {
        MemorySegment block = MemorySegment.ofArray(new byte[20]);
        block.set(I16, 0, Float.floatToFloat16(0.25f));
        block.set(I16, 2, Float.floatToFloat16(-1f));
        block.set(ValueLayout.JAVA_BYTE, 4, (byte) 0x5C);
        float[] out = new float[32];
        GgmlCodec.decode(GgmlType.Q4_1, block, 0, out, 0, 32);
        assertThat(out[0]).isEqualTo(12 * 0.25f - 1);
        assertThat(out[16]).isEqualTo(5 * 0.25f - 1);
        assertThat(out[1]).isEqualTo(-1f);
    }

    @Test
    void q4_0And5_1FollowTheSamePacking() {
        MemorySegment q40 = MemorySegment.ofArray(new byte[18]);
        q40.set(I16, 0, Float.floatToFloat16(2f));
        q40.set(ValueLayout.JAVA_BYTE, 2 + 15, (byte) 0x0F);
        float[] out = new float[32];
        GgmlCodec.decode(GgmlType.Q4_0, q40, 0, out, 0, 32);
        assertThat(out[15]).isEqualTo(7 * 2f);
        assertThat(out[31]).isEqualTo(-8 * 2f);

        MemorySegment q51 = MemorySegment.ofArray(new byte[24]);
        q51.set(I16, 0, Float.floatToFloat16(1f));
        q51.set(I16, 2, Float.floatToFloat16(3f));
        q51.set(I32, 4, 1 << 31);
        GgmlCodec.decode(GgmlType.Q5_1, q51, 0, out, 0, 32);
        assertThat(out[31]).isEqualTo(16 + 3f);
        assertThat(out[15]).isEqualTo(3f);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_0", "Q4_1", "Q5_0", "Q5_1"})
    void encodingRoundTripsWithinTheFormatsStep(GgmlType type) {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        float[] x = new float[64];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        float[] back = new float[x.length];
        GgmlCodec.decode(type, MemorySegment.ofArray(GgmlCodec.encode(type, x)), 0, back, 0, x.length);
        int levels = type == GgmlType.Q4_0 || type == GgmlType.Q4_1 ? 16 : 32;
        for (int b = 0; b < 2; b++) {
            float min = Float.MAX_VALUE, max = -Float.MAX_VALUE;
            for (int i = 32 * b; i < 32 * b + 32; i++) {
                min = Math.min(min, x[i]);
                max = Math.max(max, x[i]);
            }
            // Affine types spread max - min over the levels: half a step at most. Symmetric ones (ggml's
            // d = amax / -(levels/2)) put the signed extreme on the lowest level, so a value of the other sign
            // near amax clamps to the top level: up to one whole step there, as in ggml. f16 scales add a little.
            boolean symmetric = type == GgmlType.Q4_0 || type == GgmlType.Q5_0;
            float tolerance = symmetric ? 1.01f * Math.max(-min, max) / (levels / 2f)
                    : 0.51f * (max - min) / (levels - 1);
            for (int i = 32 * b; i < 32 * b + 32; i++) {
                assertThat(back[i]).as("%s seed=%dL value %d", type, seed, i).isCloseTo(x[i], within(tolerance + 2e-3f));
            }
        }
    }
}
