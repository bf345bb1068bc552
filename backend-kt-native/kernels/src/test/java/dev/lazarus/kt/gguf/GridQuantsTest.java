package dev.lazarus.kt.gguf;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The I-quant layouts read through the codebook resource, on hand-made blocks whose values follow from the format's
 * definition (ggml's {@code iq2xxs_grid[0]} is eight 8s, {@code iq2xxs_grid[1]} {@code 0x08080808_0808082b},
 * {@code ksigns_iq2xs[1]} flips values 0 and 7, {@code iq3s_grid[0]} four 1s, {@code iq1s_grid[0]} is eight -1s).
 * The kernels are held to these decoders by {@code LowBitKernelsTest} and to llama-server by the parity suites.
 */
class GridQuantsTest {

    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @Test
    void iq2xxsValuesAreGridTimesSignTimesScale() {
        MemorySegment blk = MemorySegment.ofArray(new byte[GgmlType.IQ2_XXS.typeSize()]);
        blk.set(I16, 0, Float.floatToFloat16(2f));
        blk.set(ValueLayout.JAVA_BYTE, 2 + 1, (byte) 1); // group 1 of sub-block 0: grid entry 1
        blk.set(I32, 2 + 4, 1 | 3 << 28);                 // group 0 signs: pattern 1; ls = 3
        float[] v = new float[256];
        GgmlCodec.decode(GgmlType.IQ2_XXS, blk, 0, v, 0, 256);
        float db = 2f * 3.5f * 0.25f;
        assertThat(v[0]).isEqualTo(-8 * db);
        assertThat(v[1]).isEqualTo(8 * db);
        assertThat(v[7]).isEqualTo(-8 * db);
        assertThat(v[8]).isEqualTo(0x2b * db);
        assertThat(v[9]).isEqualTo(8 * db);
        assertThat(v[32]).isEqualTo(8 * 2f * 0.5f * 0.25f); // sub-block 1: ls = 0
    }

    @Test
    void iq3sAndIq1sUseTheirGrids() {
        MemorySegment iq3 = MemorySegment.ofArray(new byte[GgmlType.IQ3_S.typeSize()]);
        iq3.set(I16, 0, Float.floatToFloat16(1f));
        iq3.set(ValueLayout.JAVA_BYTE, 106, (byte) 0x21); // scales of sub-blocks 0 and 1: ls 1 and 2
        float[] v = new float[256];
        GgmlCodec.decode(GgmlType.IQ3_S, iq3, 0, v, 0, 256);
        assertThat(v[0]).isEqualTo(3f);
        assertThat(v[32]).isEqualTo(5f);

        MemorySegment iq1 = MemorySegment.ofArray(new byte[GgmlType.IQ1_S.typeSize()]);
        iq1.set(I16, 0, Float.floatToFloat16(1f));
        iq1.set(I16, 34, (short) (0x8000 | 2 << 12)); // sub-block 0: negative shift, ls 2
        GgmlCodec.decode(GgmlType.IQ1_S, iq1, 0, v, 0, 256);
        assertThat(v[0]).isEqualTo(5f * (-1f - 0.125f));
        assertThat(v[32]).isEqualTo(-1f + 0.125f);
    }

    @Test
    void iq1mAssemblesItsScaleFromTheScaleWordsTopNibbles() {
        MemorySegment blk = MemorySegment.ofArray(new byte[GgmlType.IQ1_M.typeSize()]);
        short d = Float.floatToFloat16(0.5f);
        for (int i = 0; i < 4; i++) {
            blk.set(I16, 48 + 2L * i, (short) (((d >> (4 * i)) & 0xF) << 12));
        }
        assertThat(GridQuants.d(GgmlType.IQ1_M, blk, 0)).isEqualTo(0.5f);
        int[] sc = new int[16];
        GridQuants.scales(GgmlType.IQ1_M, blk, 0, sc);
        assertThat(sc).containsOnly(1);
    }
}
