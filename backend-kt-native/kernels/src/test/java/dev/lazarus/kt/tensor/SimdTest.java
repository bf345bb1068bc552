package dev.lazarus.kt.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class SimdTest {

    @Test
    void vectorF16WideningAgreesWithTheJdkForEveryBitPattern() {
        MemorySegment all = MemorySegment.ofArray(new short[65536]);
        for (int h = 0; h < 65536; h++) {
            all.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * h, (short) h);
        }
        float[] lanes = new float[Simd.L];
        for (int h = 0; h < 65536; h += Simd.L) {
            Simd.f16s(all, 2L * h).intoArray(lanes, 0);
            for (int i = 0; i < Simd.L; i++) {
                float expected = Float.float16ToFloat((short) (h + i));
                if (Float.isNaN(expected)) {
                    assertThat(lanes[i]).as("f16 0x%04x", h + i).isNaN();
                } else {
                    assertThat(Float.floatToRawIntBits(lanes[i])).as("f16 0x%04x", h + i).isEqualTo(Float.floatToRawIntBits(expected));
                }
            }
        }
    }

    @Test
    void vectorBf16WideningIsAShift() {
        MemorySegment s = MemorySegment.ofArray(new short[Simd.L]);
        for (int i = 0; i < Simd.L; i++) {
            s.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 2L * i, (short) (0xbf80 + i));
        }
        float[] lanes = new float[Simd.L];
        Simd.bf16s(s, 0).intoArray(lanes, 0);
        for (int i = 0; i < Simd.L; i++) {
            assertThat(Float.floatToRawIntBits(lanes[i])).isEqualTo((0xbf80 + i) << 16);
        }
    }
}
